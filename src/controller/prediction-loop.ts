import type { KubernetesObject, V1Pod } from '@kubernetes/client-node';
import { NodePoolError, parseNodePoolOnce } from '../api/nodepool.js';
import { BootObserver } from '../cluster/boot-observer.js';
import { SnapshotBuilder } from '../cluster/snapshot-builder.js';
import type { ClusterObjects } from '../cluster/objects.js';
import { rolloutSignals } from '../cluster/rollout-signals.js';
import type { ClusterStateSource } from '../cluster/state.js';
import { predictionInput } from '../prediction/cluster-input.js';
import { type PredictionDecision, type PredictionInput, evaluatePrediction } from '../prediction/predictor.js';
import { DEFAULT_PREDICTION_SETTINGS, PREDICTION_OPT_OUT_ANNOTATION, PREDICTION_OPT_OUT_VALUE, type PredictionSettings } from '../prediction/settings.js';
import { workloadKeyOf } from '../prediction/signals.js';
import {
  type PredictionState, PredictionStateError, emptyPredictionState, parsePredictionState, serializePredictionState,
} from '../prediction/state.js';
import type { Clock } from '../provisioning/clock.js';
import type { DemandIntake } from '../provisioning/demand-intake.js';
import type { SchedulingPod } from '../scheduling/scheduling-pod.js';
import type { ConfigMapStateStore } from './model-store.js';
import { type ProvisionedForPatch, provisionedForPatches } from './provisioned-for.js';

/**
 * Prediction in the live cluster (issue 13), the thin shell around the pure
 * src/prediction: every `intervalMs` the leader reads the informer cache (pods,
 * CronJobs, HPAs, Deployments, StatefulSets, Machines, Nodes, NodePools), drains the
 * webhook's demand intake, times node boots, and runs one evaluatePrediction pass.
 * The predicted pods it returns are the Provisioner's and the Disruptor's
 * `extraPendingPods`. The model is loaded from the ConfigMap store when leading
 * starts and saved every `saveIntervalMs` and on stop (ADRs 0092, 0093).
 */

export interface PredictionLoopOptions {
  defaultBootHorizonMs: number;
  /** Default 10 s: well inside any node-boot horizon. */
  intervalMs?: number;
  /** Default 2 min. */
  saveIntervalMs?: number;
}

export interface PredictionPass {
  at: number;
  decisions: PredictionDecision[];
  /** Pods per workload now (what the forecast is judged against). */
  actual: Map<string, number>;
  pods: number;
  /** Node boots timed in this pass. */
  boots: number;
  /** The forecast quantile of each NodePool a decision names. */
  quantiles: Record<string, number>;
  /** Empty nodes to mark headroom.dev/provisioned-for the workloads they were brought up for. */
  provisionedFor: ProvisionedForPatch[];
}

export interface PredictionLoopDeps {
  state: ClusterStateSource;
  clock: Clock;
  store?: ConfigMapStateStore;
  intake?: DemandIntake;
  /** Leadership: aborted when the lease is lost (no save after that). */
  signal?: AbortSignal;
  log: (msg: string) => void;
  /** The predicted pods changed: new demand for the Provisioner. */
  onPredictedChange?: () => void;
  onPass?: (pass: PredictionPass) => void;
  /** Where its snapshots come from: the controller's, shared with its loops. Default: its own. */
  snapshots?: SnapshotBuilder;
}

const SORT = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** NodePool name -> its prediction settings: the defaults (on) without a block or a pool, off for an invalid pool (nothing it says is trusted). */
export function poolSettings(nodePools: readonly KubernetesObject[]): (pool: string | undefined) => PredictionSettings {
  const settings = new Map<string, PredictionSettings>();
  for (const obj of nodePools) {
    try {
      const p = parseNodePoolOnce(obj);
      if (p.prediction) settings.set(p.name, p.prediction);
    } catch (err) {
      if (!(err instanceof NodePoolError)) throw err;
      if (obj.metadata?.name) settings.set(obj.metadata.name, { ...DEFAULT_PREDICTION_SETTINGS, enabled: false });
    }
  }
  return (pool) => (pool !== undefined && settings.get(pool)) || DEFAULT_PREDICTION_SETTINGS;
}

