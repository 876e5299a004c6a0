import type { SnapshotNode } from '../cluster/snapshot.js';
import type { SchedulingPod } from '../scheduling/scheduling-pod.js';

/** Which pods keep a node, and which would have to move if it went. Pure. */

/** Kinds of controlling owner whose pods live and die with their node, so they never keep it. */
const NODE_BOUND_OWNERS = new Set(['DaemonSet', 'Node']);

/** True for pods that follow their node (DaemonSet pods; mirror pods, owned by the Node). */
export function followsNode(ownerKind: string | undefined): boolean {
  return ownerKind !== undefined && NODE_BOUND_OWNERS.has(ownerKind);
}

function ownerKind(pod: SchedulingPod): string | undefined {
  return pod.owner?.slice(0, pod.owner.indexOf('/'));
}

/** Pods that would have to move elsewhere if the node went away. */
export function podsToMove(node: SnapshotNode): SchedulingPod[] {
  return node.pods.filter((p) => !followsNode(ownerKind(p)));
}

/** A node with nothing but DaemonSet / mirror pods on it. */
export function isEmptyNode(node: SnapshotNode): boolean {
  return node.pods.every((p) => followsNode(ownerKind(p)));
}
