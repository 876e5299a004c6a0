import { DAY_MS, METHODS, type Method, SLOT_MS, STEP_MS, WEEK_MS, slotOf, type WorkloadModel } from './model.js';

/**
 * Forecasting one workload's pod count over a horizon, from its model alone.
 * Pure and deterministic. Each forecaster gives the expected MAXIMUM count over
 * (now, now + horizon] (capacity must cover the peak of the window):
 * - naive: the count stays where it is;
 * - trend: the median of the least-squares slopes of four consecutive
 *   sub-windows (see trendOf). A real rise shows in every sub-window; a one-off
 *   step or jitter in one at most, so the median ignores it (a robust regression
 *   in the spirit of Siegel's repeated median);
 * - daily / weekly: the current count plus the profile's rise from now to the
 *   window's peak, once a full period has been seen. Anchoring on the current
 *   count keeps the shape when the level differs from past periods. A step between
 *   slots larger than the jitter is held in full (the upper, not the point: see
 *   seasonalStepRise and docs/adr/0151-seasonal-steps-held-in-full.md).
 * The forecaster is chosen per workload by its mean absolute error at the
 * scoring horizon, weighted towards the last day (model.scores); its recent
 * errors (model.errors) give the margin to the requested quantile (an empirical,
 * conformal-style interval). The noise model decides whether a forecast rise is
 * real: for the trend, the least-squares slope over a window must be at least
 * TREND_T standard errors above zero (trendOf); for a seasonal forecaster, its
 * track record must beat the naive forecast's by SEASONAL_GAIN. A rise that is not real is not
 * acted on, however large the jitter makes it look.
 */

export type ForecastMethod = Method | 'schedule' | 'hpa';

export interface Forecast {
  /** Pods now. */
  current: number;
  /** Expected maximum over the horizon, and the same at the requested quantile. */
  point: number;
  upper: number;
  method: ForecastMethod;
  /** The rise is real, not jitter (see the noise model above). */
  significant: boolean;
  /** Jitter of the count: twice the robust spread of step-to-step changes (pods). */
  noise: number;
}

const TREND_WINDOWS = 4;
/** Steps per trend sub-window, shortest first (see trendOf). */
const TREND_WINDOW_STEPS = [5, 10, 20];
const MIN_TREND_WINDOW_STEPS = 2;
/** Steps the level is the median of: ten minutes, long against jitter, short against a real change. */
const LEVEL_STEPS = 10;
const NOISE_STEPS = 60;
/** Errors a method needs before it can be chosen or its quantile trusted. */
export const MIN_SCORED = 5;
/** Robust standard deviations of step changes reported as the jitter band. */
const NOISE_Z = 2;
/** Standard errors the window's slope must clear to be a real trend. */
const TREND_T = 3;
/** A seasonal forecaster is trusted when its mean absolute error is at most this fraction of naive's. */
const SEASONAL_GAIN = 0.9;

/** The step maxima up to now, the step being filled last. */
function series(m: WorkloadModel): number[] {
  return [...m.recent, m.stepMax];
}

