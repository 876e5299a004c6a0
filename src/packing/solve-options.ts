import type { ClusterSnapshot, NodeGroup } from '../cluster/snapshot.js';
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

/**
 * Boot times closer than this count as equal when choosing between groups or plans:
 * the batching window (10 s at most) already jitters when capacity is asked for, so a
 * smaller difference is not one the pods would feel.
 */
export const BOOT_TIE_MS = 10_000;

/** -1 when `a` boots materially sooner than `b`, 1 when later, 0 when about the same or either is unknown. */
export function compareBoot(a: number | undefined, b: number | undefined): number {
  if (a === undefined || b === undefined || Math.abs(a - b) <= BOOT_TIE_MS) return 0;
  return a < b ? -1 : 1;
}

/** When the last of a plan's new nodes should be Ready (the slowest group it grows), if every such group's boot is known. */
export function planBootMs(p: Plan, groups: readonly NodeGroup[]): number | undefined {
  let slowest = 0;
  for (const s of p.scaleUps) {
    if (s.to <= s.from) continue;
    const ms = groups.find((g) => g.kind === s.kind && g.namespace === s.namespace && g.name === s.name)?.bootMs;
    if (ms === undefined) return undefined;
    slowest = Math.max(slowest, ms);
  }
  return slowest;
}

/**
 * The objective, in order: more pods placed, then less added price, then (with
 * `groups` whose boots were observed) capacity Ready materially sooner, then fewer
 * new nodes.
 */
export function betterPlan(a: Plan, b: Plan, groups?: readonly NodeGroup[]): boolean {
  if (a.unschedulable.length !== b.unschedulable.length) return a.unschedulable.length < b.unschedulable.length;
  if (Math.abs(a.cost.addedPerHour - b.cost.addedPerHour) > 1e-9) return a.cost.addedPerHour < b.cost.addedPerHour;
  const boot = groups ? compareBoot(planBootMs(a, groups), planBootMs(b, groups)) : 0;
  if (boot !== 0) return boot < 0;
  return newNodeCount(a) < newNodeCount(b);
}
