import type { SchedulingPod } from '../scheduling/scheduling-pod.js';
import { type BootSample, bootHorizonMs, observeBoot } from './boot-horizon.js';
import { type Forecast, forecast, methodPoints, recentMax } from './forecast.js';
import { observeCount } from './model.js';
import { DEFAULT_BOOT_HORIZON_MS } from './settings.js';
import { type SpareSample, type SpareTargets, heldTarget, holdTarget, spareWithin } from './spare.js';
import type { CronJobSignal, HpaSignal, WorkloadSignal } from './signals.js';
import { type HysteresisEntry, type PredictionState, boundState } from './state.js';
import { type PredictionPool, predictedPods, unitOf } from './virtual-pods.js';

/**
 * One prediction pass, pure: fold the observations into the state, forecast each
 * workload over its pool's node-boot horizon, and turn the excess into predicted
 * pods under the pool's settings and the hysteresis.
 */

export interface Observation {
  at: number;
  /** Every workload with pods now; a known workload missing here has none. */
  workloads: readonly Pick<WorkloadSignal, 'key' | 'count'>[];
  /** Boot durations seen (duplicates are ignored). */
  boots?: readonly BootSample[];
  /** Horizon the forecasters are scored at; default 4 min. */
  horizonMs?: number;
}

/** Folds one observation into the state (pure; the input state is not changed). */
export function observe(state: PredictionState, obs: Observation): PredictionState {
  const horizonMs = obs.horizonMs ?? 4 * 60_000;
  const workloads = { ...state.workloads };
  const seen = new Set<string>();
  for (const w of obs.workloads) {
    seen.add(w.key);
    workloads[w.key] = observeCount(workloads[w.key], obs.at, w.count, horizonMs, methodPoints);
  }
  for (const [key, m] of Object.entries(workloads)) if (!seen.has(key)) workloads[key] = observeCount(m, obs.at, 0, horizonMs, methodPoints);
  let boot = state.boot;
  if (obs.boots?.length) {
    boot = { ...boot };
    for (const b of obs.boots) boot[b.groupId] = observeBoot(boot[b.groupId], b.machine, b.ms);
  }
  return boundState({ ...state, workloads, boot });
}

/** A workload's forecast from the state, or undefined when it was never observed. */
export function forecastWorkload(state: PredictionState, key: string, now: number, horizonMs: number, quantile: number): Forecast | undefined {
  const m = state.workloads[key];
  return m ? forecast(m, now, horizonMs, quantile) : undefined;
}

export interface PredictionInput {
  now: number;
  workloads: readonly WorkloadSignal[];
  cronJobs?: readonly CronJobSignal[];
  hpas?: readonly HpaSignal[];
  boots?: readonly BootSample[];
  /** NodePools and their groups; a workload uses the first enabled pool with a group it fits. */
  pools: readonly PredictionPool[];
  /** Boot horizon of a group with too few observed boots. Default 3 min. */
  defaultBootHorizonMs?: number;
  /** Provisioning latency on top of the boot horizon (batching, resync). Default 60 s. */
  leadMs?: number;
  /**
   * How long a rise must last before capacity is held for it. Default 2 min. Not for known
   * schedules or HPAs (certain), nor for a daily or weekly profile's rise: its significance
   * is a track record over past days that beats the naive forecast, not this minute's
   * reading, and waiting on it delays a rise the profile foresaw by the sustain itself.
   */
  sustainMs?: number;
  /** A pool acts only when its sustained excess is at least this many node-equivalents. Default 1. */
  minNodeEquivalents?: number;
  /**
   * Spare for short-term demand (spare.ts): every workload's forecast margin is held, not
   * only a real rise's, each workload's target held at its highest of the last `spareHoldMs`
   * (so capacity does not follow the jitter down). Default true; false: only real rises.
   */
  spare?: boolean;
  /** How long a workload's highest target is held. Default: its horizon (see spare.ts). */
  spareHoldMs?: number;
  /** How long the Disruptor keeps capacity for a workload's highest target. Default 10 min (see spare.ts). */
  keepHoldMs?: number;
}

export type DecisionReason =
  | 'predicted' | 'spare' | 'not-rising' | 'sustaining' | 'below-one-node' | 'capped' | 'opted-out' | 'no-pool' | 'no-template';

export interface PredictionDecision {
  key: string;
  pool?: string;
  forecast: Forecast;
  horizonMs: number;
  /** Pods wanted beyond current demand at the quantile. */
  excess: number;
  /** Predicted pods created, and their node-equivalents and cost per hour. */
  pods: number;
  nodes: number;
  costPerHour: number;
  reason: DecisionReason;
}

