import type { V1Taint, V1Toleration } from '@kubernetes/client-node';

/** Effects that keep a pod off a node; PreferNoSchedule is only a scoring penalty. */
export const HARD_TAINT_EFFECTS: readonly string[] = ['NoSchedule', 'NoExecute'];

/**
 * v1.Toleration.ToleratesTaint: the effect must match unless the toleration's is
 * empty; the key must match unless the toleration's is empty (then, per API
 * validation, the operator is Exists: every key); `Exists` matches any value,
 * `Equal` (the default) the exact value. Unknown operators tolerate nothing.
 */
export function tolerates(toleration: V1Toleration, taint: V1Taint): boolean {
  if (toleration.effect && toleration.effect !== taint.effect) return false;
  if (toleration.key && toleration.key !== taint.key) return false;
  switch (toleration.operator ?? 'Equal') {
    case 'Exists': return true;
    case 'Equal':
    case '': return (toleration.value ?? '') === (taint.value ?? '');
    default: return false;
  }
}

/**
 * The first taint with one of `effects` (default NoSchedule and NoExecute) that no
 * toleration tolerates, or undefined when the pod tolerates them all.
 */
export function untoleratedTaint(
  taints: readonly V1Taint[], tolerations: readonly V1Toleration[], effects: readonly string[] = HARD_TAINT_EFFECTS,
): V1Taint | undefined {
  for (const taint of taints) {
    if (!effects.includes(taint.effect)) continue;
    if (!tolerations.some((t) => tolerates(t, taint))) return taint;
  }
  return undefined;
}

/**
 * The number of PreferNoSchedule taints the pod does not tolerate, as the
 * TaintToleration score plugin counts them: fewer is better.
 */
export function countIntolerablePreferNoSchedule(taints: readonly V1Taint[], tolerations: readonly V1Toleration[]): number {
  let n = 0;
  for (const taint of taints) {
    if (taint.effect !== 'PreferNoSchedule') continue;
    // Only tolerations with an empty or PreferNoSchedule effect count; tolerates() checks that.
    if (!tolerations.some((t) => tolerates(t, taint))) n++;
  }
  return n;
}

/** "key=value:Effect" (or "key:Effect"), for reasons and messages. */
export function formatTaint(taint: V1Taint): string {
  return `${taint.key}${taint.value ? `=${taint.value}` : ''}:${taint.effect}`;
}
