import type { NodeGroup, SnapshotMachine } from '../cluster/snapshot.js';
import type { DisruptionReason } from './allowance.js';

/** A decision's outcome for one node: remove it (and how), or keep it (and why). */

export interface Removal {
  node: string;
  group: NodeGroup;
  reason: DisruptionReason;
  /** Empty since (Empty), pods unchanged since (Underutilized) or created at (Expired), ms. */
  since: number;
  /** The Machine to remove; absent for a MachinePool without Machines (removed by a replicas decrement). */
  machine?: SnapshotMachine;
  /** uids of the pods that were to move when the decision was taken (a re-check refuses new ones). */
  podUids: string[];
  /**
   * Underutilized only: the one cheaper node that takes this node's pods (and those of
   * the others of the same action): its group is scaled up first, and this node goes
   * once it is Ready.
   */
  replacement?: { group: NodeGroup; pricePerHour: number };
  /** Underutilized only: the action's consolidation score (score.ts). */
  score?: number;
}

export interface Skip {
  node: string;
  why: string;
  /** The disruption reason the node was a candidate for. */
  reason?: DisruptionReason;
  /** What kept it, as one of a few fixed codes (a bounded metric label; `why` has the detail). */
  blockedBy?: BlockReason;
}

/**
 * Why a candidate was kept: its group is at min size, or not managed; a disruption
 * budget is used up; a PodDisruptionBudget allows too few disruptions; it has a pod
 * without a controller, or pods that fit nowhere else;
 * it changed between the decision and the removal (a fresh look refused it).
 */
export type BlockReason = 'min-size' | 'unmanaged' | 'budget' | 'pdb' | 'pod-without-controller' | 'pods-cannot-move' | 'changed';

/** Each reason in a few words, for the reason shown while a removal is under way. */
export const REASON_TEXT: Record<Removal['reason'], string> = {
  Empty: 'node empty', Underutilized: 'node underutilized', Drifted: 'node drifted', Expired: 'node expired',
};

/** Why a node goes, for the actuator's log and events. */
export function describeRemoval(r: Removal, now: number): string {
  const s = Math.round((now - r.since) / 1000);
  if (r.reason === 'Empty') return `node empty (DaemonSet pods only) for ${s} s`;
  if (r.reason === 'Expired') return `node expired (age ${s} s), its pods fit on other nodes`;
  if (r.reason === 'Drifted') return 'node drifted from its NodePool template';
  return `node underutilized (pods unchanged for ${s} s, score ${r.score?.toFixed(2) ?? '-'}), its pods fit on other nodes`;
}
