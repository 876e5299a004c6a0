/**
 * Prediction: capacity ready before the pods arrive.
 *
 * Pure, deterministic and I/O-free; the controller and the simulator call it the
 * same way, passing in time and the objects they watch.
 *
 * State: a `PredictionState` (state.ts), one JSON value holding per-workload
 * models (model.ts: one-minute step maxima, daily and weekly ten-minute profiles,
 * each forecaster's past errors), per-node-group boot samples (boot-horizon.ts) and
 * the hysteresis of acting. Bounded: <= 64 KB a workload, <= 300 workloads,
 * <= 5 MB in all. Persist it with `serializePredictionState`, reload it with
 * `parsePredictionState` (throws PredictionStateError on garbage).
 *
 * Signals (signals.ts), derived from watched objects:
 * - `workloadSignals(pods, cronJobs)`: pod count per workload (Deployment through
 *   its ReplicaSet, StatefulSet, CronJob through its Job, Job) and a template pod;
 * - `cronJobSignals(cronJobs)`: known schedules (next run, pods per run, template);
 * - `hpaSignals(hpas)`: HorizontalPodAutoscalers with desired above current;
 * - `bootSamples(machines, nodes)`: Machine created -> Node Ready durations.
 *
 * Use:
 *   let state = emptyPredictionState();               // or parsePredictionState(saved)
 *   const out = evaluatePrediction(state, { now, workloads, cronJobs, hpas, boots, pools });
 *   state = out.state;                                // persist now and then
 *   out.pods      // predicted SchedulingPods: Provisioner/Disruptor `extraPendingPods`
 *   out.decisions // per workload: forecast (point, upper, method), excess, pods, nodes, cost, reason
 * Lower level: `observe(state, observation)` folds counts in, `forecastWorkload(state,
 * key, now, horizonMs, quantile)` / `forecast(model, ...)` forecasts one workload.
 *
 * Forecasters (forecast.ts) are chosen per workload by their own error history:
 * naive, robust trend, daily and weekly seasonality (after a full period); known
 * CronJob schedules and HPA desired replicas override. A noise band (robust spread
 * of step changes) tells a real rise from jitter. The forecast is the expected
 * maximum over the pool's horizon (learned boot time + provisioning lead) at the
 * pool's quantile, the margin taken from the chosen method's own past errors.
 *
 * Acting (predictor.ts, virtual-pods.ts): excess over current pods becomes
 * predicted pods of the workload's shape at the lowest priority, per NodePool
 * `prediction` settings (enabled, quantile, maxExtraCostPerHour, maxPredictedNodes),
 * skipping workloads annotated `headroom.dev/prediction: disabled`; a rise must last
 * `sustainMs` (2 min) and the pool's rise so far plus excess reach one node-equivalent
 * before anything is held. Design: docs/adr/0090-prediction-forecasting.md.
 */
export { type BootModel, type BootSample, bootHorizonMs, bootSamples, observeBoot } from './boot-horizon.js';
export { type CronSchedule, nextCronRun, parseCron } from './cron-schedule.js';
export { type Forecast, type ForecastMethod, forecast, methodPoints, noiseBand, quantileOf, trendOf, trendSlope } from './forecast.js';
export { METHODS, type Method, type WorkloadModel, newWorkloadModel } from './model.js';
export {
  type DecisionReason, type Observation, type PredictionDecision, type PredictionInput, type PredictionOutput,
  evaluatePrediction, forecastWorkload, observe,
} from './predictor.js';
export {
  DEFAULT_BOOT_HORIZON_MS, DEFAULT_PREDICTION_SETTINGS, PREDICTION_OPT_OUT_ANNOTATION, PREDICTION_OPT_OUT_VALUE,
  type PredictionSettings,
} from './settings.js';
export {
  type CronJobSignal, type HpaSignal, type WorkloadSignal, cronJobSignals, hpaSignals, workloadKeyOf, workloadSignals,
} from './signals.js';
export {
  type HysteresisEntry, MAX_MODEL_BYTES, MAX_STATE_BYTES, MAX_WORKLOADS, type PredictionState, PredictionStateError,
  boundState, emptyPredictionState, parsePredictionState, serializePredictionState,
} from './state.js';
export { PREDICTED_POD_PRIORITY, type PredictionGroup, type PredictionPool, predictedPods, shareOf, unitOf } from './virtual-pods.js';
