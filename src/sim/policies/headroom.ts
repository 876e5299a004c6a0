import { SnapshotBuilder } from '../../cluster/snapshot-builder.js';
import type { ClusterSnapshot, NodeGroup } from '../../cluster/snapshot.js';
import { Disruptor, type DisruptorOptions } from '../../disruption/disruptor.js';
import type { Plan } from '../../packing/plan.js';
import { predictionInput } from '../../prediction/cluster-input.js';
import { type PredictionDecision, type PredictionInput, evaluatePrediction } from '../../prediction/predictor.js';
import { DEFAULT_PREDICTION_SETTINGS, type PredictionSettings } from '../../prediction/settings.js';
import { type PredictionState, emptyPredictionState } from '../../prediction/state.js';
import { capacityBufferPods } from '../../provisioning/capacity-buffers.js';
import { combinePredictedSources } from '../../provisioning/predicted-sources.js';
import { Provisioner, type ProvisionerOptions } from '../../provisioning/provisioner.js';
import type { SchedulingPod } from '../../scheduling/scheduling-pod.js';
import type { ForecastSample, PolicyContext, PolicyFactory } from '../policy.js';

export interface HeadroomPredictionOptions {
  /** The settings every node group gets (the simulated cluster has no NodePools). */
  settings: PredictionSettings;
  /** How often prediction runs. Default 30 s (forecasts move in one-minute steps). */
  everyMs?: number;
  /** Boot horizon until boots have been observed. Default 3 min. */
  defaultBootHorizonMs?: number;
  /** Provisioning latency added to the boot horizon. Default: everyMs (a forecast can be that late) plus the batch idle window, 1 s. */
  leadMs?: number;
  /** The predictor's own options (experiments); absent: its defaults, as the controller runs it. */
  input?: Pick<PredictionInput, 'sustainMs' | 'minNodeEquivalents' | 'spare' | 'spareHoldMs' | 'keepHoldMs'>;
}

export interface HeadroomOptions {
  /** Headroom's solver (src/packing/solve.ts); a parameter so tests can count or swap it. */
  solve: (snapshot: ClusterSnapshot) => Plan;
  provisioner?: ProvisionerOptions;
  /** The disruption loop's options; false runs without scale-down. */
  disruption?: DisruptorOptions | false;
  /** Prediction (src/prediction) feeding predicted pods to both loops; false runs without. */
  prediction?: HeadroomPredictionOptions | false;
}

/**
 * The simulated cluster has no NodePools: its groups consolidate as a NodePool does by
 * default (WhenEmptyOrUnderutilized, the Balanced score).
 */
export const SIM_DISRUPTION: DisruptorOptions = { defaultConsolidationPolicy: 'WhenEmptyOrUnderutilized' };

/** Prediction as a default install runs it (the simulated groups have no NodePool): on, its spare bounded. */
export const SIM_PREDICTION: HeadroomPredictionOptions = { settings: DEFAULT_PREDICTION_SETTINGS };

/**
 * Headroom itself: the controller's Provisioner (batcher -> buildSnapshot -> solve
 * -> actuate) and Disruptor (empty-node removal, safe expiry), unchanged, with the
 * simulated cluster as their ClusterStateSource and CapiActuator and the virtual
 * clock as their Clock; and prediction, run as the controller runs it: every
 * `everyMs` the watched objects (pods with owner references, CronJobs, Machines,
 * Nodes) go through predictionInput -> evaluatePrediction, and the predicted pods
 * are both loops' extraPendingPods. The model learns only from what the cluster
 * shows, never from the trace's future.
 */
