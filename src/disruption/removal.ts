import type { NodeGroup, SnapshotMachine } from '../cluster/snapshot.js';
import type { DisruptionReason } from './allowance.js';

/** A decision's outcome for one node: remove it (and how), or keep it (and why). */

export interface Removal {
  node: string;
  group: NodeGroup;
  reason: DisruptionReason;
  /** Empty since (Empty) or created at (Expired), ms. */
  since: number;
  /** The Machine to remove; absent for a MachinePool without Machines (removed by a replicas decrement). */
  machine?: SnapshotMachine;
  /** uids of the pods that were to move when the decision was taken (a re-check refuses new ones). */
  podUids: string[];
}

export interface Skip {
  node: string;
  why: string;
}
