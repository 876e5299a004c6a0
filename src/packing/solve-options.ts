import type { ClusterSnapshot } from '../cluster/snapshot.js';
import type { Plan } from './plan.js';

export interface SolveOptions {
  /** Skip the "preferences as required" rungs: place every pod on its hard constraints only. */
  ignorePreferences?: boolean;
}

/** The signature both packers share, so callers (simulator, benchmark) can swap them. */
export type Solver = (snapshot: ClusterSnapshot, options?: SolveOptions) => Plan;

/** Nothing pending: nothing to add (the common case between bursts, without building any state). */
export function emptyPlan(): Plan {
  return { scaleUps: [], placements: [], unschedulable: [], cost: { addedPerHour: 0 } };
}

export function newNodeCount(p: Plan): number {
  let n = 0;
  for (const s of p.scaleUps) n += s.to - s.from;
  return n;
}

/** The objective, in order: more pods placed, then less added price, then fewer new nodes. */
export function betterPlan(a: Plan, b: Plan): boolean {
  if (a.unschedulable.length !== b.unschedulable.length) return a.unschedulable.length < b.unschedulable.length;
  if (Math.abs(a.cost.addedPerHour - b.cost.addedPerHour) > 1e-9) return a.cost.addedPerHour < b.cost.addedPerHour;
  return newNodeCount(a) < newNodeCount(b);
}
