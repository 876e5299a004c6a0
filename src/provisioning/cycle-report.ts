import type { ClusterSnapshot } from '../cluster/snapshot.js';
import type { Plan } from '../packing/plan.js';
import type { TrimmedScaleUp } from './limits.js';

/** What one provisioning cycle saw and did (metrics, status writers, tests). */
export interface CycleReport {
  startedAt: number;
  /** Why nothing was done, if so. */
  skipped?: 'not-synced' | 'no-pending-pods';
  pendingPods: number;
  solveMs: number;
  scaleUps: Array<TrimmedScaleUp & {
    result?: { replicas: number; written: boolean };
    error?: string;
    /** The group's NodePool, if any. */
    nodePool?: string;
    /** Nodes this write added (replicas or standalone Machines). */
    added?: number;
    /** `provisioned` when pending pods asked for it, `predicted` when only predicted demand (buffers, bookings, forecasts) did. */
    cause?: 'provisioned' | 'predicted';
  }>;
  /** The solve outlived its deadline; the plan (if any) came from the fallback solve. */
  solveTimedOut?: boolean;
  /** The leadership term ended during the cycle: the rest of it was not acted on. */
  termEnded?: boolean;
  /** Machines given up on this cycle (failed, or not Ready within the max provision time). */
  provisionFailures?: Array<{ machine: string; group: string; nodePool?: string; kind: 'failed' | 'timeout'; error?: string }>;
  /**
   * Scale-ups whose new nodes came up Ready but cannot take the pods that triggered
   * them (a taint they do not tolerate, say): each group backs off until `until`.
   */
  ineffectiveScaleUps?: Array<{ group: string; nodePool?: string; nodes: string[]; pending: number; reason: string; until: number }>;
  /** Groups whose back-off ended because a new node of theirs took a pod. */
  recoveredGroups?: string[];
  /** Groups not scaled up this cycle, with why (paused, backing off). */
  held?: Record<string, string>;
  unschedulable: number;
  /**
   * Predicted pods the solve found no room for, by owner (`CapacityBuffer/ns/name`,
   * `ProvisioningRequest/ns/name`): how many and the solver's first reason.
   */
  predictedUnplaced?: Record<string, { count: number; reason: string }>;
  /** Owners of the predicted pods this cycle planned for. */
  predictedOwners?: string[];
  /** Time from cycle start to the state source showing every write. */
  observedMs?: number;
  durationMs: number;
}

/** Fills report.predictedOwners / predictedUnplaced from the plan (status writers read them). */
export function predictedOutcome(report: CycleReport, snapshot: ClusterSnapshot, plan: Plan): void {
  const owners = new Set<string>();
  const byKey = new Map<string, string>();
  for (const p of snapshot.pendingPods) {
    if (!p.predicted || !p.owner) continue;
    owners.add(p.owner);
    byKey.set(p.key, p.owner);
  }
  const unplaced: NonNullable<CycleReport['predictedUnplaced']> = {};
  for (const u of plan.unschedulable) {
    const owner = byKey.get(u.pod);
    if (!owner) continue;
    const e = (unplaced[owner] ??= { count: 0, reason: u.reason });
    e.count++;
  }
  report.predictedOwners = [...owners].sort();
  report.predictedUnplaced = unplaced;
}
