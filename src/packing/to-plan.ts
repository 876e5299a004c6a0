import type { SchedulingPod } from '../scheduling/scheduling-pod.js';
import type { ClassLevel } from './class-levels.js';
import type { PackingState } from './packing-state.js';
import type { Placement, Plan, ScaleUp } from './plan.js';

/**
 * The Plan a finished solve describes: pods assigned to bins in class order, new
 * nodes numbered per group in the order the solve opened them, scale-ups per group,
 * and unschedulable pods in snapshot order.
 */
export function toPlan(state: PackingState): Plan {
  const next = new Map<number, number>();
  const assigned = new Int32Array(state.classes.length);
  const placements: Placement[] = [];
  const take = (cl: ClassLevel, n: number): SchedulingPod[] => {
    const i = cl.cls.index;
    const out = cl.cls.pods.slice(assigned[i]!, assigned[i]! + n);
    assigned[i] = assigned[i]! + n;
    return out;
  };
  for (const bin of state.existingBins) for (const { cl, n } of bin.contents) for (const p of take(cl, n)) placements.push({ pod: p.key, node: bin.name });
  let cost = 0;
  for (const bin of state.newBins) {
    if (bin.contents.length === 0) continue;
    const g = state.groups[bin.gi]!.group;
    const k = next.get(bin.gi) ?? 0;
    next.set(bin.gi, k + 1);
    cost += g.pricePerHour;
    for (const { cl, n } of bin.contents) for (const p of take(cl, n)) placements.push({ pod: p.key, group: g.id, newNode: k });
  }
  const scaleUps: ScaleUp[] = [];
  for (const g of state.groups) {
    const n = next.get(g.index);
    if (!n) continue;
    scaleUps.push({ kind: g.group.kind, namespace: g.group.namespace, name: g.group.name, from: g.group.replicas, to: g.group.replicas + n });
  }
  const order = new Map(state.snapshot.pendingPods.map((p, i) => [p.key, i]));
  const unschedulable = [...state.unschedulable].sort((a, b) => order.get(a.pod)! - order.get(b.pod)!);
  return { scaleUps, placements, unschedulable, cost: { addedPerHour: Math.round(cost * 1e6) / 1e6 } };
}
