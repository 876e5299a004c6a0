import type { V1Taint } from '@kubernetes/client-node';

/**
 * The taint Headroom puts on a node it has decided to remove, before it looks again
 * and removes it (Karpenter's `karpenter.sh/disrupted:NoSchedule`). NoSchedule keeps
 * new pods off while the decision is re-checked; running pods are left alone.
 * Everything that reads nodes treats a node with it as being disrupted: the
 * snapshot (unschedulable), the scheduler extender (filtered out) and budgets.
 */
export const DISRUPTION_TAINT_KEY = 'headroom.dev/disrupted';

export const DISRUPTION_TAINT: Readonly<V1Taint> = Object.freeze({ key: DISRUPTION_TAINT_KEY, effect: 'NoSchedule' });

export function hasDisruptionTaint(taints: readonly V1Taint[] | undefined): boolean {
  return taints?.some((t) => t.key === DISRUPTION_TAINT_KEY && t.effect === 'NoSchedule') ?? false;
}

/** `taints` with ours added (unchanged when present). */
export function withDisruptionTaint(taints: readonly V1Taint[] | undefined): V1Taint[] {
  const list = [...(taints ?? [])];
  if (!hasDisruptionTaint(list)) list.push({ ...DISRUPTION_TAINT });
  return list;
}

/** `taints` without ours. */
export function withoutDisruptionTaint(taints: readonly V1Taint[] | undefined): V1Taint[] {
  return (taints ?? []).filter((t) => !(t.key === DISRUPTION_TAINT_KEY && t.effect === 'NoSchedule'));
}