export interface PredictionOutput {
  state: PredictionState;
  /** Predicted pods to provision for (the Provisioner's extraPendingPods). */
  pods: SchedulingPod[];
  /** Predicted pods whose capacity is kept (the Disruptor's): `pods` and more (spare.ts). */
  keepPods: SchedulingPod[];
  decisions: PredictionDecision[];
}

/** How long the Disruptor keeps capacity for a workload's highest target: Cluster Autoscaler's scale-down-unneeded-time. */
export const DEFAULT_KEEP_HOLD_MS = 10 * 60_000;

/**
 * Without a real rise, spare covers jitter: the forecast's quantile, but at most
 * JITTER_BANDS noise bands above its point. The quantile comes from the method's past
 * errors, and until there are many, one step change (a flash crowd) among them sets it
 * for hours: that is a rise, and rises are the significance test's to act on.
 */
export const JITTER_BANDS = 2;

/** A rise foreseen by a daily or weekly profile (forecast.ts: real by its track record over past days). */
function seasonal(f: Forecast): boolean {
  return f.method === 'daily' || f.method === 'weekly';
}

function spareTarget(f: Forecast): number {
  return f.significant ? f.upper : Math.min(f.upper, f.point + JITTER_BANDS * f.noise);
}

/** A known run this long overdue (missed, or the controller is behind) is no longer expected. */
const STALE_RUN_MS = 10 * 60_000;

function scheduleForecast(c: CronJobSignal, now: number, horizonMs: number): Forecast {
  const due = c.nextRun !== undefined && c.nextRun <= now + horizonMs && c.nextRun >= now - STALE_RUN_MS;
  const pods = due ? c.pods : 0;
  return { current: 0, point: pods, upper: pods, method: 'schedule', significant: pods > 0, noise: 0 };
}

interface Candidate {
  key: string;
  pool?: PredictionPool;
  unit?: { share: number; price: number };
  template?: SchedulingPod;
  forecast: Forecast;
  horizonMs: number;
  excess: number;
  certain: boolean;
  optOut: boolean;
}

