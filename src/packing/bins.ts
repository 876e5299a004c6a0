import type { V1Taint } from '@kubernetes/client-node';
import type { NodeGroup } from '../cluster/snapshot.js';
import type { HostPort } from '../scheduling/host-ports.js';
import type { Resources } from '../scheduling/resources.js';
import type { ClassLevel } from './class-levels.js';
import type { SolverNode } from './solver-snapshot.js';

/** A node group as the packer sees it: what a new node offers after DaemonSet overhead. */
export interface GroupInfo {
  index: number;
  group: NodeGroup;
  /** Allocatable minus DaemonSet overhead: what pending pods can use on a new node. */
  capacity: Resources;
  labels: Record<string, string>;
  taints: V1Taint[];
  /** Topology class: groups whose nodes share every topology-key value in use (hostname aside). */
  tclass: number;
}

/** A node pods can be placed on: an existing / in-flight node, or a new node this solve adds. */
export interface Bin {
  index: number;
  name: string;
  labels: Record<string, string>;
  taints: V1Taint[];
  free: Resources;
  ports: HostPort[];
  existing: boolean;
  /** Existing nodes: index into existingBins; new nodes: -1. */
  existingIndex: number;
  /** Existing and in-flight nodes: the snapshot node. */
  node?: SolverNode;
  /** New nodes: the group it would be a node of (may change when right-sized). */
  gi: number;
  tclass: number;
  /** Requests placed here by this solve (new nodes). */
  used: Resources;
  contents: Array<{ cl: ClassLevel; n: number }>;
  /** Share of the remaining demand this bin was opened for (quota of each class). */
  share: number;
  /** Shared DRA claims placed here (their devices are taken once). */
  claims?: Set<string>;
  /** Quota bookkeeping: the class last placed here and how many of it. */
  lastClass: number;
  lastClassCount: number;
}
