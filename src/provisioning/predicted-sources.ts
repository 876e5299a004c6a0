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
 * One source from several; the same `objects` value gives the same array (memoized),
 * and a lone non-empty part (or nothing) is passed through as is, so downstream
 * identity memos (buildSnapshot's) keep hitting.
 */
export function combinePredictedSources(sources: readonly PredictedPodSource[]): PredictedPodSource {
  if (sources.length === 1) return sources[0]!;
  const memo = new WeakMap<ClusterObjects, readonly SchedulingPod[]>();
  return (objects) => {
    const hit = memo.get(objects);
    if (hit) return hit;
    const parts = sources.map((s) => s(objects));
    const nonEmpty = parts.filter((p) => p.length > 0);
    const out = nonEmpty.length === 0 ? NONE : nonEmpty.length === 1 ? nonEmpty[0]! : nonEmpty.flat();
    memo.set(objects, out);
    return out;
  };
}
