import type { DeploymentWorkload, ReplicaSchedule, Trace } from './trace.js';
import { replicaSteps } from './workloads.js';

/**
 * The noisy variant's noise: a standard deviation of this fraction of each
 * Deployment's peak replicas, drawn at every re-evaluation (each minute or sooner).
 * Real clusters' HPA-driven replica counts jitter by about this much minute to
 * minute (issue 24); one value for every trace, never tuned to one.
 */
export const NOISY_VARIANT_PEAK_FRACTION = 0.02;

/** The noise is drawn at least this often: "per-minute" noise. */
const NOISE_STEP_MS = 60_000;

/** The suffix of a noisy variant's name: `diurnal` -> `diurnal-noisy`. */
export const NOISY_SUFFIX = '-noisy';

/** The highest replica count of a schedule over `duration`, its noise left out. */
export function schedulePeak(s: ReplicaSchedule, duration: number): number {
  const { noise: _noise, ...quiet } = s;
  let peak = 0;
  // The seed does not matter: without noise the steps draw nothing.
  for (const [, replicas] of replicaSteps(quiet, duration, 0, 'peak')) peak = Math.max(peak, replicas);
  return peak;
}

/**
 * The same trace with per-minute noise of `fraction` of each Deployment's peak added
 * to its replica schedule (independent of, and combined with, any noise it already
 * has: standard deviations add in quadrature). Jobs and CronJobs are unchanged: their
 * demand comes in runs, not in a replica series. The noise comes from the workload
 * driver's seeded stream of the Deployment, so the variant is deterministic per seed.
 */
export function noisyVariant(trace: Trace, fraction = NOISY_VARIANT_PEAK_FRACTION): Trace {
  const added: string[] = [];
  const workloads = trace.workloads.map((w) => {
    if (w.kind !== 'Deployment') return w;
    const peak = schedulePeak(w.replicas, trace.duration);
    const extra = fraction * peak;
    const stddev = Math.hypot(w.replicas.noise?.stddev ?? 0, extra);
    added.push(`${w.name} ${round(extra)} (peak ${peak})`);
    const replicas: ReplicaSchedule = { ...w.replicas, noise: { stddev }, every: Math.min(w.replicas.every, NOISE_STEP_MS) };
    return { ...w, replicas } satisfies DeploymentWorkload;
  });
  const what = `Noisy variant of ${trace.name}: normal noise of ${round(fraction * 100)}% of each Deployment's peak replicas added at every re-evaluation (each minute or sooner): stddev ${added.join(', ')}.`;
  return {
    ...trace,
    name: `${trace.name}${NOISY_SUFFIX}`,
    description: trace.description ? `${trace.description} ${what}` : what,
    workloads,
  };
}

const round = (x: number) => Math.round(x * 10) / 10;
