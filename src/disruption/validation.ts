import type { KubernetesObject, V1Pod } from '@kubernetes/client-node';
import { DEFAULT_EXPENDABLE_PODS_PRIORITY_CUTOFF, isExpendable } from '../scheduling/expendable.js';
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
/** Pod annotation: "false" keeps the pod's node, "true" lets a bare or local-storage pod move (Cluster Autoscaler's). */
export const SAFE_TO_EVICT_ANNOTATION = 'cluster-autoscaler.kubernetes.io/safe-to-evict';
/** Pod annotation: comma-separated names of local volumes whose data may be lost (Cluster Autoscaler's). */
export const SAFE_TO_EVICT_LOCAL_VOLUMES_ANNOTATION = 'cluster-autoscaler.kubernetes.io/safe-to-evict-local-volumes';

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

/**
 * Local volumes whose data would be lost with the node (hostPath, emptyDir on disk;
 * Cluster Autoscaler's isLocalVolume: a memory-backed emptyDir does not count) that
 * `safe-to-evict-local-volumes` does not list.
 */
export function unsafeLocalVolumes(pod: V1Pod): string[] {
  const allowed = new Set((pod.metadata?.annotations?.[SAFE_TO_EVICT_LOCAL_VOLUMES_ANNOTATION] ?? '').split(',').map((v) => v.trim()).filter(Boolean));
  const out: string[] = [];
  for (const v of pod.spec?.volumes ?? []) {
    const local = v.hostPath !== undefined || (v.emptyDir !== undefined && v.emptyDir.medium !== 'Memory');
    if (local && !allowed.has(v.name)) out.push(v.name);
  }
  return out;
}

/**
 * Why a pod keeps its node, or undefined. Finished pods keep nothing. Any pod:
 * do-not-disrupt, safe-to-evict=false. A pod that would have to move (not a DaemonSet
 * or mirror pod) also: no controller to recreate it, or local storage that
 * safe-to-evict-local-volumes does not cover; safe-to-evict=true lets both move
 * (Cluster Autoscaler's drain rules).
 */
export function podBlocker(pod: V1Pod, cutoff = DEFAULT_EXPENDABLE_PODS_PRIORITY_CUTOFF): string | undefined {
  return annotationBlocker(pod) ?? (expendablePod(pod, cutoff) ? undefined : movabilityBlocker(pod));
}

/** An expendable pod (priority below the cutoff) goes with its node, as in Cluster Autoscaler: it does not have to move. */
function expendablePod(pod: V1Pod, cutoff: number): boolean {
  return isExpendable(pod.spec?.priority ?? 0, cutoff);
}

/** do-not-disrupt or safe-to-evict=false on a pod that is not finished. */
function annotationBlocker(pod: V1Pod): string | undefined {
  if (TERMINAL.has(pod.status?.phase ?? '')) return undefined;
  const name = `${pod.metadata?.namespace}/${pod.metadata?.name}`;
  for (const key of [DO_NOT_DISRUPT_ANNOTATION, HEADROOM_DO_NOT_DISRUPT_ANNOTATION]) {
    if (annotated(pod, key)) return `pod ${name} is annotated ${key}`;
  }
  if (pod.metadata?.annotations?.[SAFE_TO_EVICT_ANNOTATION] === 'false') return `pod ${name} is annotated ${SAFE_TO_EVICT_ANNOTATION}=false`;
  return undefined;
}

/** No controller, or unlisted local storage, on a pod that would have to move. */
function movabilityBlocker(pod: V1Pod): string | undefined {
  if (TERMINAL.has(pod.status?.phase ?? '')) return undefined;
  const name = `${pod.metadata?.namespace}/${pod.metadata?.name}`;
  const owner = controllerOf(pod);
  if (pod.metadata?.annotations?.[SAFE_TO_EVICT_ANNOTATION] === 'true' || followsNode(owner?.kind)) return undefined;
  if (!owner) return `pod ${name} has no controller to recreate it elsewhere`;
  const local = unsafeLocalVolumes(pod);
  if (local.length > 0) return `pod ${name} has local storage (${local.join(', ')}) not listed in ${SAFE_TO_EVICT_LOCAL_VOLUMES_ANNOTATION}`;
  return undefined;
}

/** A pod that keeps its node occupied: bound, not finished, not a DaemonSet / mirror pod. */
export function occupiesNode(pod: V1Pod): boolean {
  return !TERMINAL.has(pod.status?.phase ?? '') && !followsNode(controllerOf(pod)?.kind);
}

/** Why the removal must not go ahead on the fresh view, or undefined when it may. */
export function invalidated(removal: Removal, fresh: FreshNode, cutoff = DEFAULT_EXPENDABLE_PODS_PRIORITY_CUTOFF): string | undefined {
  const onNode = nodeBlocker(fresh.node);
  if (onNode) return onNode;
  const expected = new Set(removal.podUids);
  for (const pod of fresh.pods) {
    if (TERMINAL.has(pod.status?.phase ?? '')) continue;
    const name = `${pod.metadata?.namespace}/${pod.metadata?.name}`;
    const blocker = annotationBlocker(pod);
    if (blocker) return blocker;
    if (expendablePod(pod, cutoff)) continue;
    if (occupiesNode(pod) && !expected.has(pod.metadata?.uid ?? '')) return `pod ${name} was bound to the node after the decision`;
    const immovable = movabilityBlocker(pod);
    if (immovable) return immovable;
  }
  return undefined;
}
