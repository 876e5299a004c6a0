import { observe } from '../../src/prediction/predictor.js';
import { type PredictionState, emptyPredictionState } from '../../src/prediction/state.js';
import { Random } from '../../src/sim/random.js';

/**
 * The demand of hpa-prediction.test.ts: a Deployment's replicas written every 15 s
 * the way a HorizontalPodAutoscaler writes them, for a load that rises from a few
 * pods' worth to a peak and falls back within a few minutes, with noise.
 *
 * One process makes every day: the load is `base + (peak - base) * sin^2(pi x)` over
 * the episode (x from 0 to 1), each 15 s sample multiplied by (1 + N(0, noise)); each
 * day draws its own peak (+-10%), its own start (+-30 s around the same time of day)
 * and its own noise. Earlier days seed the model (`seededHistory`); the test plays
 * another day of the same process (`dayOf` with its own index), never a series the
 * model has seen.
 *
 * The replicas follow the HPA's algorithm (kube-controller-manager's replica
 * calculator, one metric, target 1 pod's worth of load per pod): within the 10%
 * tolerance of the current count nothing changes, otherwise desired =
 * ceil(load / target), between minReplicas and maxReplicas. Scale-down has no
 * stabilization window (behavior.scaleDown.stabilizationWindowSeconds: 0), so the
 * fall is seen within the episode.
 */

export const HPA_SYNC_MS = 15_000;
/** kube-controller-manager's --horizontal-pod-autoscaler-tolerance default. */
const HPA_TOLERANCE = 0.1;

export interface DemandProcess {
  readonly seed: number;
  /** Pods' worth of load outside the episode, and the mean peak. */
  readonly basePods: number;
  readonly peakPods: number;
  readonly episodeMs: number;
  /** Relative standard deviation of each sample's load. */
  readonly noise: number;
  readonly minReplicas: number;
  readonly maxReplicas: number;
}

export interface DemandDay {
  /** The episode's start, relative to the nominal time of day (ms). */
  readonly shiftMs: number;
  readonly peakPods: number;
  /** Load (pods' worth) at `t` ms from the nominal start of the episode. */
  load(t: number): number;
}

/** Day `index` of the process (0 = the day the test plays; 1, 2, ... = the days before). */
export function dayOf(p: DemandProcess, index: number): DemandDay {
  const r = Random.stream(p.seed, `day-${index}`);
  const shiftMs = r.uniform(-30_000, 30_000);
  const peakPods = p.peakPods * r.uniform(0.9, 1.1);
  // One noise draw per 15 s sample, in order, so a day is the same whoever asks first.
  const noise = new Map<number, number>();
  const noiseAt = (k: number) => {
    let v = noise.get(k);
    if (v === undefined) {
      const s = Random.stream(p.seed, `day-${index}-sample-${k}`);
      v = s.normal(0, p.noise);
      noise.set(k, v);
    }
    return v;
  };
  return {
    shiftMs, peakPods,
    load(t) {
      const x = (t - shiftMs) / p.episodeMs;
      const shape = x > 0 && x < 1 ? Math.sin(Math.PI * x) ** 2 : 0;
      const clean = p.basePods + (peakPods - p.basePods) * shape;
      return Math.max(0, clean * (1 + noiseAt(Math.round(t / HPA_SYNC_MS))));
    },
  };
}

/** One HPA sync: the replicas it writes for `load` when `current` run now. */
export function hpaDesired(p: Pick<DemandProcess, 'minReplicas' | 'maxReplicas'>, current: number, load: number): number {
  const clamp = (n: number) => Math.min(p.maxReplicas, Math.max(p.minReplicas, n));
  if (current > 0 && Math.abs(load / current - 1) <= HPA_TOLERANCE) return clamp(current);
  return clamp(Math.ceil(load - 1e-9));
}

/**
 * The replicas an HPA writes over one day's episode, a sync every 15 s from `fromMs`
 * to `toMs` (relative to the nominal start), starting from `start` replicas.
 */
export function replicaSeries(p: DemandProcess, day: DemandDay, fromMs: number, toMs: number, start: number): { at: number; replicas: number }[] {
  const out: { at: number; replicas: number }[] = [];
  let current = start;
  for (let t = fromMs; t <= toMs; t += HPA_SYNC_MS) {
    current = hpaDesired(p, current, day.load(t));
    out.push({ at: t, replicas: current });
  }
  return out;
}

/**
 * The model the controller would have learnt watching the Deployment for `days`
 * days up to `until`: each earlier day's HPA replicas (the pod count the controller
 * observes) folded in by the predictor's own `observe`, one observation per sync.
 * The episode of day d is at `episodeAt - d days`.
 */
export function seededHistory(p: DemandProcess, key: string, episodeAt: number, until: number, days: number): PredictionState {
  const DAY = 86_400_000;
  let state = emptyPredictionState();
  let replicas = p.minReplicas;
  const byIndex = Array.from({ length: days + 1 }, (_, d) => dayOf(p, d));
  const from = Math.ceil((episodeAt - days * DAY) / HPA_SYNC_MS) * HPA_SYNC_MS;
  for (let at = from; at <= until; at += HPA_SYNC_MS) {
    // The day whose episode is nearest: days before today are 1..days.
    const d = Math.max(1, Math.min(days, Math.round((episodeAt - at) / DAY)));
    replicas = hpaDesired(p, replicas, byIndex[d]!.load(at - (episodeAt - d * DAY)));
    state = observe(state, { at, workloads: [{ key, count: replicas }] });
  }
  return state;
}
