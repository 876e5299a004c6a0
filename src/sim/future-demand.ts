import type { V1PodTemplateSpec } from '@kubernetes/client-node';
import { cronTimes, parseCron } from './cron.js';
import type { Distribution, Trace } from './trace.js';
import { replicaSteps } from './workloads.js';

/**
 * The trace's future, as the workload driver will play it for a seed: each
 * Deployment's replica steps (the same seeded stream, so exactly the counts it will
 * write) and each Job's and CronJob's start times. Only the oracle policy reads it
 * (docs/adr/0136-oracle-policy.md); every other policy learns from the cluster alone.
 * Times are milliseconds from the start of the run.
 */
export interface FutureWorkload {
  namespace: string;
  name: string;
  template: V1PodTemplateSpec;
  /** Deployment: [time, replicas] at every change, in time order. */
  steps?: [number, number][];
  /** Job / CronJob: when a run starts, and how many pods it creates at once (min(parallelism, completions)). */
  starts?: number[];
  podsPerStart?: number;
}

export class FutureDemand {
  readonly workloads: FutureWorkload[];
  /** Every time demand rises (a Deployment step up, a Job start), sorted, distinct. */
  readonly rises: number[];

  constructor(trace: Trace, seed: number) {
    this.workloads = trace.workloads.map((w): FutureWorkload => {
      const base = { namespace: w.namespace, name: w.name, template: w.template };
      switch (w.kind) {
        case 'Deployment':
          return { ...base, steps: replicaSteps(w.replicas, trace.duration, seed, `replicas/${w.namespace}/${w.name}`) };
        case 'Job':
          return { ...base, starts: [w.at], podsPerStart: Math.min(w.parallelism, w.completions) };
        case 'CronJob': {
          const s = parseCron(w.schedule);
          if (typeof s === 'string') throw new Error(`${w.name}: ${s}`);
          return { ...base, starts: cronTimes(s, trace.duration), podsPerStart: Math.min(w.parallelism, w.completions) };
        }
      }
    });
    const rises = new Set<number>();
    for (const w of this.workloads) {
      if (w.starts) for (const t of w.starts) rises.add(t);
      if (w.steps) for (let i = 0; i < w.steps.length; i++) if (i === 0 || w.steps[i]![1] > w.steps[i - 1]![1]) rises.add(w.steps[i]![0]);
    }
    this.rises = [...rises].sort((a, b) => a - b);
  }

  /**
   * Per workload, the pods that will be created in (from, to] beyond those there are
   * at `from`: a Deployment's highest replica count in the window less its count at
   * `from`; a Job's or CronJob's pods of the runs that start in the window.
   */
  extraPods(from: number, to: number): number[] {
    return this.workloads.map((w) => {
      if (w.steps) {
        const s = w.steps;
        let i = lastAtOrBefore(s, from);
        const now = i >= 0 ? s[i]![1] : 0;
        let max = now;
        for (i++; i < s.length && s[i]![0] <= to; i++) if (s[i]![1] > max) max = s[i]![1];
        return max - now;
      }
      let n = 0;
      for (const t of w.starts!) if (t > from && t <= to) n++;
      return n * w.podsPerStart!;
    });
  }
}

function lastAtOrBefore(steps: [number, number][], t: number): number {
  let lo = 0;
  let hi = steps.length - 1;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (steps[mid]![0] <= t) {
      found = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return found;
}

/** The longest a draw of the distribution can be (a normal without a max: mean + 4 stddev). */
export function upperBound(d: Distribution): number {
  switch (d.kind) {
    case 'constant': return d.value;
    case 'uniform': return d.max;
    case 'normal': return Math.max(d.min, Math.min(d.max, d.mean + 4 * d.stddev));
  }
}
