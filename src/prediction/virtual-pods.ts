import type { V1Taint } from '@kubernetes/client-node';
import type { Resources } from '../scheduling/resources.js';
import type { SchedulingPod } from '../scheduling/scheduling-pod.js';
import { untoleratedTaint } from '../scheduling/taints.js';
import type { PredictionSettings } from './settings.js';

/**
 * Forecast excess as predicted (virtual) pods of the workload's own shape: the
 * snapshot's `predicted: true` pods, which the solver places at the lowest
 * priority like CapacityBuffer pods (src/provisioning/capacity-buffers.ts), so
 * constraints apply, the Disruptor keeps the capacity they use and releases it when
 * they go. Pure.
 */

/** Kubernetes' lowest pod priority: real pods always come first. */
export const PREDICTED_POD_PRIORITY = -2147483648;

export interface PredictionGroup {
  id: string;
  allocatable: Resources;
  pricePerHour: number;
  labels: Record<string, string>;
  taints: readonly V1Taint[];
}

/** A NodePool's node groups and its prediction block ('' names the groups outside any pool). */
export interface PredictionPool {
  name: string;
  settings: PredictionSettings;
  groups: readonly PredictionGroup[];
}

/** The pod's share of a node of the group (its dominant resource), or undefined when it cannot run there. */
export function shareOf(pod: SchedulingPod, g: PredictionGroup): number | undefined {
  for (const [k, v] of Object.entries(pod.nodeSelector)) if (g.labels[k] !== v) return undefined;
  if (untoleratedTaint(g.taints, pod.tolerations)) return undefined;
  let share = 0;
  for (const [r, req] of Object.entries(pod.requests)) {
    if (req <= 0) continue;
    const alloc = g.allocatable[r] ?? 0;
    if (alloc < req) return undefined;
    share = Math.max(share, req / alloc);
  }
  return share;
}

/**
 * The unit a pod's capacity is counted in: the smallest node of the pool it fits
 * (the largest share), so "one node-equivalent" is the least capacity that could
 * be added for it. Undefined when no group of the pool can take it.
 */
export function unitOf(pod: SchedulingPod, pool: PredictionPool): { group: PredictionGroup; share: number } | undefined {
  let best: { group: PredictionGroup; share: number } | undefined;
  for (const g of pool.groups) {
    const share = shareOf(pod, g);
    if (share === undefined) continue;
    if (!best || share > best.share || (share === best.share && g.pricePerHour < best.group.pricePerHour)) best = { group: g, share };
  }
  return best;
}

/** `count` predicted pods copying `template`, named after the workload; `demand`: they stand for a rise on its way, not spare. */
export function predictedPods(workloadKey: string, template: SchedulingPod, count: number, demand = false): SchedulingPod[] {
  const [kind = '', ns = template.namespace, name = ''] = workloadKey.split('/');
  const base = `predicted-${kind.toLowerCase()}-${name}`;
  const out: SchedulingPod[] = [];
  for (let i = 0; i < count; i++) {
    const podName = `${base}-${i}`;
    const { nodeName: _bound, ...shape } = template;
    out.push({
      ...shape, key: `${ns}/${podName}`, namespace: ns, name: podName, uid: `${workloadKey}#${i}`,
      equivalenceKey: `Prediction/${workloadKey}`, priority: PREDICTED_POD_PRIORITY, predicted: true, claims: [],
      ...(demand ? { predictedDemand: true } : {}),
    });
  }
  return out;
}