/**
 * The controller's additions to the pure prediction input:
 * - Deployments and StatefulSets scaling up or rolling out announce their pods
 *   like an HPA's desired above current (the larger of the two wins);
 * - the opt-out annotation is honoured on the workload object itself, not only on
 *   its pods;
 * - demand records the webhook saw since the last pass that the pod count does not
 *   show (not listed yet, or already gone again) still count for the step's peak.
 */
export function withClusterSignals(
  input: PredictionInput, objects: ClusterObjects, arrivals: ReadonlyMap<string, number>, previous: ReadonlyMap<string, number>,
): PredictionInput {
  const hpas = new Map(input.hpas?.map((h) => [h.key, h]) ?? []);
  for (const r of rolloutSignals(objects.deployments, objects.statefulSets)) {
    const h = hpas.get(r.key);
    if (!h || r.desired > h.desired) hpas.set(r.key, r);
  }
  const optedOut = new Set<string>();
  for (const [kind, list] of [['Deployment', objects.deployments], ['StatefulSet', objects.statefulSets], ['CronJob', objects.cronJobs]] as const) {
    for (const o of list ?? []) {
      if (o.metadata?.annotations?.[PREDICTION_OPT_OUT_ANNOTATION] === PREDICTION_OPT_OUT_VALUE) {
        optedOut.add(`${kind}/${o.metadata.namespace || 'default'}/${o.metadata.name}`);
      }
    }
  }
  const workloads = input.workloads.map((w) => {
    const seen = arrivals.get(w.key) ?? 0;
    const grown = Math.max(0, w.count - (previous.get(w.key) ?? 0));
    const unseen = Math.max(0, seen - grown);
    const optOut = w.optOut || optedOut.has(w.key);
    return unseen > 0 || optOut !== w.optOut ? { ...w, count: w.count + unseen, optOut } : w;
  });
  const cronJobs = input.cronJobs?.map((c) => (optedOut.has(c.key) && !c.optOut ? { ...c, optOut: true } : c));
  return {
    ...input, workloads, hpas: [...hpas.values()].sort((a, b) => SORT(a.key, b.key)),
    ...(cronJobs ? { cronJobs } : {}),
  };
}

export class PredictionLoop {
  private model: PredictionState = emptyPredictionState();
  private predicted: readonly SchedulingPod[] = [];
  private kept: readonly SchedulingPod[] = [];
  private signature = '';
  private readonly boots = new BootObserver();
  private readonly snapshots: SnapshotBuilder;
  private previous = new Map<string, number>();
  private cancelTick: (() => void) | undefined;
  private lastSaveAt = 0;
  private running = false;
  private saving: Promise<void> | undefined;
  readonly intervalMs: number;
  readonly saveIntervalMs: number;

  constructor(private readonly deps: PredictionLoopDeps, private readonly opts: PredictionLoopOptions) {
    this.snapshots = deps.snapshots ?? new SnapshotBuilder();
    this.intervalMs = opts.intervalMs ?? 10_000;
    this.saveIntervalMs = opts.saveIntervalMs ?? 120_000;
  }

  /** The predicted pods of the last pass (extraPendingPods). */
  pods(): readonly SchedulingPod[] {
    return this.predicted;
  }

  /** The predicted pods the Disruptor keeps capacity for: pods() and the keep window's (src/prediction/spare.ts). */
  keepPods(): readonly SchedulingPod[] {
    return this.kept;
  }

  /** The model as it stands (tests, `headroom plan`). */
  state(): PredictionState {
    return this.model;
  }

  /** Loads the saved model (a missing or unreadable one starts cold, logged), then passes every intervalMs. */
  async start(): Promise<void> {
    this.running = true;
    this.lastSaveAt = this.deps.clock.now();
    if (this.deps.store) {
      try {
        const saved = await this.deps.store.load();
        if (saved) {
          this.model = parsePredictionState(saved.text);
          this.deps.log(`prediction: model loaded (${Object.keys(this.model.workloads).length} workloads, saved ${saved.savedAt ?? 'at an unknown time'})`);
        } else {
          this.deps.log('prediction: no saved model, starting cold');
        }
      } catch (err) {
        const why = err instanceof PredictionStateError ? err.message : `cannot load: ${(err as Error).message}`;
        this.deps.log(`prediction: ${why}; starting cold`);
      }
    }
    if (!this.running) return;
    this.schedule(0);
  }

