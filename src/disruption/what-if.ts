import type { ClusterSnapshot, NodeGroup } from '../cluster/snapshot.js';
import type { Plan } from '../packing/plan.js';
import { newNodeCount } from '../packing/solve-options.js';
import type { SchedulingPod } from '../scheduling/scheduling-pod.js';
import type { SolveSnapshot } from './expiry.js';
import { podsToMove } from './pods.js';
import { pendingRoomShort } from './room.js';

/**
 * The what-if behind every consolidation: the snapshot without a set of nodes, their
 * movable pods pending next to the predicted demand already pending (CapacityBuffers,
 * ProvisioningRequest bookings, forecasts), solved by the real solver. The set may
 * go when its pods all land on existing nodes (delete) or, with one new node, on that
 * node and existing ones (replace), and the predicted demand needs no more new
 * capacity than it does with the set in place. In-flight capacity does not count
 * for the moved pods: it may never come. Pure apart from the solver passed in.
 */

export type WhatIf =
  | { kind: 'delete' }
  | { kind: 'replace'; group: NodeGroup; pricePerHour: number }
  | { kind: 'refused'; why: string };

/** The snapshot as it would be without `names`: their movable pods pending after the pending (predicted) pods. */
export function withoutNodes(snapshot: ClusterSnapshot, names: ReadonlySet<string>): { snapshot: ClusterSnapshot; moved: SchedulingPod[] } {
  const moved: SchedulingPod[] = [];
  for (const n of snapshot.nodes) {
    if (!names.has(n.name)) continue;
    for (const p of podsToMove(n)) {
      const { nodeName: _bound, ...rest } = p;
      moved.push(rest);
    }
  }
  return {
    snapshot: { ...snapshot, nodes: snapshot.nodes.filter((n) => !names.has(n.name)), pendingPods: [...snapshot.pendingPods, ...moved] },
    moved,
  };
}

/**
 * What removing `names` would take. `baseline` is the plan for the snapshot as it is
 * (only needed when predicted pods are pending; without it nothing is pending).
 * `replacementBelow`: the caller takes a replacement only when it costs less than this
 * (consolidation: the set's price), which bounds the room checked before the solve.
 */
export async function evaluateRemoval(
  snapshot: ClusterSnapshot, names: ReadonlySet<string>, solve: SolveSnapshot, baseline?: Plan, replacementBelow?: number,
): Promise<WhatIf> {
  const { snapshot: what, moved } = withoutNodes(snapshot, names);
  if (moved.length === 0) return { kind: 'delete' };
  const base = { newNodes: baseline ? newNodeCount(baseline) : 0, newPrice: baseline?.cost.addedPerHour ?? 0, unschedulable: baseline?.unschedulable.length ?? 0 };
  const short = pendingRoomShort(snapshot, names, moved, base, replacementBelow);
  if (short) return { kind: 'refused', why: short };
  const plan = await solve(what);
  const movedKeys = new Set(moved.map((p) => p.key));
  const lost = plan.unschedulable.filter((u) => movedKeys.has(u.pod)).length;
  if (lost > 0) return { kind: 'refused', why: `${lost} pod(s) would not fit anywhere` };
  if (plan.unschedulable.length > (baseline?.unschedulable.length ?? 0)) return { kind: 'refused', why: 'predicted demand would no longer fit' };
  const existing = new Set<string>();
  for (const n of what.nodes) if (!n.inFlight) existing.add(n.name);
  /** The one new node the moved pods may use: `${group}#${k}`. */
  let replacement: string | undefined;
  let placed = 0;
  for (const p of plan.placements) {
    if (!movedKeys.has(p.pod)) continue;
    placed++;
    if ('node' in p) {
      if (!existing.has(p.node)) return { kind: 'refused', why: 'its pods would need an in-flight node' };
      continue;
    }
    const key = `${p.group}#${p.newNode}`;
    if (replacement !== undefined && replacement !== key) return { kind: 'refused', why: 'its pods would need more than one new node' };
    replacement = key;
  }
  if (placed < moved.length) return { kind: 'refused', why: `${moved.length - placed} pod(s) got no placement` };
  const added = newNodeCount(plan) - (baseline ? newNodeCount(baseline) : 0);
  const addedPrice = plan.cost.addedPerHour - (baseline?.cost.addedPerHour ?? 0);
  if (replacement === undefined) {
    return added <= 0 && addedPrice <= 1e-9 ? { kind: 'delete' } : { kind: 'refused', why: 'predicted demand would need more new capacity' };
  }
  if (added !== 1) return { kind: 'refused', why: `it would need ${added} new node(s) in all` };
  const groupId = replacement.slice(0, replacement.lastIndexOf('#'));
  const group = what.groups.find((g) => g.id === groupId);
  if (!group) return { kind: 'refused', why: `replacement group ${groupId} is unknown` };
  return { kind: 'replace', group, pricePerHour: addedPrice };
}
