import type { V1Taint } from '@kubernetes/client-node';
import type { NodeGroupKind } from '../api/capi.js';
import type { NodePoolDisruption } from '../api/nodepool.js';
import type { DraTable } from '../scheduling/dra/pod-devices.js';
import type { Resources } from '../scheduling/resources.js';
import type { SchedulingPod } from '../scheduling/scheduling-pod.js';
import type { VolumeTopology } from '../scheduling/volume-topology.js';
import type { LeftAlonePod } from './left-alone.js';

/**
 * An immutable, plain-data view of the cluster for solving. Built from
 * ClusterObjects by `buildSnapshot` (src/cluster/build-snapshot.ts), posted to the
 * piscina workers by structured clone, and consumed by the pure solver. Everything
 * is parsed and validated by then: quantities are numbers, annotations are fields.
 */
export interface ClusterSnapshot {
  groups: NodeGroup[];
  /** Existing nodes, plus in-flight placeholders for replicas not yet registered. */
  nodes: SnapshotNode[];
  /** Demand: unbound, non-terminal, non-DaemonSet, ungated pods (and predicted pods). */
  pendingPods: SchedulingPod[];
  volumes: VolumeTopology;
  /** Namespace name -> labels, for pod affinity namespaceSelector. */
  namespaceLabels: Record<string, Record<string, string>>;
  /** NodePool limits, keyed by NodePool name. Groups point at their pool. */
  limits: Record<string, PoolLimits>;
  /** NodePool disruption settings (defaults applied), keyed by NodePool name, parsed once here for the Disruptor. */
  disruption: Record<string, NodePoolDisruption>;
  /**
   * Each NodePool's machineTemplate as it is now, keyed by NodePool name (pools with a
   * machineTemplate only), hashed once here for drift: the Disruptor parses no NodePool.
   */
  templates: Record<string, PoolTemplate>;
  /** DRA: how device resources serve the pods' device signatures (absent when no pod has a ResourceClaim). */
  dra?: DraTable;
  /** Pending pods that are no demand on purpose (expendable, nominated), with why; absent when none. */
  leftAlone?: LeftAlonePod[];
  /** The expendable-pods priority cutoff the snapshot was built with, when not the default (-10). */
  expendablePodsPriorityCutoff?: number;
}

/** A NodePool's current machineTemplate, as drift compares it with a standalone Machine's. */
export interface PoolTemplate {
  /** nodePoolTemplateHash (api/nodepool-hash.ts): what Headroom writes on the Machines it makes from it. */
  hash: string;
  /** Where the pool makes its Machines: one elsewhere is no longer the pool's. */
  namespace: string;
}

/** A MachineDeployment, MachineSet or MachinePool that Headroom may scale. */
export interface NodeGroup {
  /** `${kind}/${namespace}/${name}`, the id used in plans. */
  id: string;
  kind: NodeGroupKind;
  namespace: string;
  name: string;
  clusterName: string;
  minSize: number;
  maxSize: number;
  /** spec.replicas as observed. */
  replicas: number;
  /** What a new node of this group looks like (allocatable, labels incl. zone, taints). */
  template: NodeTemplate;
  /** Price per node-hour: the headroom.dev/price annotation, or derived from shape. */
  pricePerHour: number;
  capacityType: 'on-demand' | 'spot';
  /** Requests of the DaemonSet pods that would land on a new node of this group. */
  daemonSetOverhead: Resources;
  /**
   * Those DaemonSet pods themselves (template pods, no nodeName), for host ports,
   * pod affinity and spread counting on new nodes. Their requests sum to daemonSetOverhead.
   */
  daemonSetPods?: SchedulingPod[];
  /** The NodePool this group belongs to, if any (for limits and weight). */
  nodePool?: string;
  /** NodePool weight: higher is preferred before price is compared. */
  weight: number;
  /**
   * Median observed boot (Machine created -> Node Ready, ms) when enough were seen
   * (provisioning/boot-times.ts): between groups equally priced for the demand, the
   * solver prefers the one that boots sooner. Absent: unknown, no preference.
   */
  bootMs?: number;
}

export interface NodeTemplate {
  /** Free DRA devices are in it too, as `devices.headroom.dev/<atom>` counts (scheduling/dra/pod-devices.ts). */
  allocatable: Resources;
  labels: Record<string, string>;
  taints: V1Taint[];
  /** DRA signatures whose CEL selectors fail on one of a new node's devices (no pod needing them runs there). */
  deviceBlocked?: string[];
}

export interface SnapshotNode {
  name: string;
  /** The group that owns this node's Machine, if known. */
  groupId?: string;
  labels: Record<string, string>;
  taints: V1Taint[];
  /** Free (unallocated) DRA devices are in it too, as `devices.headroom.dev/<atom>` counts. */
  allocatable: Resources;
  /** DRA signatures whose CEL selectors fail on one of its devices. */
  deviceBlocked?: string[];
  /** Pods bound to the node (including DaemonSet pods), for resources, ports, affinity and spread. */
  pods: SchedulingPod[];
  /** A replica that was requested but has no Node yet: capacity that is on its way. */
  inFlight: boolean;
  /** Cordoned, tainted by Headroom's disruption, or its Machine is being deleted / drained: nothing new lands here. */
  unschedulable: boolean;
  /** The Machine behind an existing node, when one is known (MachinePools without Machines have none). */
  machine?: SnapshotMachine;
}

/** The Machine of a node: what disruption removes. */
export interface SnapshotMachine {
  namespace: string;
  name: string;
  /** Being deleted, or marked cluster.x-k8s.io/delete-machine: on its way out already. */
  leaving: boolean;
}

export interface PoolLimits {
  /** Upper bounds; absent means unlimited. cpu in millicores, memory in bytes. */
  cpu?: number;
  memory?: number;
  nodes?: number;
  /** Current usage by the pool's nodes (existing and in flight). */
  used: { cpu: number; memory: number; nodes: number };
}
