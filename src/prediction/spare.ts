/**
 * Spare for short-term demand: the capacity a workload's pods will need before a
 * node ordered now can boot, noise included. Pure.
 *
 * Every workload's forecast gives the demand's maximum over the pool's horizon at
 * the pool's quantile (forecast.ts: the chosen method's point plus the quantile of
 * its own past errors). What pods wait on is jitter as much as rises: each upward
 * wiggle is a few pods that find no room and wait a boot. So the margin is held for
 * every workload, level or moving, not only for a real rise. Two rules keep it from
 * chasing the jitter it covers:
 * - the target (pods now plus spare) is the highest of the workload's targets of the
 *   last `holdMs` (one horizon), so capacity follows demand up at once and down only
 *   once a horizon without a higher target has passed (the HPA's scale-down
 *   stabilization window, applied to capacity);
 * - the Disruptor keeps capacity for the highest target of a longer window,
 *   `keepHoldMs` (10 minutes, Cluster Autoscaler's scale-down-unneeded-time): capacity
 *   is added for one target and removed only below another, a band that jitter
 *   does not cross, so nodes are not added and removed on every wiggle;
 * - the spare of a pool costs at most `maxSparePercent` of what the pool's observed
 *   pods cost now (node-equivalents x price), shared in proportion when over; a real
 *   rise, a known CronJob run or an HPA's desired replicas are demand, not spare, and
 *   only the absolute caps (maxExtraCostPerHour, maxPredictedNodes) bound them.
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

/**
 * Pods each workload may hold as spare within a pool's budget: all of them when the
 * total fits, else each scaled down by the same factor (rounded down), so no workload
 * starves another.
 */
export function shareSpare(wanted: readonly { pods: number; costPerPod: number }[], budgetPerHour: number): number[] {
  const total = wanted.reduce((a, w) => a + w.pods * w.costPerPod, 0);
  if (total <= budgetPerHour + 1e-9) return wanted.map((w) => w.pods);
  const f = total > 0 ? Math.max(0, budgetPerHour) / total : 0;
  return wanted.map((w) => Math.floor(w.pods * f + 1e-9));
}
