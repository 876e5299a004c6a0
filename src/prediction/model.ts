/**
 * One workload's demand history, as a small JSON-serializable value updated by a
 * pure `observeCount`. Observations (the workload's pod count at a time) are folded
 * into one-minute steps holding the step's maximum: capacity has to cover the peak,
 * not the average. Per step it keeps
 * - the recent steps (trend and noise),
 * - daily and weekly profiles of ten-minute slots (seasonality), each slot an
 *   exponentially weighted mean over periods of the slot's maximum,
 * - the signed errors each forecaster made at the scoring horizon, so the forecast
 *   can choose the method that works for this workload and set its quantile margin
 *   from its own past errors (src/prediction/forecast.ts).
 * Arrays are never changed in place: an update copies what it changes, so a model
 * handed out stays valid (and cheap to share between observations within a step).
 */

export const STEP_MS = 60_000;
export const SLOT_MS = 10 * 60_000;
export const DAY_MS = 86_400_000;
export const WEEK_MS = 7 * DAY_MS;
/** Three hours of one-minute steps. */
export const RECENT_STEPS = 180;
/** Errors kept per forecaster. */
export const ERROR_SAMPLES = 128;
/** Steps a method's score remembers (a day of one-minute steps). */
export const SCORE_MEMORY = DAY_MS / STEP_MS;
/** A gap longer than this (no observation) breaks the recent series: the trend restarts. */
const MAX_GAP_STEPS = 30;
/** Weight of the newest period in a seasonal slot. */
const SEASON_ALPHA = 0.5;
/** Default horizon forecasts are scored at (the node-boot horizon plus provisioning). */
export const DEFAULT_SCORING_HORIZON_MS = 4 * 60_000;

/** The point forecasters a workload's history chooses from (see forecast.ts); new ones go last (saved models index errors by position). */
export const METHODS = ['naive', 'trend', 'daily', 'weekly', 'level'] as const;
export type Method = (typeof METHODS)[number];

export interface WorkloadModel {
  version: 1;
  /** First observation (epoch ms). */
  since: number;
  /** Latest observed pod count, and when. */
  last: number;
  lastAt: number;
  /** Start of the step being filled, and the largest count seen in it so far. */
  stepStart: number;
  stepMax: number;
  /** Maxima of completed steps, oldest first, contiguous up to stepStart. */
  recent: readonly number[];
  /** The slot being filled (start ms) and its maximum so far. */
  slotStart: number;
  slotMax: number;
  /** Seasonal profiles: slot -> weighted maximum, or null (never seen). */
  daily: readonly (number | null)[];
  weekly: readonly (number | null)[];
  /** The horizon the forecasters are scored at. */
  horizonMs: number;
  /** Point forecasts waiting to be scored: made at `at` for the window (at, due]; one per method (null: not available). */
  checks: readonly { at: number; due: number; points: readonly (number | null)[] }[];
  /** Per method (METHODS order): actual window maximum minus the forecast, newest last. */
  errors: readonly (readonly number[])[];
  /**
   * Per method: scored forecasts and their mean absolute error, weighted towards the
   * last day (weight max(1/n, 1/SCORE_MEMORY)): a rise that happens once a day stays
   * in the score through the quiet hours that follow.
   */
  scores: readonly { n: number; mae: number }[];
}

export function newWorkloadModel(at: number, count: number, horizonMs = DEFAULT_SCORING_HORIZON_MS): WorkloadModel {
  const stepStart = Math.floor(at / STEP_MS) * STEP_MS;
  return {
    version: 1, since: at, last: count, lastAt: at, stepStart, stepMax: count, recent: [],
    slotStart: Math.floor(at / SLOT_MS) * SLOT_MS, slotMax: count,
    daily: new Array<number | null>(DAY_MS / SLOT_MS).fill(null),
    weekly: new Array<number | null>(WEEK_MS / SLOT_MS).fill(null),
    horizonMs, checks: [], errors: METHODS.map(() => []), scores: METHODS.map(() => ({ n: 0, mae: 0 })),
  };
}

const round2 = (x: number) => Math.round(x * 100) / 100;

/** Slot index of a time in a profile of `period`. */
export function slotOf(t: number, period: number): number {
  return Math.floor((((t % period) + period) % period) / SLOT_MS);
}

/**
 * The model after seeing `count` pods at `at`. Out-of-order observations (older
 * than the latest) are ignored. `forecastPoints` gives each method's point forecast
 * of the window maximum at a step boundary; it is passed in (forecast.ts) so this
 * file holds state keeping only.
 */