/** One pass: observe, forecast, act. Deterministic for the same state and input. */
export function evaluatePrediction(state: PredictionState, input: PredictionInput): PredictionOutput {
  const { now } = input;
  const lead = input.leadMs ?? 60_000;
  const sustainMs = input.sustainMs ?? 120_000;
  const minNodes = input.minNodeEquivalents ?? 1;
  const fallback = input.defaultBootHorizonMs ?? DEFAULT_BOOT_HORIZON_MS;

  // Boot samples first: they set the horizon the workloads are scored at.
  let s = state;
  if (input.boots?.length) s = observe(s, { at: now, workloads: Object.entries(s.workloads).map(([key, m]) => ({ key, count: m.last })), boots: input.boots });
  const poolHorizon = new Map<string, number>();
  for (const p of input.pools) {
    const boots = p.groups.map((g) => bootHorizonMs(s.boot[g.id], fallback));
    poolHorizon.set(p.name, (boots.length ? Math.max(...boots) : fallback) + lead);
  }
  const maxHorizon = Math.max(fallback + lead, ...poolHorizon.values());
  s = observe(s, { at: now, workloads: input.workloads, horizonMs: maxHorizon });

  const poolFor = (tpl: SchedulingPod | undefined) => {
    if (!tpl) return undefined;
    for (const p of input.pools) {
      if (!p.settings.enabled) continue;
      const u = unitOf(tpl, p);
      if (u) return { pool: p, unit: { share: u.share, price: u.group.pricePerHour } };
    }
    return undefined;
  };

  const candidates: Candidate[] = [];
  const hpaByKey = new Map((input.hpas ?? []).map((h) => [h.key, h]));
  for (const w of input.workloads) {
    if (w.key.startsWith('CronJob/')) continue; // known schedules below
    const pu = poolFor(w.template);
    const horizonMs = pu ? poolHorizon.get(pu.pool.name)! : maxHorizon;
    let f = forecast(s.workloads[w.key]!, now, horizonMs, pu?.pool.settings.quantile ?? 0.9);
    const hpa = hpaByKey.get(w.key);
    let certain = false;
    if (hpa && hpa.desired > f.point) {
      f = { ...f, point: hpa.desired, upper: Math.max(f.upper, hpa.desired), method: 'hpa', significant: true };
      certain = true;
    }
    candidates.push({
      key: w.key, ...pu, ...(w.template ? { template: w.template } : {}), forecast: f, horizonMs,
      excess: Math.max(0, Math.ceil(f.upper - w.count - 1e-9)), certain, optOut: w.optOut,
    });
  }
  for (const c of input.cronJobs ?? []) {
    const pu = poolFor(c.template);
    const horizonMs = pu ? poolHorizon.get(pu.pool.name)! : maxHorizon;
    const f = scheduleForecast(c, now, horizonMs);
    candidates.push({ key: c.key, ...pu, ...(c.template ? { template: c.template } : {}), forecast: f, horizonMs, excess: f.upper, certain: true, optOut: c.optOut });
  }
  candidates.sort((a, b) => Number(b.certain) - Number(a.certain) || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));

  // Spare (spare.ts): each workload's targets held over the hold and keep windows.
  const spareOn = input.spare ?? true;
  const spare: Record<string, SpareSample[]> = {};
  const targets = new Map<string, SpareTargets>();
  const keepHoldMs = input.keepHoldMs ?? DEFAULT_KEEP_HOLD_MS;
  if (spareOn) {
    for (const c of candidates) {
      if (c.key.startsWith('CronJob/')) continue;
      const holdMs = input.spareHoldMs ?? c.horizonMs;
      const held = holdTarget(s.spare[c.key], now, Math.max(holdMs, keepHoldMs), spareTarget(c.forecast));
      spare[c.key] = held;
      const m = s.workloads[c.key];
      targets.set(c.key, {
        current: c.forecast.current,
        // A dip within the jitter band comes back; a fall beyond it is real, and keeping
        // capacity for it would be spare like any other, so the budget bounds it. The band
        // is around the forecast's point (pods now when higher), not one sample: on heavy
        // jitter one low sample is often more than a band down, and judged against itself
        // it turned the workload's level into budgeted spare, so consolidation removed the
        // nodes the next upswing needed (churn, and waits on a flat service). A real fall
        // moves the point.
        level: Math.max(c.forecast.current, Math.min(m ? recentMax(m, keepHoldMs) : 0, Math.max(c.forecast.current, c.forecast.point) + c.forecast.noise)),
        provision: heldTarget(held, now, holdMs),
        keep: heldTarget(held, now, Math.max(holdMs, keepHoldMs)),
      });
    }
  }
  const spareOf = (key: string) => {
    const t = targets.get(key);
    return t ? Math.max(0, Math.ceil(t.provision - t.current - 1e-9)) : 0;
  };

  // Hysteresis: rising (a real rise with excess) for sustainMs, then engaged until quiet for sustainMs.
  const hysteresis: Record<string, HysteresisEntry> = {};
  const decisions: PredictionDecision[] = [];
  const wanted: Candidate[] = [];
  /** Candidates that hold spare only (not a real rise, or one not acted on yet), with why. */
  const spareWanted: { c: Candidate; why: DecisionReason }[] = [];
  const decide = (c: Candidate, reason: DecisionReason, pods = 0, nodes = 0, costPerHour = 0) => {
    decisions.push({ key: c.key, ...(c.pool ? { pool: c.pool.name } : {}), forecast: c.forecast, horizonMs: c.horizonMs, excess: c.excess, pods, nodes, costPerHour, reason });
  };
  const actionable = (c: Candidate): DecisionReason | undefined => (
    c.optOut ? 'opted-out' : !c.template ? 'no-template' : !c.pool || !c.unit ? 'no-pool' : undefined);
  const orSpare = (c: Candidate, why: DecisionReason) => {
    const t = targets.get(c.key);
    if (t && t.keep > t.current && !actionable(c)) spareWanted.push({ c, why });
    else decide(c, why);
  };
  for (const c of candidates) {
    const prev = s.hysteresis[c.key];
    const rising = c.forecast.significant && c.excess > 0;
    if (!rising) {
      if (prev?.engaged) {
        const quietSince = prev.quietSince ?? now;
        if (now - quietSince < sustainMs) hysteresis[c.key] = { ...prev, quietSince };
      }
      orSpare(c, 'not-rising');
      continue;
    }
    const entry: HysteresisEntry = {
      risingSince: prev?.risingSince ?? now, risingFrom: Math.min(prev?.risingFrom ?? c.forecast.current, c.forecast.current), engaged: prev?.engaged ?? false,
    };
    hysteresis[c.key] = entry;
    const cannot = actionable(c);
    if (cannot) decide(c, cannot);
    else if (!entry.engaged && !c.certain && !seasonal(c.forecast) && now - entry.risingSince < sustainMs) orSpare(c, 'sustaining');
    else wanted.push(c);
  }

  // Per pool: act on real rises only once the rise so far plus the forecast excess reach
  // one node-equivalent (a slow rise qualifies after a while, jitter never: it is not
  // rising); hold the spare of the rest within the pool's maxSparePercent; all within
  // maxPredictedNodes / maxExtraCostPerHour, real rises and known runs first.
  const pods: SchedulingPod[] = [];
  /** Per workload: pods the Disruptor keeps capacity for beyond those provisioned for. */
  const keepExtra = new Map<string, number>();
  for (const pool of input.pools) {
    const mine = wanted.filter((c) => c.pool === pool);
    if (mine.length === 0 && !spareWanted.some((x) => x.c.pool === pool)) continue;
    const total = mine.reduce((a, c) => a + (c.forecast.current - hysteresis[c.key]!.risingFrom + c.excess) * c.unit!.share, 0);
    const anyEngaged = mine.some((c) => s.hysteresis[c.key]?.engaged);
    const acting = mine.length > 0 && (total >= minNodes || anyEngaged);
    if (!acting) for (const c of mine) orSpare(c, 'below-one-node');
    const rises = acting ? mine : [];
    const rest = spareWanted.filter((x) => x.c.pool === pool);
    let nodesLeft = pool.settings.maxPredictedNodes ?? Infinity;
    let costLeft = pool.settings.maxExtraCostPerHour ?? Infinity;
    const hold = (c: Candidate, want: number, reason: DecisionReason) => {
      const { share, price } = c.unit!;
      const byNodes = share > 0 ? Math.floor(nodesLeft / share + 1e-9) : want;
      const byCost = share * price > 0 ? Math.floor(costLeft / (share * price) + 1e-9) : want;
      const n = Math.max(0, Math.min(want, byNodes, byCost));
      nodesLeft -= n * share;
      costLeft -= n * share * price;
      pods.push(...predictedPods(c.key, c.template!, n, reason === 'predicted'));
      decide(c, n < c.excess && reason === 'predicted' ? 'capped' : reason, n, n * share, n * share * price);
    };
    for (const c of rises) {
      hysteresis[c.key] = { ...hysteresis[c.key]!, engaged: true };
      hold(c, Math.max(c.excess, spareOf(c.key)), 'predicted');
    }
    if (rest.length === 0) continue;
    // Spare's budget: a percent of what the demand the pool's pods held lately costs.
    const costPerPod = (c: Candidate) => c.unit!.share * c.unit!.price;
    const levelCost = candidates.filter((c) => c.pool === pool && c.unit).reduce((a, c) => a + (targets.get(c.key)?.level ?? c.forecast.current) * costPerPod(c), 0);
    const budget = pool.settings.maxSparePercent === undefined ? Infinity : (pool.settings.maxSparePercent / 100) * levelCost;
    const allowed = spareWithin(rest.map((x) => ({ targets: targets.get(x.c.key)!, costPerPod: costPerPod(x.c) })), budget);
    rest.forEach((x, i) => {
      const { provision, keep, capped } = allowed[i]!;
      keepExtra.set(x.c.key, keep - provision);
      if (provision <= 0) decide(x.c, capped ? 'capped' : x.why);
      else hold(x.c, provision, capped ? 'capped' : 'spare');
    });
  }
  return { state: { ...s, hysteresis, spare }, pods, keepPods: keepPods(pods, decisions, candidates, keepExtra, input.pools), decisions };
}

