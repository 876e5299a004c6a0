import type { V1Affinity, V1Toleration, V1TopologySpreadConstraint } from '@kubernetes/client-node';
import type { PodDevices } from './dra/pod-devices.js';
import type { HostPort } from './host-ports.js';
import type { Resources } from './resources.js';

/** The scheduling-relevant view of a pod. */
export interface SchedulingPod {
  /** `namespace/name` */
  key: string;
  namespace: string;
  name: string;
  uid: string;
  labels: Record<string, string>;
  /**
   * Pods with the same equivalence key have identical scheduling constraints and
   * requests (same owner template), so the solver places them as one class.
   */
  equivalenceKey: string;
  /** `Kind/namespace/name` of the controlling owner, if any. */
  owner?: string;
  requests: Resources;
  priority: number;
  nodeSelector: Record<string, string>;
  affinity?: V1Affinity;
  tolerations: V1Toleration[];
  topologySpreadConstraints: V1TopologySpreadConstraint[];
  hostPorts: HostPort[];
  /** Claim names (in the pod's namespace) of its persistentVolumeClaim volumes. */
  claims: string[];
  /** spec.resourceClaims, with the claim each resolves to (named, or generated from a template: status.resourceClaimStatuses). */
  resourceClaims?: PodClaimRef[];
  /** Its DRA ResourceClaims (spec.resourceClaims), resolved by the snapshot builder; absent without claims. */
  devices?: PodDevices;
  /** Set for bound pods. */
  nodeName?: string;
  /**
   * status.nominatedNodeName of a pending pod: kube-scheduler preempted pods on that
   * node for it (or is binding it there), so it waits for that node, not for a new one.
   */
  nominatedNodeName?: string;
  /** controller.kubernetes.io/pod-deletion-cost, when set to an integer: how much its owner prefers to keep it. */
  deletionCost?: number;
  /** True for pods that do not exist yet (forecasts, CapacityBuffers). */
  predicted?: boolean;
  /**
   * For predicted pods: true when they stand for demand on its way (a rise the forecast
   * acts on, a known CronJob run, an HPA's desired replicas), not for spare (the
   * forecast's jitter margin, a CapacityBuffer). Capacity added for them is guarded as
   * capacity added for waiting pods is (the Disruptor's delay after add).
   */
  predictedDemand?: boolean;
}

/** One entry of a pod's spec.resourceClaims. */
export interface PodClaimRef {
  /** The entry's name in the pod. */
  name: string;
  /** The ResourceClaim's name in the pod's namespace, when known (named directly, or generated and reported in status). */
  claim?: string;
  /** The ResourceClaimTemplate a claim is (to be) generated from for this pod alone. */
  template?: string;
}
