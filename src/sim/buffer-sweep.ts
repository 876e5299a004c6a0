import type { UnstructuredObject } from '../api/unstructured-object.js';
import type { PolicyRun } from './result.js';
import type { Trace } from './trace.js';

/**
 * "Prediction beats static spare" (issue 24): Headroom without prediction plus a
 * static CapacityBuffer of p% of each Deployment, for p across this sweep, draws the
 * line of what plain spare buys at each cost; Headroom at its defaults is drawn
 * against it. Jobs and CronJobs get no buffer (a buffer scales with a Deployment).
 */
export const SWEEP_PERCENTS = [0, 5, 10, 15, 20] as const;

export interface BufferSweepPoint {
  percent: number;
  pendingPodSeconds: number;
  cost: number;
}

/** The trace with a CapacityBuffer of `percent`% of every Deployment, kept as the controller keeps them. */
export function withStaticBuffers(trace: Trace, percent: number): Trace {
  if (percent === 0) return trace;
  const buffers: UnstructuredObject[] = trace.workloads.filter((w) => w.kind === 'Deployment').map((w) => ({
    apiVersion: 'autoscaling.x-k8s.io/v1beta1', kind: 'CapacityBuffer',
    metadata: { name: `${w.name}-static-spare`, namespace: w.namespace },
    spec: { scalableRef: { apiGroup: 'apps', kind: 'Deployment', name: w.name }, percentage: percent },
  }));
  return { ...trace, capacityBuffers: [...trace.capacityBuffers, ...buffers] };
}

export function sweepPoint(percent: number, run: PolicyRun): BufferSweepPoint {
  return { percent, pendingPodSeconds: run.summary.pendingPodSeconds, cost: run.summary.cost };
}

/**
 * The static line's pending at a given cost: joined linearly between the sweep's points
 * in cost order; undefined outside the costs the sweep reached (no extrapolation).
 */
export function staticPendingAtCost(points: readonly BufferSweepPoint[], cost: number): number | undefined {
  const sorted = [...points].sort((a, b) => a.cost - b.cost);
  if (sorted.length === 0 || cost < sorted[0]!.cost || cost > sorted.at(-1)!.cost) return undefined;
  for (let i = 1; i < sorted.length; i++) {
    const a = sorted[i - 1]!;
    const b = sorted[i]!;
    if (cost <= b.cost) return b.cost === a.cost ? Math.min(a.pendingPodSeconds, b.pendingPodSeconds) : a.pendingPodSeconds + ((b.pendingPodSeconds - a.pendingPodSeconds) * (cost - a.cost)) / (b.cost - a.cost);
  }
  return sorted[0]!.pendingPodSeconds;
}
