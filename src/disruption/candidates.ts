import type { ClusterSnapshot, NodeGroup, SnapshotNode } from '../cluster/snapshot.js';
import { isEmptyNode } from './pods.js';

/**
 * The nodes a decision may consider at all. A node qualifies only when Headroom
 * can remove that very node: it has a Machine (delete-machine + decrement), or it
 * belongs to a MachinePool without Machines whose every node is empty, where a
 * plain replicas decrement removes an empty node whichever instance the
 * infrastructure provider picks. A node that cannot be removed never takes budget
 * (issue 10, defect 12). Pure.
 */

export interface DisruptableNode {
  node: SnapshotNode;
  group: NodeGroup;
  /** True when the node goes by a replicas decrement (MachinePool without Machines), not through its Machine. */
  byReplicas: boolean;
}

/** Existing nodes of managed groups that may be disrupted: not in flight, not cordoned/deleting/tainted, not kept, removable. */
export function disruptableNodes(snapshot: ClusterSnapshot, keep: ReadonlySet<string> = new Set()): DisruptableNode[] {
  const groups = new Map(snapshot.groups.map((g) => [g.id, g]));
  /** MachinePools without Machines whose existing nodes are all empty. */
  const allEmpty = new Map<string, boolean>();
  for (const node of snapshot.nodes) {
    const group = node.groupId ? groups.get(node.groupId) : undefined;
    if (!group || group.kind !== 'MachinePool' || node.inFlight) continue;
    allEmpty.set(group.id, (allEmpty.get(group.id) ?? true) && isEmptyNode(node));
  }
  const out: DisruptableNode[] = [];
  for (const node of snapshot.nodes) {
    const group = node.groupId ? groups.get(node.groupId) : undefined;
    if (!group || node.inFlight || node.unschedulable || keep.has(node.name)) continue;
    if (node.machine) {
      if (!node.machine.leaving) out.push({ node, group, byReplicas: false });
    } else if (group.kind === 'MachinePool' && allEmpty.get(group.id) === true) {
      out.push({ node, group, byReplicas: true });
    }
  }
  return out;
}
