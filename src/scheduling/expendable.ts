/**
 * Cluster Autoscaler's expendable pods (--expendable-pods-priority-cutoff, default -10):
 * pods whose priority is below the cutoff are best-effort. They are no demand for new
 * nodes, and on existing nodes they are as good as gone: they neither take room from
 * pending pods (kube-scheduler preempts them for any pod of higher priority) nor keep
 * a node from being removed. A pod without spec.priority counts as 0, what the
 * Priority admission plugin gives it.
 */
export const DEFAULT_EXPENDABLE_PODS_PRIORITY_CUTOFF = -10;

export function isExpendable(priority: number, cutoff: number): boolean {
  return priority < cutoff;
}
