import type { ClusterSnapshot } from '../cluster/snapshot.js';
import type { Clock } from '../provisioning/clock.js';
import type { SimCluster } from './cluster.js';
import type { SimScheduler } from './scheduler.js';
import type { Trace } from './trace.js';

/** What a policy gets to drive the simulated cluster. */
export interface PolicyContext {
  /** The cluster: a ClusterStateSource and a CapiActuator. */
  cluster: SimCluster;
  /** Virtual time. */
  clock: Clock;
  /** The capacity model's snapshot of the cluster right now (buildSnapshot over cluster.objects()). */
  snapshot(): ClusterSnapshot;
  /** The simulated kube-scheduler, for what-if placement checks (scale-down). */
  scheduler: SimScheduler;
  /** The trace being run and its seed: only the oracle policy may read them (it is the limit, not a policy one could run). */
  trace: Trace;
  seed: number;
}

/** What a predicting policy forecast at `at` (virtual ms): pods now, and expected one horizon later. */
export interface ForecastSample {
  at: number;
  actual: number;
  forecast: number;
  horizonMs: number;
  /** Predicted (virtual) pods held. */
  predictedPods: number;
}

/** A running policy; `stop` cancels its loops at the end of the run. */
export interface Policy {
  stop(): void;
  /** Anything the policy could not do as specified, for the report. */
  notes?: string[];
  /** Its forecasts, for the report's forecast-against-actual chart. */
  forecasts?: () => readonly ForecastSample[];
}

export type PolicyFactory = (ctx: PolicyContext) => Policy | Promise<Policy>;
