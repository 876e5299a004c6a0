import type { ClusterObjects } from '../cluster/objects.js';
import type { SchedulingPod } from '../scheduling/scheduling-pod.js';

/**
 * The `predicted` seam: every source of virtual demand (CapacityBuffers,
 * ProvisioningRequest bookings, forecasts) is a pure function of the objects; the
 * Provisioner and the Disruptor take their concatenation as extraPendingPods.
 */
export type PredictedPodSource = (objects: ClusterObjects) => readonly SchedulingPod[];

const NONE: readonly SchedulingPod[] = Object.freeze([]);

/**
 * One source from several, asked every time (a source may also depend on state of its
 * own, as a forecast does; each memoizes itself). A lone non-empty part, or nothing,
 * is passed through as is.
 */
export function combinePredictedSources(sources: readonly PredictedPodSource[]): PredictedPodSource {
  if (sources.length === 1) return sources[0]!;
  return (objects) => {
    const nonEmpty = sources.map((s) => s(objects)).filter((p) => p.length > 0);
    return nonEmpty.length === 0 ? NONE : nonEmpty.length === 1 ? nonEmpty[0]! : nonEmpty.flat();
  };
}
