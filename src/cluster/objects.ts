import type {
  KubernetesObject, V1DaemonSet, V1Node, V1PersistentVolume, V1PersistentVolumeClaim, V1Pod,
  V1PodDisruptionBudget, V1StorageClass,
} from '@kubernetes/client-node';
import type { UnstructuredObject } from '../api/unstructured-object.js';

/**
 * The raw Kubernetes objects Headroom reasons about, as read from a file
 * (`headroom plan`), an informer cache (the controller) or the simulator.
 * CAPI and our own CRDs are kept as unstructured objects here and parsed into
 * typed views by src/api; `buildSnapshot` turns all of it into a ClusterSnapshot.
 */
export interface ClusterObjects {
  pods: V1Pod[];
  nodes: V1Node[];
  daemonSets: V1DaemonSet[];
  podDisruptionBudgets: V1PodDisruptionBudget[];
  persistentVolumes: V1PersistentVolume[];
  persistentVolumeClaims: V1PersistentVolumeClaim[];
  storageClasses: V1StorageClass[];
  /** MachineDeployments, MachineSets and MachinePools (cluster.x-k8s.io v1beta1 or v1beta2). */
  nodeGroups: UnstructuredObject[];
  machines: UnstructuredObject[];
  /** cluster.x-k8s.io Clusters: a paused Cluster's groups are not scaled (absent when not watched). */
  clusters?: UnstructuredObject[];
  /** headroom.dev NodePools. */
  nodePools: UnstructuredObject[];
  /** autoscaling.x-k8s.io CapacityBuffers. */
  capacityBuffers: UnstructuredObject[];
  /** Namespaces, for pod affinity namespaceSelector. */
  namespaces: KubernetesObject[];
  /** core/v1 PodTemplates, for CapacityBuffers' podTemplateRef (absent when not watched). */
  podTemplates?: KubernetesObject[];
  /**
   * Workloads: prediction's signals (src/prediction/signals.ts, src/cluster/rollout-signals.ts),
   * and what a CapacityBuffer's scalableRef names (with ReplicaSets and Jobs); absent when not watched.
   */
  deployments?: KubernetesObject[];
  statefulSets?: KubernetesObject[];
  replicaSets?: KubernetesObject[];
  jobs?: KubernetesObject[];
  cronJobs?: KubernetesObject[];
  horizontalPodAutoscalers?: KubernetesObject[];
  /** Scale subresources read for scalableRefs of other kinds (the controller reads them). */
  scales?: ObservedScale[];
  /** core/v1 ResourceQuotas, which cap CapacityBuffers (LimitedByQuotas). */
  resourceQuotas?: KubernetesObject[];
  /** autoscaling.x-k8s.io ProvisioningRequests. */
  provisioningRequests?: UnstructuredObject[];
  /**
   * The infrastructure objects node groups reference (InfraMachineTemplates,
   * InfraMachinePools): their status.capacity / nodeInfo size a group with no nodes
   * (scale from zero). Absent when not watched.
   */
  infrastructureTemplates?: UnstructuredObject[];
  /**
   * resource.k8s.io/v1 (DRA): claims and templates the pods name, the DeviceClasses
   * their requests select from, and the ResourceSlices drivers publish. Absent when not
   * watched (the API not served).
   */
  resourceClaims?: KubernetesObject[];
  resourceClaimTemplates?: KubernetesObject[];
  deviceClasses?: KubernetesObject[];
  resourceSlices?: KubernetesObject[];
  /** storage.k8s.io/v1 CSINodes: each node's CSI attach limits per driver. Absent when not watched. */
  csiNodes?: KubernetesObject[];
}

/**
 * What the scale subresource of a scalableRef's object said: its replicas and pod
 * label selector, or why it could not be read (no such kind, no scale subresource).
 */
export interface ObservedScale {
  apiGroup: string;
  kind: string;
  namespace: string;
  name: string;
  replicas?: number;
  /** status.selector, the label-selector string the scale subresource reports. */
  selector?: string;
  error?: string;
}

export function emptyClusterObjects(): ClusterObjects {
  return {
    pods: [], nodes: [], daemonSets: [], podDisruptionBudgets: [], persistentVolumes: [],
    persistentVolumeClaims: [], storageClasses: [], nodeGroups: [], machines: [], nodePools: [],
    capacityBuffers: [], namespaces: [],
  };
}
