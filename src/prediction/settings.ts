import { DEFAULT_MAX_SPARE_PERCENT, DEFAULT_PREDICTION_QUANTILE } from '../api/nodepool.js';

/**
 * What a NodePool's `prediction` block says (parsed by the API layer, then trusted
 * here), and the per-workload opt-out. On by default, its spare bounded by default
 * (docs/adr/0145-spare-capacity-for-noisy-demand.md).
 */
export interface PredictionSettings {
  /** On unless a NodePool turns it off. */
  enabled: boolean;
  /**
   * The quantile demand is forecast at, in (0, 1): the share of boot horizons in which
   * the pods that arrive find room. Higher waits less and holds more spare.
   */
  quantile: number;
  /**
   * The most spare (capacity held for forecast uncertainty, beyond pods now, their dips
   * within the jitter band and real rises) may cost, in percent of what the demand it
   * covers costs (src/prediction/spare.ts). Undefined: no cap.
   */
  maxSparePercent?: number;
  /** The most the predicted (not yet needed) capacity may cost per hour; undefined: no cap. */
  maxExtraCostPerHour?: number;
  /** The most node-equivalents held for forecasts; undefined: no cap. */
  maxPredictedNodes?: number;
}

export { DEFAULT_MAX_SPARE_PERCENT, DEFAULT_PREDICTION_QUANTILE };

export const DEFAULT_PREDICTION_SETTINGS: PredictionSettings = {
  enabled: true, quantile: DEFAULT_PREDICTION_QUANTILE, maxSparePercent: DEFAULT_MAX_SPARE_PERCENT,
};

/**
 * On a workload (Deployment, StatefulSet, Job, CronJob) or its pod template:
 * `headroom.dev/prediction: "disabled"` keeps Headroom from holding capacity for
 * its forecast (it is still observed, so turning prediction back on starts warm).
 */
export const PREDICTION_OPT_OUT_ANNOTATION = 'headroom.dev/prediction';
export const PREDICTION_OPT_OUT_VALUE = 'disabled';

/** Boot horizon used for a node group until enough Machines have been seen booting. */
export const DEFAULT_BOOT_HORIZON_MS = 3 * 60_000;