/**
 * The Disruptor's predicted pods: the Provisioner's, and each workload's keep extra
 * (spare.ts) within what the absolute caps (maxPredictedNodes, maxExtraCostPerHour)
 * leave.
 */
function keepPods(
  pods: readonly SchedulingPod[], decisions: readonly PredictionDecision[], candidates: readonly Candidate[],
  keepExtra: ReadonlyMap<string, number>, pools: readonly PredictionPool[],
): SchedulingPod[] {
  const out = [...pods];
  if (keepExtra.size === 0) return out;
  const held = new Map(decisions.map((d) => [d.key, d.pods]));
  for (const pool of pools) {
    const ofPool = decisions.filter((d) => d.pool === pool.name);
    let nodesLeft = (pool.settings.maxPredictedNodes ?? Infinity) - ofPool.reduce((a, d) => a + d.nodes, 0);
    let costLeft = (pool.settings.maxExtraCostPerHour ?? Infinity) - ofPool.reduce((a, d) => a + d.costPerHour, 0);
    for (const c of candidates) {
      const extra = keepExtra.get(c.key) ?? 0;
      if (c.pool !== pool || extra <= 0) continue;
      const { share, price } = c.unit!;
      const n = Math.max(0, Math.min(extra, share > 0 ? Math.floor(nodesLeft / share + 1e-9) : extra, share * price > 0 ? Math.floor(costLeft / (share * price) + 1e-9) : extra));
      nodesLeft -= n * share;
      costLeft -= n * share * price;
      const from = held.get(c.key) ?? 0;
      out.push(...predictedPods(c.key, c.template!, from + n).slice(from));
    }
  }
  return out;
}
