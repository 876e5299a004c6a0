import type { ClusterSnapshot, SnapshotNode } from '../cluster/snapshot.js';
import type { SchedulingPod } from '../scheduling/scheduling-pod.js';

/**
 * What the solvers read of a snapshot (ADR 0131). A ClusterSnapshot is one; a solver
 * worker receives a slimmer one, whose bound pods carry only what packing reads of
 * a pod already on a node. The types are the proof: the solvers (solve, ffd and
 * PackingState with its parts) take this type, so reading any other field of a bound
 * pod does not compile.
 */
export type SolverSnapshot = Omit<ClusterSnapshot, 'nodes'> & { nodes: readonly SolverNode[] };

export type SolverNode = Omit<SnapshotNode, 'pods'> & { pods: readonly BoundPod[] };

/**
 * A pod on a node as the solvers see it: its requests and host ports take room; its
 * namespace and labels are counted by pod (anti-)affinity and topology spread; its
 * own required anti-affinity repels the pods placed beside it.
 */
export type BoundPod = Pick<SchedulingPod, 'namespace' | 'labels' | 'requests' | 'hostPorts' | 'affinity'>;

/** The fields of `pod` the solvers read, in a new object (the rest stays on the main thread). */
export function boundPodView(pod: BoundPod): BoundPod {
  const view: BoundPod = { namespace: pod.namespace, labels: pod.labels, requests: pod.requests, hostPorts: pod.hostPorts };
  if (pod.affinity !== undefined) view.affinity = pod.affinity;
  return view;
}
