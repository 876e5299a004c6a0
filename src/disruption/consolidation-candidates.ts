import type { ClusterSnapshot, NodeGroup, SnapshotNode } from '../cluster/snapshot.js';
import { budgetScope, type SettingsOf } from './allowance.js';
import { disruptableNodes } from './candidates.js';
import { isEmptyNode } from './pods.js';
import { CPU, MEMORY } from '../scheduling/resources.js';
import type { Skip } from './removal.js';
import { nodeDisruption, type ScoreTotals } from './score.js';

/**
 * The nodes underutilisation consolidation may consider, and what scores them. A
 * node qualifies when its group's policy is WhenEmptyOrUnderutilized, its pods have
 * not changed for consolidateAfter, it is not empty (emptiness removes those), every
 * pod it would move has a controller to recreate it, and it goes through its own
 * Machine. Pure.
 */

export interface ConsolidationCandidate {
  node: SnapshotNode;
  group: NodeGroup;
  /** Price per hour saved by removing it. */
  price: number;
  /** Disruption of moving its pods (score.ts). */
  disruption: number;
}

/**
 * The seam for safety checks over a whole set (PodDisruptionBudgets): why the set
 * may not be disrupted together, or undefined when it may. Decisions only take sets
 * it admits.
 */
export type CandidateSetFilter = (set: readonly ConsolidationCandidate[]) => string | undefined;

/** Most price saved per disruption first, or (Karpenter's) least disruption first. */
export type CandidateOrder = 'savings-per-disruption' | 'disruption';

export interface CandidateInput {
  snapshot: ClusterSnapshot;
  settingsOf: SettingsOf;
  /** Node -> since when the pods bound to it have not changed (ms). */
  settledSince: ReadonlyMap<string, number>;
  now: number;
  keep?: ReadonlySet<string>;
  order?: CandidateOrder;
  /** Leave nodes running a Job's pod to finish (default true): an evicted Job pod restarts from scratch. */
  keepRunToCompletion?: boolean;
}

/** Candidates, best deal first (by `order`, then by name). */
export function underutilizedCandidates(input: CandidateInput): { candidates: ConsolidationCandidate[]; skipped: Skip[] } {
  const { snapshot, settingsOf, settledSince, now } = input;
  const candidates: ConsolidationCandidate[] = [];
  const skipped: Skip[] = [];
  for (const { node, group, byReplicas } of disruptableNodes(snapshot, input.keep)) {
    if (byReplicas || isEmptyNode(node)) continue;
    const s = settingsOf(group);
    if (s.consolidationPolicy !== 'WhenEmptyOrUnderutilized' || s.consolidateAfterMs === null) continue;
    const since = settledSince.get(node.name);
    if (since === undefined || now - since < s.consolidateAfterMs) continue;
    // Cluster Autoscaler's per-group scaledownutilizationthreshold: at or above it a node is not underutilised.
    if (s.utilizationThreshold !== undefined) {
      const used = nodeUtilization(node);
      if (used >= s.utilizationThreshold) {
        skipped.push({ node: node.name, why: `uses ${Math.round(used * 100)}% of its allocatable, not below its group's scale-down utilization threshold (${Math.round(s.utilizationThreshold * 100)}%)`, reason: 'Underutilized' });
        continue;
      }
    }
    if (node.pods.some((p) => p.owner === undefined)) {
      skipped.push({ node: node.name, why: 'has a pod without a controller', reason: 'Underutilized', blockedBy: 'pod-without-controller' });
      continue;
    }
    // The work of a run-to-completion pod is lost when it is evicted; its node empties by itself.
    if (input.keepRunToCompletion !== false && node.pods.some((p) => p.owner?.startsWith('Job/'))) {
      skipped.push({ node: node.name, why: 'runs a Job pod, which would restart from scratch', reason: 'Underutilized' });
      continue;
    }
    candidates.push({ node, group, price: group.pricePerHour, disruption: nodeDisruption(node) });
  }
  const byDeal = input.order === 'disruption'
    ? (a: ConsolidationCandidate, b: ConsolidationCandidate) => a.disruption - b.disruption
    : (a: ConsolidationCandidate, b: ConsolidationCandidate) => b.price * a.disruption - a.price * b.disruption;
  candidates.sort((a, b) => byDeal(a, b) || (a.node.name < b.node.name ? -1 : a.node.name > b.node.name ? 1 : 0));
  return { candidates, skipped };
}

/**
 * Cluster Autoscaler's utilisation of a node: the larger of its pods' cpu and memory
 * requests over its allocatable (every bound pod counts, DaemonSet ones too, as CA's default).
 */
export function nodeUtilization(node: SnapshotNode): number {
  let used = 0;
  for (const r of [CPU, MEMORY]) {
    const alloc = node.allocatable[r] ?? 0;
    if (alloc <= 0) continue;
    let req = 0;
    for (const p of node.pods) req += p.requests[r] ?? 0;
    used = Math.max(used, req / alloc);
  }
  return used;
}

/** Per budget scope: the price and disruption of its existing nodes. */
export function scopeTotals(snapshot: ClusterSnapshot): Map<string, ScoreTotals> {
  const groups = new Map(snapshot.groups.map((g) => [g.id, g]));
  const out = new Map<string, ScoreTotals>();
  for (const n of snapshot.nodes) {
    const g = n.groupId ? groups.get(n.groupId) : undefined;
    if (!g || n.inFlight) continue;
    const scope = budgetScope(g);
    const t = out.get(scope) ?? { cost: 0, disruption: 0 };
    t.cost += g.pricePerHour;
    t.disruption += nodeDisruption(n);
    out.set(scope, t);
  }
  return out;
}

/** The totals a set is scored against: those of every scope it touches. */
export function totalsFor(set: readonly ConsolidationCandidate[], totals: ReadonlyMap<string, ScoreTotals>): ScoreTotals {
  const scopes = new Set(set.map((c) => budgetScope(c.group)));
  const out = { cost: 0, disruption: 0 };
  for (const s of scopes) {
    const t = totals.get(s);
    if (t) {
      out.cost += t.cost;
      out.disruption += t.disruption;
    }
  }
  return out;
}
