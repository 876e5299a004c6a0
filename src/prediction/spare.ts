/**
 * Spare for short-term demand: the capacity a workload's pods will need before a
 * node ordered now can boot, noise included. Pure. ADR 0145.
 *
 * Every workload's forecast gives the demand's maximum over the pool's horizon at
 * the pool's quantile (forecast.ts: the chosen method's point plus the quantile of
 * its own past errors; the `level` method makes that margin measure the jitter of a
 * flat workload rather than chase it). Pods wait on jitter as much as on rises: each
 * upward wiggle is a few pods that find no room and wait a boot. So the margin is
 * held for every workload, not only for a real rise. Without a real rise it is at
 * most JITTER_BANDS noise bands (predictor.ts): a flash crowd among few past errors
 * is a rise, not jitter. Three rules keep it from chasing the jitter it covers and
 * bound its cost:
 * - the Provisioner's target is the workload's highest target of the last hold
 *   window (one horizon), so capacity follows demand up at once and down only once a
 *   horizon without a higher target has passed;
 * - the Disruptor keeps capacity for the highest target of a longer keep window (10
 *   minutes, Cluster Autoscaler's scale-down-unneeded-time): capacity is added for one
 *   target and removed only below another, a band jitter does not cross, so nodes are
 *   not added and removed on every wiggle, and nothing the forecast needs within the
 *   boot horizon plus consolidateAfter is consolidated away;
 * - what the targets add above the workload's `level` (pods now, or the most it had in
 *   the keep window when that is within one noise band of the forecast's point: a dip
 *   that comes back; judged against the forecast, not one low sample) costs at
 *   most `maxSparePercent` of what the levels cost, shared in proportion when over
 *   (spareWithin). The budget comes from the levels, not the current counts, so it does
 *   not move with the jitter. A real rise, a known CronJob run or an HPA's desired
 *   replicas are demand, not spare: only maxExtraCostPerHour and maxPredictedNodes
 *   bound them.
 */

/** A workload's target (pods) at a time. */
export interface SpareSample {
  at: number;
  target: number;
}

/**
 * The held targets after one more: samples older than `holdMs` dropped, and those no
 * higher than the new one (they can never be the maximum again), so the first is the
 * maximum and the list stays short (a monotone queue).
 */
export function holdTarget(held: readonly SpareSample[] | undefined, now: number, holdMs: number, target: number): SpareSample[] {
  const out = (held ?? []).filter((s) => s.at > now - holdMs && s.at <= now && s.target > target);
  out.push({ at: now, target: Math.round(target * 100) / 100 });
  return out;
}

/** The highest target held within the last `withinMs` (the queue is highest first). */
export function heldTarget(held: readonly SpareSample[], now: number, withinMs: number): number {
  for (const s of held) if (s.at > now - withinMs) return s.target;
  return 0;
}

/** One workload's spare targets in one pass (pods). */
export interface SpareTargets {
  /** Pods now. */
  current: number;
  /** The most pods it had within the keep window, at least `current`: demand that may come back. */
  level: number;
  /** Its highest forecast target of the hold window: what the Provisioner provisions for. */
  provision: number;
  /** Its highest forecast target of the keep window: what the Disruptor keeps capacity for. */
  keep: number;
}

/** Predicted pods a workload holds: for the Provisioner, and for the Disruptor (at least as many). */
export interface SpareAllowance {
  provision: number;
  keep: number;
  /** The budget held it below its targets. */
  capped: boolean;
}

/**
 * Each workload's predicted pods within one pool's spare budget (per hour). Capacity up
 * to the workload's `level` is demand it had lately, not spare, and is not charged; what
 * the targets add above it is, and when that costs more than the budget, each workload's
 * part is scaled down by the same factor (rounded down), so no workload starves another.
 * The budget is taken from the levels, not the current counts, so it does not move with
 * the jitter it covers.
 */
export function spareWithin(wanted: readonly { targets: SpareTargets; costPerPod: number }[], budgetPerHour: number): SpareAllowance[] {
  const above = wanted.map(({ targets: t }) => Math.max(0, Math.ceil(Math.max(t.keep, t.provision) - t.level - 1e-9)));
  const total = wanted.reduce((a, w, i) => a + above[i]! * w.costPerPod, 0);
  const f = total <= budgetPerHour + 1e-9 ? 1 : total > 0 ? Math.max(0, budgetPerHour) / total : 0;
  return wanted.map(({ targets: t }, i) => {
    const allowedAbove = f === 1 ? above[i]! : Math.floor(above[i]! * f + 1e-9);
    const ceiling = t.level + allowedAbove;
    const pods = (target: number) => Math.max(0, Math.ceil(Math.min(target, ceiling) - t.current - 1e-9));
    const provision = pods(t.provision);
    return { provision, keep: Math.max(provision, pods(t.keep)), capped: allowedAbove < above[i]! && Math.max(t.keep, t.provision) > ceiling };
  });
}
