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

/** Node / pod annotations that keep a node (Karpenter's, ours and Cluster Autoscaler's). */
export const DO_NOT_DISRUPT_ANNOTATION = 'karpenter.sh/do-not-disrupt';
export const HEADROOM_DO_NOT_DISRUPT_ANNOTATION = 'headroom.dev/do-not-disrupt';
export const SCALE_DOWN_DISABLED_ANNOTATION = 'cluster-autoscaler.kubernetes.io/scale-down-disabled';
/** Pod annotation: "false" keeps the pod's node (Cluster Autoscaler's). */
export const SAFE_TO_EVICT_ANNOTATION = 'cluster-autoscaler.kubernetes.io/safe-to-evict';

const TERMINAL = new Set(['Succeeded', 'Failed']);

export function annotated(o: KubernetesObject | undefined, key: string): boolean {
  return o?.metadata?.annotations?.[key] === 'true';
}

/** Why a node keeps itself (do-not-disrupt or scale-down-disabled), or undefined. */
export function nodeBlocker(node: KubernetesObject | undefined): string | undefined {
  for (const key of [DO_NOT_DISRUPT_ANNOTATION, HEADROOM_DO_NOT_DISRUPT_ANNOTATION, SCALE_DOWN_DISABLED_ANNOTATION]) {
    if (annotated(node, key)) return `node annotated ${key}`;
  }
  return undefined;
}

/** Why a pod keeps its node (do-not-disrupt, safe-to-evict=false), or undefined. Finished pods keep nothing. */
export function podBlocker(pod: V1Pod): string | undefined {
  if (TERMINAL.has(pod.status?.phase ?? '')) return undefined;
  const name = `${pod.metadata?.namespace}/${pod.metadata?.name}`;
  for (const key of [DO_NOT_DISRUPT_ANNOTATION, HEADROOM_DO_NOT_DISRUPT_ANNOTATION]) {
    if (annotated(pod, key)) return `pod ${name} is annotated ${key}`;
  }
  if (pod.metadata?.annotations?.[SAFE_TO_EVICT_ANNOTATION] === 'false') return `pod ${name} is annotated ${SAFE_TO_EVICT_ANNOTATION}=false`;
  return undefined;
}

/** A pod that keeps its node occupied: bound, not finished, not a DaemonSet / mirror pod. */
export function occupiesNode(pod: V1Pod): boolean {
  return !TERMINAL.has(pod.status?.phase ?? '') && !followsNode(controllerOf(pod)?.kind);
}

/** Why the removal must not go ahead on the fresh view, or undefined when it may. */
export function invalidated(removal: Removal, fresh: FreshNode): string | undefined {
  const onNode = nodeBlocker(fresh.node);
  if (onNode) return onNode;
  const expected = new Set(removal.podUids);
  for (const pod of fresh.pods) {
    if (TERMINAL.has(pod.status?.phase ?? '')) continue;
    const name = `${pod.metadata?.namespace}/${pod.metadata?.name}`;
    const blocker = podBlocker(pod);
    if (blocker) return blocker;
    if (occupiesNode(pod) && !expected.has(pod.metadata?.uid ?? '')) return `pod ${name} was bound to the node after the decision`;
  }
  return undefined;
}
