/**
 * The replicas a scale request leads to, given what the group has now (ADR 0052):
 * - scale up `from -> to`: max(current, to), so a plan made on a stale view, a retry
 *   or a restart never adds the same nodes twice;
 * - scale down: `to` only if replicas are still `from` (compare-and-swap), else
 *   unchanged;
 * - always within the group's [min, max].
 * Shared by every CapiActuator (the kube one and the simulator's), so both write the same.
 */
export function scaleTarget(current: number, from: number, to: number, bounds: { minSize: number; maxSize: number }): number {
  const target = to >= from ? Math.max(current, to) : (current === from ? to : current);
  return Math.min(Math.max(target, bounds.minSize), bounds.maxSize);
}