export function observeCount(
  model: WorkloadModel | undefined, at: number, count: number, horizonMs: number,
  forecastPoints: (m: WorkloadModel, now: number, horizonMs: number) => readonly (number | null)[],
): WorkloadModel {
  if (!Number.isFinite(count) || count < 0 || !Number.isFinite(at)) return model ?? newWorkloadModel(at, 0, horizonMs);
  if (!model) return newWorkloadModel(at, Math.round(count), horizonMs);
  if (at < model.lastAt) return model;
  count = Math.round(count);
  let m = model.horizonMs === horizonMs ? model : { ...model, horizonMs };
  if (at >= m.stepStart + STEP_MS) m = advanceSteps(m, at, forecastPoints);
  return { ...m, last: count, lastAt: at, stepMax: Math.max(m.stepMax, count), slotMax: Math.max(m.slotMax, count) };
}

function advanceSteps(
  model: WorkloadModel, at: number,
  forecastPoints: (m: WorkloadModel, now: number, horizonMs: number) => readonly (number | null)[],
): WorkloadModel {
  const target = Math.floor(at / STEP_MS) * STEP_MS;
  const gapSteps = (target - model.stepStart) / STEP_MS;
  let recent = [...model.recent];
  let daily = model.daily;
  let weekly = model.weekly;
  let slotStart = model.slotStart;
  let slotMax = model.slotMax;
  // Models saved before a method existed have no errors or score for it yet.
  const errors = METHODS.map((_, k) => [...(model.errors[k] ?? [])]);
  const scores = METHODS.map((_, k) => ({ ...(model.scores[k] ?? { n: 0, mae: 0 }) }));
  let checks = [...model.checks];
  // Between observations the count held at `last` (pod counts are levels).
  const fill = Math.min(gapSteps, MAX_GAP_STEPS);
  if (gapSteps > MAX_GAP_STEPS) recent = [];
  for (let i = 0; i < fill; i++) {
    const stepEnd = model.stepStart + (i + 1) * STEP_MS;
    recent.push(i === 0 ? model.stepMax : model.last);
    if (recent.length > RECENT_STEPS) recent.splice(0, recent.length - RECENT_STEPS);
    // Score the forecasts whose window has ended.
    const due = checks.filter((c) => c.due <= stepEnd);
    if (due.length) {
      checks = checks.filter((c) => c.due > stepEnd);
      for (const c of due) {
        if (recent.length === 0) continue;
        const steps = Math.max(1, Math.round((c.due - c.at) / STEP_MS));
        const actual = Math.max(...recent.slice(-steps));
        c.points.forEach((p, k) => {
          if (p === null) return;
          const e = errors[k]!;
          e.push(round2(actual - p));
          const sc = scores[k]!;
          sc.n++;
          sc.mae = round2(sc.mae + (Math.abs(actual - p) - sc.mae) * Math.max(1 / sc.n, 1 / SCORE_MEMORY));
          if (e.length > ERROR_SAMPLES) e.splice(0, e.length - ERROR_SAMPLES);
        });
      }
    }
    // Seasonal slots close on their boundary.
    if (stepEnd >= slotStart + SLOT_MS) {
      daily = blend(daily, slotOf(slotStart, DAY_MS), slotMax);
      weekly = blend(weekly, slotOf(slotStart, WEEK_MS), slotMax);
      slotStart = Math.floor(stepEnd / SLOT_MS) * SLOT_MS;
      slotMax = model.last;
    }
  }
  const next: WorkloadModel = {
    ...model, stepStart: target, stepMax: model.last, recent, daily, weekly, slotStart: gapSteps > MAX_GAP_STEPS ? Math.floor(target / SLOT_MS) * SLOT_MS : slotStart,
    slotMax, errors, scores, checks,
  };
  // A new forecast to score at every step boundary (the checks stay few: horizon / step).
  const points = forecastPoints(next, target, model.horizonMs);
  if (points.some((p) => p !== null)) {
    next.checks = [...checks, { at: target, due: target + model.horizonMs, points: points.map((p) => (p === null ? null : round2(p))) }];
  }
  return next;
}

function blend(profile: readonly (number | null)[], slot: number, value: number): readonly (number | null)[] {
  const out = [...profile];
  const old = out[slot];
  out[slot] = round2(old === null || old === undefined ? value : SEASON_ALPHA * value + (1 - SEASON_ALPHA) * old);
  return out;
}
