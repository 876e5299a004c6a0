import type { KubernetesObject, V1Pod } from '@kubernetes/client-node';
import { controllerOf } from '../scheduling/pod-demand.js';
import type { FreshNode } from './orchestration/node-port.js';
import { followsNode } from './pods.js';
import type { Removal } from './removal.js';

/**
 * The last look before a removal (Karpenter's validation): the node has been tainted,
 * and is read again fresh. The decision stands only if nothing that would have
 * changed it happened since: no pod bound that the decision did not move, no
 * do-not-disrupt. Pure.
 */

/** Node / pod annotations that keep a node (Karpenter's and Cluster Autoscaler's). */
export const DO_NOT_DISRUPT_ANNOTATION = 'karpenter.sh/do-not-disrupt';
export const SCALE_DOWN_DISABLED_ANNOTATION = 'cluster-autoscaler.kubernetes.io/scale-down-disabled';

const TERMINAL = new Set(['Succeeded', 'Failed']);

export function annotated(o: KubernetesObject | undefined, key: string): boolean {
  return o?.metadata?.annotations?.[key] === 'true';
}

/** A pod that keeps its node occupied: bound, not finished, not a DaemonSet / mirror pod. */
export function occupiesNode(pod: V1Pod): boolean {
  return !TERMINAL.has(pod.status?.phase ?? '') && !followsNode(controllerOf(pod)?.kind);
}

/** Why the removal must not go ahead on the fresh view, or undefined when it may. */
export function invalidated(removal: Removal, fresh: FreshNode): string | undefined {
  if (annotated(fresh.node, DO_NOT_DISRUPT_ANNOTATION)) return `node annotated ${DO_NOT_DISRUPT_ANNOTATION}`;
  if (annotated(fresh.node, SCALE_DOWN_DISABLED_ANNOTATION)) return `node annotated ${SCALE_DOWN_DISABLED_ANNOTATION}`;
  const expected = new Set(removal.podUids);
  for (const pod of fresh.pods) {
    if (TERMINAL.has(pod.status?.phase ?? '')) continue;
    const name = `${pod.metadata?.namespace}/${pod.metadata?.name}`;
    if (annotated(pod, DO_NOT_DISRUPT_ANNOTATION)) return `pod ${name} is annotated ${DO_NOT_DISRUPT_ANNOTATION}`;
    if (occupiesNode(pod) && !expected.has(pod.metadata?.uid ?? '')) return `pod ${name} was bound to the node after the decision`;
  }
  return undefined;
}
