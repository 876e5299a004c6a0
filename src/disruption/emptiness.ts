import type { ClusterSnapshot, NodeGroup, SchedulingPod, SnapshotNode } from '../cluster/snapshot.js';
import type { DisruptionAllowance, SettingsOf } from './allowance.js';

/**
 * Emptiness: a node of a managed group whose only pods are DaemonSet or static
 * (mirror) pods, for at least its pool's consolidateAfter, is removed. Pure: the
 * caller passes the snapshot, when each node was first seen empty, and now.
 */

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

export interface Removal {
  node: string;
  group: NodeGroup;
  reason: 'Empty' | 'Expired';
  /** Empty since (Empty) or created at (Expired), ms. */
  since: number;
}

export interface Skip {
  node: string;
  why: string;
}

export interface EmptinessInput {
  snapshot: ClusterSnapshot;
  /** Node name -> when it was first observed empty (ms); nodes not in here are not empty. */
  emptySince: ReadonlyMap<string, number>;
  now: number;
  settingsOf: SettingsOf;
  allowance: DisruptionAllowance;
  /** Nodes that must stay (do-not-disrupt, about to receive pending pods, already being removed). */
  keep?: ReadonlySet<string>;
}

/** The existing nodes of managed groups that may be disrupted at all: not in flight, not cordoned/deleting, not kept. */
export function disruptableNodes(snapshot: ClusterSnapshot, keep: ReadonlySet<string> = new Set()): Array<{ node: SnapshotNode; group: NodeGroup }> {
  const groups = new Map(snapshot.groups.map((g) => [g.id, g]));
  const out: Array<{ node: SnapshotNode; group: NodeGroup }> = [];
  for (const node of snapshot.nodes) {
    const group = node.groupId ? groups.get(node.groupId) : undefined;
    if (!group || node.inFlight || node.unschedulable || keep.has(node.name)) continue;
    out.push({ node, group });
  }
  return out;
}

/**
 * The empty nodes to remove now, oldest-empty first (then by name), within the
 * budgets and min sizes (taken from `allowance`, which this call uses up).
 */
export function decideEmptiness(input: EmptinessInput): { remove: Removal[]; skipped: Skip[] } {
  const { snapshot, emptySince, now, settingsOf, allowance } = input;
  const candidates: Removal[] = [];
  const skipped: Skip[] = [];
  for (const { node, group } of disruptableNodes(snapshot, input.keep)) {
    const since = emptySince.get(node.name);
    if (since === undefined || !isEmptyNode(node)) continue;
    const after = settingsOf(group).consolidateAfterMs;
    if (after === null) continue; // consolidateAfter: Never
    if (now - since < after) continue;
    candidates.push({ node: node.name, group, reason: 'Empty', since });
  }
  candidates.sort((a, b) => a.since - b.since || (a.node < b.node ? -1 : a.node > b.node ? 1 : 0));
  const remove: Removal[] = [];
  for (const c of candidates) {
    const why = allowance.blocked(c.group, 'Empty');
    if (why) {
      skipped.push({ node: c.node, why });
      continue;
    }
    allowance.take(c.group, 'Empty');
    remove.push(c);
  }
  return { remove, skipped };
}
