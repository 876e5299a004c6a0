import { isExpendable } from '../scheduling/expendable.js';
import type { SchedulingPod } from '../scheduling/scheduling-pod.js';

/** A pending pod Headroom provisions nothing for on purpose, and why (for `plan --why` and the pod's Event). */
export interface LeftAlonePod {
  key: string;
  namespace: string;
  name: string;
  uid: string;
  kind: 'expendable' | 'nominated';
  reason: string;
}

export function expendableReason(priority: number, cutoff: number): string {
  return `priority ${priority} is below the expendable-pods priority cutoff ${cutoff} (--expendable-pods-priority-cutoff): expendable pods trigger no scale-up`;
}

export function nominatedReason(node: string): string {
  return `kube-scheduler nominated node ${node} for it (status.nominatedNodeName: it preempted pods there): it waits for that node, not for a new one`;
}

/**
 * Pending pods as Cluster Autoscaler sorts them (ArrangePodsBySchedulability and
 * FilterOutExpendablePods): expendable ones (priority below the cutoff) and nominated
 * ones are no demand. A nominated pod counts on its nominated node instead, as if
 * bound there, so the room its preemption freed is not offered to other pods; one
 * nominated to a node that is gone is demand again (the nomination is stale). Pods
 * appended as predicted demand (forecasts, CapacityBuffers) are not sorted here.
 * Arrays are returned as they came when nothing is left alone.
 */
export function sortPending(pending: readonly SchedulingPod[], cutoff: number, nodeExists: (name: string) => boolean): {
  demand: readonly SchedulingPod[]; leftAlone: LeftAlonePod[]; nominated: Map<string, SchedulingPod[]>;
} {
  const leftAlone: LeftAlonePod[] = [];
  const nominated = new Map<string, SchedulingPod[]>();
  let demand: SchedulingPod[] | undefined;
  for (let i = 0; i < pending.length; i++) {
    const p = pending[i]!;
    let out: LeftAlonePod | undefined;
    if (isExpendable(p.priority, cutoff)) out = { key: p.key, namespace: p.namespace, name: p.name, uid: p.uid, kind: 'expendable', reason: expendableReason(p.priority, cutoff) };
    else if (p.nominatedNodeName && nodeExists(p.nominatedNodeName)) {
      out = { key: p.key, namespace: p.namespace, name: p.name, uid: p.uid, kind: 'nominated', reason: nominatedReason(p.nominatedNodeName) };
      let list = nominated.get(p.nominatedNodeName);
      if (!list) nominated.set(p.nominatedNodeName, (list = []));
      list.push(p);
    }
    if (out) {
      leftAlone.push(out);
      demand ??= pending.slice(0, i);
    } else if (demand) demand.push(p);
  }
  return { demand: demand ?? pending, leftAlone, nominated };
}

/**
 * A node's pods as the model counts them: without expendable pods (preemptible by any
 * pending pod, and lost with the node without blocking its removal), with the pods
 * nominated to it. The same array when nothing changes.
 */
export function podsCounted(pods: readonly SchedulingPod[], cutoff: number, nominated: readonly SchedulingPod[] | undefined): readonly SchedulingPod[] {
  let out: SchedulingPod[] | undefined;
  for (let i = 0; i < pods.length; i++) {
    const p = pods[i]!;
    if (isExpendable(p.priority, cutoff)) out ??= pods.slice(0, i);
    else if (out) out.push(p);
  }
  if (!nominated?.length) return out ?? pods;
  return [...(out ?? pods), ...nominated];
}