function median(xs: number[]): number {
  if (xs.length === 0) return 0;
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/** Empirical quantile (linear interpolation between order statistics). */
export function quantileOf(xs: readonly number[], q: number): number {
  if (xs.length === 0) return 0;
  const s = [...xs].sort((a, b) => a - b);
  const pos = Math.min(Math.max(q, 0), 1) * (s.length - 1);
  const lo = Math.floor(pos);
  const hi = Math.min(lo + 1, s.length - 1);
  return s[lo]! + (s[hi]! - s[lo]!) * (pos - lo);
}

function slope(ys: number[]): number {
  const n = ys.length;
  const mx = (n - 1) / 2;
  const my = ys.reduce((a, b) => a + b, 0) / n;
  let num = 0;
  let den = 0;
  ys.forEach((y, i) => {
    num += (i - mx) * (y - my);
    den += (i - mx) ** 2;
  });
  return den === 0 ? 0 : num / den;
}

/**
 * The trend over the shortest window in which it is real: for sub-windows of 5,
 * 10 and 20 steps (4 each, so 20 to 80 minutes; shorter while history is short),
 * the median of the four sub-window slopes gives the size (robust to a one-off step,
 * which lands in one sub-window) and the least-squares slope over the whole window
 * must be at least TREND_T standard errors above zero (jitter averages out over
 * a window, a slow rise does not; noisier workloads need longer windows). Not
 * real anywhere: the shortest window's slope, flagged. Undefined until eight steps.
 */
export function trendOf(m: WorkloadModel): { slope: number; real: boolean } | undefined {
  const s = series(m);
  const shortest = Math.min(TREND_WINDOW_STEPS[0]!, Math.floor(s.length / TREND_WINDOWS));
  if (shortest < MIN_TREND_WINDOW_STEPS) return undefined;
  let first: number | undefined;
  for (const per of [shortest, ...TREND_WINDOW_STEPS.filter((p) => p > shortest)]) {
    if (per * TREND_WINDOWS > s.length) break;
    const tail = s.slice(-per * TREND_WINDOWS);
    const slopes: number[] = [];
    for (let w = 0; w < TREND_WINDOWS; w++) slopes.push(slope(tail.slice(w * per, (w + 1) * per)));
    const med = median(slopes);
    first ??= med;
    if (med > 0 && tStat(tail) >= TREND_T) return { slope: med, real: true };
  }
  return { slope: first!, real: false };
}

/** Pods per step (see trendOf); undefined until eight steps are seen. */
export function trendSlope(m: WorkloadModel): number | undefined {
  return trendOf(m)?.slope;
}

/** The least-squares slope of ys over its standard error (Infinity for an exact rising line). */
function tStat(ys: number[]): number {
  const n = ys.length;
  const b = slope(ys);
  const mx = (n - 1) / 2;
  const my = ys.reduce((a, y) => a + y, 0) / n;
  let sxx = 0;
  let sse = 0;
  ys.forEach((y, i) => {
    sxx += (i - mx) ** 2;
    sse += (y - (my + b * (i - mx))) ** 2;
  });
  const se = Math.sqrt(sse / Math.max(1, n - 2) / sxx);
  return se === 0 ? (b > 0 ? Infinity : 0) : b / se;
}

/** The largest step maximum of the last `windowMs` (the step being filled included). */
export function recentMax(m: WorkloadModel, windowMs: number): number {
  const steps = Math.max(1, Math.ceil(windowMs / STEP_MS));
  return Math.max(...series(m).slice(-steps));
}

/** Robust spread (pods) of step-to-step changes around their median: the jitter. */
export function noiseBand(m: WorkloadModel): number {
  const s = series(m).slice(-(NOISE_STEPS + 1));
  const d: number[] = [];
  for (let i = 1; i < s.length; i++) d.push(s[i]! - s[i - 1]!);
  const med = median(d);
  const mad = median(d.map((x) => Math.abs(x - med)));
  return Math.max(1, NOISE_Z * 1.4826 * mad);
}

/** Profile value at time t, linear between slot centres; undefined where a slot was never seen. */
function profileAt(profile: readonly (number | null)[], period: number, t: number): number | undefined {
  const n = profile.length;
  const pos = ((((t % period) + period) % period) - SLOT_MS / 2) / SLOT_MS;
  const k0 = Math.floor(pos);
  const frac = pos - k0;
  const a = profile[((k0 % n) + n) % n];
  const b = profile[(((k0 + 1) % n) + n) % n];
  if (a === null || a === undefined || b === null || b === undefined) return undefined;
  return a + (b - a) * frac;
}

function seasonalPoint(m: WorkloadModel, profile: readonly (number | null)[], period: number, now: number, horizonMs: number): number | null {
  if (now - m.since < period) return null;
  const base = profileAt(profile, period, now);
  if (base === undefined) return null;
  let peak = base;
  const end = now + horizonMs;
  // The profile is piecewise linear: its maximum over the window is at an end or a slot centre.
  const firstCentre = Math.ceil((now - SLOT_MS / 2) / SLOT_MS) * SLOT_MS + SLOT_MS / 2;
  for (const t of [end, ...centres(firstCentre, end)]) {
    const v = profileAt(profile, period, t);
    if (v === undefined) return null;
    peak = Math.max(peak, v);
  }
  return m.last + Math.max(0, peak - base);
}

/** Noise bands a seasonal step must clear to be held in full (as TREND_T for a trend). */
const STEP_T = 3;

/**
 * A seasonal rise as the slots have it, in pods above the current count. Each slot
 * holds the highest count of its ten minutes on past periods, and that maximum may
 * come anywhere in the slot, so a rise shorter than a slot is flattened by the
 * interpolation of seasonalPoint. Two rises are not:
 * - into the slot of now: the count when the slot began plus the profile's rise from
 *   the slot before (anchored, as seasonalPoint is, so a lower level stays lower);
 * - into a higher slot the window (now, now + horizon] reaches.
 * Only a step of at least STEP_T noise bands counts: between slots of a noisy
 * workload the maxima differ by the jitter alone.
 */
function seasonalStepRise(m: WorkloadModel, profile: readonly (number | null)[], period: number, now: number, horizonMs: number, noise: number): number {
  const n = profile.length;
  const k = slotOf(now, period);
  const here = profile[k];
  if (here === null || here === undefined) return 0;
  const floor = STEP_T * noise;
  let rise = 0;
  const before = profile[(k - 1 + n) % n];
  const s = series(m);
  // Steps back to the one the slot began in (the current one when the slot has just begun).
  const back = Math.max(0, Math.round((m.stepStart - Math.floor(now / SLOT_MS) * SLOT_MS) / STEP_MS));
  if (before !== null && before !== undefined && here - before >= floor && back < s.length) {
    rise = s[s.length - 1 - back]! + (here - before) - m.last;
  }
  let peak = here;
  for (let t = Math.floor(now / SLOT_MS) * SLOT_MS + SLOT_MS; t <= now + horizonMs; t += SLOT_MS) {
    const v = profile[slotOf(t, period)];
    if (v !== null && v !== undefined) peak = Math.max(peak, v);
  }
  return Math.max(0, rise, peak - here >= floor ? peak - here : 0);
}

function centres(from: number, to: number): number[] {
  const out: number[] = [];
  for (let t = from; t <= to; t += SLOT_MS) out.push(t);
  return out;
}

/**
 * The level: the median of the last LEVEL_STEPS step maxima, once that many are seen.
 * Where the count only jitters around a level, the current count is one draw of the
 * jitter and a forecast anchored on it moves with every draw; the median does not, so
 * its errors (and the quantile margin on them) measure the jitter alone.
 */
function levelPoint(m: WorkloadModel): number | null {
  const s = series(m);
  return s.length < LEVEL_STEPS ? null : median(s.slice(-LEVEL_STEPS));
}

/** Each method's point forecast of the window maximum (METHODS order; null: not available yet). */
export function methodPoints(m: WorkloadModel, now: number, horizonMs: number): (number | null)[] {
  return METHODS.map((method) => {
    switch (method) {
      case 'naive': return m.last;
      case 'trend': {
        const t = trendOf(m);
        return t === undefined ? null : m.last + Math.max(0, (t.slope * horizonMs) / STEP_MS);
      }
      case 'daily': return seasonalPoint(m, m.daily, DAY_MS, now, horizonMs);
      case 'weekly': return seasonalPoint(m, m.weekly, WEEK_MS, now, horizonMs);
      case 'level': return levelPoint(m);
    }
  });
}

/**
 * The workload's demand over (now, now + horizon]: the chosen method's point
 * forecast and its value at `quantile` (0 < quantile < 1).
 */
export function forecast(m: WorkloadModel, now: number, horizonMs: number, quantile: number): Forecast {
  const points = methodPoints(m, now, horizonMs);
  const noise = noiseBand(m);
  let best = 0; // naive
  let bestScore = Infinity;
  METHODS.forEach((_, k) => {
    const sc = m.scores[k];
    if (points[k] === null || !sc || sc.n < MIN_SCORED) return;
    const score = sc.mae;
    if (score < bestScore) {
      best = k;
      bestScore = score;
    }
  });
  const point = points[best]!;
  const errs = m.errors[best] ?? [];
  const margin = errs.length >= MIN_SCORED ? Math.max(0, quantileOf(errs, quantile)) : noise;
  const method = METHODS[best]!;
  const naive = m.scores[0]!;
  const real = method === 'trend' ? trendOf(m)?.real === true
    : method === 'daily' || method === 'weekly' ? naive.n >= MIN_SCORED && bestScore <= SEASONAL_GAIN * naive.mae
      : false;
  const stepRise = !real ? 0 : method === 'daily' ? seasonalStepRise(m, m.daily, DAY_MS, now, horizonMs, noise)
    : method === 'weekly' ? seasonalStepRise(m, m.weekly, WEEK_MS, now, horizonMs, noise) : 0;
  return {
    current: m.last, point, upper: Math.max(point, point + margin, stepRise > 0 ? m.last + stepRise : 0), method,
    significant: real && Math.max(point - m.last, stepRise) >= 0.5, noise,
  };
}