  private schedule(ms: number): void {
    this.cancelTick = this.deps.clock.setTimer(ms, () => {
      this.cancelTick = undefined;
      if (!this.running) return;
      try {
        this.pass();
      } catch (err) {
        this.deps.log(`prediction: pass failed: ${(err as Error).message}`);
      }
      if (this.running && this.deps.clock.now() - this.lastSaveAt >= this.saveIntervalMs) void this.save();
      if (this.running) this.schedule(this.intervalMs);
    });
  }

  /** One pass over the current objects. Public for tests. */
  pass(): PredictionPass | undefined {
    if (!this.deps.state.synced()) return undefined;
    const now = this.deps.clock.now();
    const objects = this.deps.state.objects();
    const snapshot = this.snapshots.build(objects, { strict: false });
    const settingsOf = poolSettings(objects.nodePools);
    const base = predictionInput(objects, snapshot.groups, settingsOf, now, {
      defaultBootHorizonMs: this.opts.defaultBootHorizonMs,
    });
    const arrivals = this.drainArrivals(objects);
    const input = { ...withClusterSignals(base, objects, arrivals, this.previous), boots: this.boots.observe(objects) };
    const out = evaluatePrediction(this.model, input);
    this.model = out.state;
    this.predicted = out.pods;
    this.kept = out.keepPods;
    const actual = new Map(input.workloads.map((w) => [w.key, w.count]));
    this.previous = new Map(base.workloads.map((w) => [w.key, w.count]));
    const signature = out.decisions.filter((d) => d.pods > 0).map((d) => `${d.key}=${d.pods}`).join(',');
    if (signature !== this.signature) {
      this.signature = signature;
      this.deps.onPredictedChange?.();
    }
    const quantiles: Record<string, number> = {};
    for (const d of out.decisions) if (d.pool !== undefined) quantiles[d.pool] = settingsOf(d.pool).quantile;
    const pass: PredictionPass = {
      at: now, decisions: out.decisions, actual, pods: out.pods.length, boots: input.boots.length, quantiles,
      provisionedFor: provisionedForPatches(snapshot, objects.nodes, out.decisions, out.pods),
    };
    this.deps.onPass?.(pass);
    return pass;
  }

  /** Webhook demand records since the last pass, counted per workload. */
  private drainArrivals(objects: ClusterObjects): Map<string, number> {
    const out = new Map<string, number>();
    const records = this.deps.intake?.drain() ?? [];
    if (records.length === 0) return out;
    const cronKeys = new Set((objects.cronJobs ?? []).map((c) => `${c.metadata?.namespace || 'default'}/${c.metadata?.name}`));
    for (const r of records) {
      if (r.source !== 'webhook' || !r.pod.owner) continue;
      const [kind, , ...name] = r.pod.owner.split('/');
      const pod: V1Pod = {
        metadata: {
          namespace: r.pod.namespace, labels: r.pod.labels,
          ownerReferences: [{ apiVersion: '', kind: kind ?? '', name: name.join('/'), uid: '', controller: true }],
        },
      };
      const key = workloadKeyOf(pod, cronKeys);
      if (key) out.set(key, (out.get(key) ?? 0) + 1);
    }
    return out;
  }

  /** Saves the model unless leadership is gone; never throws (a failed save is logged and retried next interval). */
  async save(): Promise<void> {
    if (!this.deps.store || this.deps.signal?.aborted) return;
    if (this.saving) return this.saving;
    this.lastSaveAt = this.deps.clock.now();
    this.saving = (async () => {
      try {
        const r = await this.deps.store!.save(serializePredictionState(this.model), new Date(this.deps.clock.now()), this.deps.signal);
        this.deps.log(`prediction: model saved (${r.jsonBytes} bytes, ${r.gzipBytes} gzipped, ${r.parts} part${r.parts === 1 ? '' : 's'})`);
      } catch (err) {
        this.deps.log(`prediction: model not saved: ${(err as Error).message}`);
      } finally {
        this.saving = undefined;
      }
    })();
    return this.saving;
  }

  /** Stops passing; saves once more while still leading (graceful stop). */
  async stop(opts: { save?: boolean } = {}): Promise<void> {
    this.running = false;
    this.cancelTick?.();
    this.cancelTick = undefined;
    await this.saving;
    if (opts.save !== false) await this.save();
  }
}