export function headroomPolicy(opts: HeadroomOptions): PolicyFactory {
  return (ctx: PolicyContext) => {
    let predicted: readonly SchedulingPod[] = [];
    let kept: readonly SchedulingPod[] = [];
    // As the controller: CapacityBuffers' chunks and the forecast, through one seam;
    // the Disruptor keeps capacity for the forecast's keep set (src/prediction/spare.ts).
    const extra = { extraPendingPods: combinePredictedSources([capacityBufferPods, () => predicted]) };
    const keep = { extraPendingPods: combinePredictedSources([capacityBufferPods, () => kept]) };
    // One snapshot builder for both loops, as the controller shares one per term.
    const deps = { state: ctx.cluster, actuator: ctx.cluster, clock: ctx.clock, solve: opts.solve, snapshots: new SnapshotBuilder() };
    const provisioner = new Provisioner(deps, { ...opts.provisioner, ...extra });
    provisioner.start();
    const disruptor = opts.disruption === false ? undefined : new Disruptor({ ...deps, nodes: ctx.cluster }, { ...opts.disruption, ...keep });
    disruptor?.start();
    const forecasts: ForecastSample[] = [];
    let cancel: (() => void) | undefined;
    if (opts.prediction) {
      const p = opts.prediction;
      let state: PredictionState = emptyPredictionState();
      let groups: NodeGroup[] | undefined;
      let held = new Map<string, number>();
      const everyMs = p.everyMs ?? 30_000;
      const leadMs = p.leadMs ?? everyMs + 1000;
      const tick = () => {
        const objects = ctx.cluster.objects();
        groups ??= ctx.snapshot().groups;
        const now = ctx.clock.now();
        const input = predictionInput(objects, groups, () => p.settings, now, {
          leadMs, ...(p.defaultBootHorizonMs !== undefined ? { defaultBootHorizonMs: p.defaultBootHorizonMs } : {}), ...p.input,
        });
        const out = evaluatePrediction(state, input);
        state = out.state;
        predicted = out.pods;
        kept = out.keepPods;
        forecasts.push(sample(now, input.workloads.reduce((a, w) => a + w.count, 0), out.decisions));
        // More predicted demand is a provisioning trigger, as new pending pods are (less is the Disruptor's business).
        const next = new Map(out.decisions.map((d) => [d.key, d.pods]));
        if (out.decisions.some((d) => d.pods > (held.get(d.key) ?? 0))) provisioner.trigger();
        held = next;
        cancel = ctx.clock.setTimer(everyMs, tick);
      };
      cancel = ctx.clock.setTimer(0, tick);
    }
    return {
      stop: () => {
        cancel?.();
        void provisioner.stop();
        void disruptor?.stop();
      },
      notes: [
        disruptor ? `disruption: ${opts.disruption && opts.disruption.defaultConsolidationPolicy ? opts.disruption.defaultConsolidationPolicy : 'defaults'}` : 'no scale-down: disruption disabled',
        opts.prediction ? `prediction: ${describePrediction(opts.prediction.settings)}` : 'no prediction: disabled',
      ],
      forecasts: () => forecasts,
    };
  };
}

/** Pods now, and the forecast for one horizon ahead (pods now plus the forecast excess), over all workloads. */
function sample(now: number, actual: number, decisions: readonly PredictionDecision[]): ForecastSample {
  let excess = 0;
  let horizonMs = 0;
  let pods = 0;
  for (const d of decisions) {
    excess += d.excess;
    pods += d.pods;
    horizonMs = Math.max(horizonMs, d.horizonMs);
  }
  return { at: now, actual, forecast: actual + excess, horizonMs, predictedPods: pods };
}

/** The prediction settings a run used, as `simulate` prints them. */
export function describePrediction(p: PredictionSettings): string {
  if (!p.enabled) return 'off';
  const caps = [
    `spare at most ${p.maxSparePercent === undefined ? 'uncapped' : `${p.maxSparePercent}% of demand's cost`}`,
    ...(p.maxExtraCostPerHour !== undefined ? [`maxExtraCostPerHour ${p.maxExtraCostPerHour}`] : []),
    ...(p.maxPredictedNodes !== undefined ? [`maxPredictedNodes ${p.maxPredictedNodes}`] : []),
  ];
  return `on, quantile ${p.quantile}, ${caps.join(', ')}`;
}
