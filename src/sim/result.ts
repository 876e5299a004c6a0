import type { BufferSweepPoint } from './buffer-sweep.js';
import type { PolicySummary, TimeSeries } from './metrics.js';

/** `oracle` reads the trace's future: the limit the others are measured against (ADR 0136). */
export const POLICY_NAMES = ['headroom', 'reactive', 'periodic', 'oracle'] as const;
export type PolicyName = (typeof POLICY_NAMES)[number];

/** One trace run through several policies with one seed. */
export interface TraceResult {
  trace: string;
  description: string;
  seed: number;
  durationSeconds: number;
  policies: Partial<Record<PolicyName, PolicyRun>>;
  /** `simulate --buffer-sweep`: headroom without prediction plus a static buffer, per percent. */
  bufferSweep?: BufferSweepPoint[];
}

export interface PolicyRun {
  summary: PolicySummary;
  series: TimeSeries;
  /** Every replica change the policy wrote, in order; `at` in seconds from the start. */
  actions: { at: number; group: string; from: number; to: number; node?: string; reason: string }[];
  /** What the policy could not do as specified (missing controller pieces). */
  notes: string[];
  /** A predicting policy's forecast against actual demand, per time bucket (see forecastSeries). */
  forecast?: ForecastSeries;
  /** Wall-clock milliseconds the run took. */
  wallMs: number;
  /** Simulated events processed. */
  events: number;
}

/**
 * Per bucket: pods of all workloads (the last sample up to the bucket) and what
 * was forecast for that time one horizon earlier (the latest such forecast), both
 * null before the first sample.
 */
export interface ForecastSeries {
  bucketSeconds: number;
  actual: (number | null)[];
  forecast: (number | null)[];
}

/** The stable `--json` shape of one trace (see issue 6). */
export function summaryJson(r: TraceResult): { trace: string; seed: number; policies: Record<string, PolicySummary>; bufferSweep?: BufferSweepPoint[] } {
  const policies: Record<string, PolicySummary> = {};
  for (const [name, run] of Object.entries(r.policies)) policies[name] = run.summary;
  return { trace: r.trace, seed: r.seed, policies, ...(r.bufferSweep ? { bufferSweep: r.bufferSweep } : {}) };
}
