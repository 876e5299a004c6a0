import type { BootModel } from './boot-horizon.js';
import type { WorkloadModel } from './model.js';
import type { SpareSample } from './spare.js';

/**
 * Everything prediction remembers, as one JSON-serializable value: per-workload
 * models, per-node-group boot samples, and the hysteresis of acting. The leader
 * persists it and reloads it on start (a restart must not forget a weekly
 * pattern). Bounded: a model is at most MAX_MODEL_BYTES by construction (fixed-size
 * arrays of rounded numbers, tested), and at most MAX_WORKLOADS are kept, the
 * least recently active dropped first, so the whole stays under MAX_STATE_BYTES.
 */
export interface PredictionState {
  version: 1;
  workloads: Record<string, WorkloadModel>;
  boot: Record<string, BootModel>;
  hysteresis: Record<string, HysteresisEntry>;
  /** Per workload, its held spare targets (spare.ts). */
  spare: Record<string, readonly SpareSample[]>;
}

/**
 * A workload's acting state: rising since when and from which pod count, engaged
 * (holding predicted pods), quiet (no longer rising) since.
 */
export interface HysteresisEntry {
  risingSince: number;
  risingFrom: number;
  engaged: boolean;
  quietSince?: number;
}

export const MAX_MODEL_BYTES = 64 * 1024;
export const MAX_STATE_BYTES = 5 * 1024 * 1024;
export const MAX_WORKLOADS = 300;
export const MAX_BOOT_GROUPS = 200;
/** Held spare targets a workload keeps at most (one per pass within a horizon; far fewer in practice). */
export const MAX_SPARE_SAMPLES = 256;

export function emptyPredictionState(): PredictionState {
  return { version: 1, workloads: {}, boot: {}, hysteresis: {}, spare: {} };
}

/** Keeps at most MAX_WORKLOADS models: drops those whose last observation is oldest. */
export function boundState(state: PredictionState): PredictionState {
  const keys = Object.keys(state.workloads);
  if (keys.length <= MAX_WORKLOADS && Object.keys(state.boot).length <= MAX_BOOT_GROUPS) return state;
  const keep = keys.sort((a, b) => state.workloads[b]!.lastAt - state.workloads[a]!.lastAt || (a < b ? -1 : 1)).slice(0, MAX_WORKLOADS);
  const workloads: Record<string, WorkloadModel> = {};
  for (const k of keep) workloads[k] = state.workloads[k]!;
  const boot: Record<string, BootModel> = {};
  for (const k of Object.keys(state.boot).sort().slice(0, MAX_BOOT_GROUPS)) boot[k] = state.boot[k]!;
  const hysteresis: Record<string, HysteresisEntry> = {};
  for (const [k, v] of Object.entries(state.hysteresis)) if (workloads[k] || k.startsWith('CronJob/')) hysteresis[k] = v;
  const spare: Record<string, readonly SpareSample[]> = {};
  for (const [k, v] of Object.entries(state.spare)) if (workloads[k]) spare[k] = v;
  return { ...state, workloads, boot, hysteresis, spare };
}

export function serializePredictionState(state: PredictionState): string {
  return JSON.stringify(state);
}

export class PredictionStateError extends Error {}

const isNum = (x: unknown): x is number => typeof x === 'number' && Number.isFinite(x);
const isNumArray = (x: unknown, nullable = false): boolean => Array.isArray(x) && x.every((v) => isNum(v) || (nullable && v === null));

function validModel(m: unknown): m is WorkloadModel {
  const o = m as Partial<WorkloadModel> | null;
  return !!o && o.version === 1 && isNum(o.since) && isNum(o.last) && isNum(o.lastAt) && isNum(o.stepStart) && isNum(o.stepMax)
    && isNum(o.slotStart) && isNum(o.slotMax) && isNum(o.horizonMs)
    && isNumArray(o.recent) && isNumArray(o.daily, true) && isNumArray(o.weekly, true)
    && Array.isArray(o.errors) && o.errors.every((e) => isNumArray(e))
    && Array.isArray(o.scores) && o.scores.every((x) => isNum(x?.n) && isNum(x?.mae))
    && Array.isArray(o.checks) && o.checks.every((c) => isNum(c?.at) && isNum(c?.due) && isNumArray(c?.points, true));
}

/**
 * Parses persisted state. Throws PredictionStateError on anything that is not a
 * state this version wrote (too big, wrong shape); a model that does not validate
 * is dropped alone, so one bad entry does not forget the rest.
 */
export function parsePredictionState(text: string): PredictionState {
  if (text.length > MAX_STATE_BYTES) throw new PredictionStateError(`prediction state is ${text.length} bytes, over ${MAX_STATE_BYTES}`);
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new PredictionStateError(`prediction state is not JSON: ${(err as Error).message}`);
  }
  const o = raw as Partial<PredictionState> | null;
  if (!o || typeof o !== 'object' || o.version !== 1 || typeof o.workloads !== 'object' || o.workloads === null) {
    throw new PredictionStateError('prediction state: not a version 1 state');
  }
  const state = emptyPredictionState();
  for (const [k, m] of Object.entries(o.workloads)) if (validModel(m)) state.workloads[k] = m;
  for (const [k, b] of Object.entries(o.boot ?? {})) {
    const samples = (b as BootModel | null)?.samples;
    if (Array.isArray(samples) && samples.every((s) => typeof s?.machine === 'string' && isNum(s?.ms))) state.boot[k] = { samples };
  }
  for (const [k, h] of Object.entries(o.hysteresis ?? {})) {
    const e = h as HysteresisEntry | null;
    if (e && isNum(e.risingSince) && isNum(e.risingFrom) && typeof e.engaged === 'boolean') state.hysteresis[k] = e;
  }
  // Absent in states saved before spare existed: it is rebuilt within one horizon.
  for (const [k, v] of Object.entries(o.spare ?? {})) {
    if (Array.isArray(v) && v.length <= MAX_SPARE_SAMPLES && v.every((x: Partial<SpareSample> | null) => isNum(x?.at) && isNum(x?.target))) state.spare[k] = v;
  }
  return boundState(state);
}
