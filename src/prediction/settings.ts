/**
 * What a NodePool's opt-in `prediction` block says (parsed by the API layer, then
 * trusted here), and the per-workload opt-out.
 */
export interface PredictionSettings {
  /** Off unless a NodePool turns it on. */
  enabled: boolean;
  /** The upper quantile demand is forecast at, in (0, 1): 0.9 covers nine rises in ten. */
  quantile: number;
  /** The most the predicted (not yet needed) capacity may cost per hour; undefined: no cap. */
  maxExtraCostPerHour?: number;
  /** The most node-equivalents held for forecasts; undefined: no cap. */
  maxPredictedNodes?: number;
}

export const DEFAULT_PREDICTION_SETTINGS: PredictionSettings = { enabled: false, quantile: 0.9 };

/**
 * On a workload (Deployment, StatefulSet, Job, CronJob) or its pod template:
 * `headroom.dev/prediction: "disabled"` keeps Headroom from holding capacity for
 * its forecast (it is still observed, so turning prediction back on starts warm).
 */
export const PREDICTION_OPT_OUT_ANNOTATION = 'headroom.dev/prediction';
export const PREDICTION_OPT_OUT_VALUE = 'disabled';

/** Boot horizon used for a node group until enough Machines have been seen booting. */
export const DEFAULT_BOOT_HORIZON_MS = 3 * 60_000;
