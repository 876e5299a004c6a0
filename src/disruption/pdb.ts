import type { V1LabelSelector, V1PodDisruptionBudget } from '@kubernetes/client-node';
import { matchesLabelSelector } from '../scheduling/label-selector.js';
import type { SchedulingPod } from '../scheduling/scheduling-pod.js';

/**
 * PodDisruptionBudgets in the what-if: a plan that would evict more pods covered by
 * a PDB than its `status.disruptionsAllowed` is not taken (Karpenter's and Cluster
 * Autoscaler's rule). kube-controller-manager's disruption controller keeps that
 * status; a PDB it has not reported on yet allows nothing (stricter, never looser).
 * The Eviction API enforces the same budgets again when the pods are evicted
 * (orchestration/drain.ts): this check keeps a plan from starting that the API
 * server would refuse halfway. Pure.
 */

interface Budget {
  name: string;
  namespace: string;
  selector: V1LabelSelector | undefined;
  /** Disruptions still allowed in this pass. */
  left: number;
}

export class PdbAllowance {
  private readonly budgets: Budget[];

  constructor(pdbs: readonly V1PodDisruptionBudget[]) {
    this.budgets = pdbs.map((p) => ({
      name: p.metadata?.name ?? '',
      namespace: p.metadata?.namespace ?? '',
      selector: p.spec?.selector,
      left: Math.max(0, p.status?.disruptionsAllowed ?? 0),
    }));
  }

  /** The budgets covering `pod` (same namespace, selector matches; a null selector matches nothing). */
  private covering(pod: Pick<SchedulingPod, 'namespace' | 'labels'>): Budget[] {
    return this.budgets.filter((b) => b.namespace === pod.namespace && matchesLabelSelector(b.selector, pod.labels));
  }

  /** Why evicting all of `pods` at once would exceed some PDB, or undefined when it would not. */
  blocked(pods: readonly Pick<SchedulingPod, 'namespace' | 'labels'>[]): string | undefined {
    if (this.budgets.length === 0) return undefined;
    const need = new Map<Budget, number>();
    for (const p of pods) for (const b of this.covering(p)) need.set(b, (need.get(b) ?? 0) + 1);
    for (const [b, n] of need) {
      if (n > b.left) return `PodDisruptionBudget ${b.namespace}/${b.name} allows ${b.left} more disruption(s), the plan needs ${n}`;
    }
    return undefined;
  }

  /** An independent copy (consolidation tries a set before taking it). */
  clone(): PdbAllowance {
    const c = Object.create(PdbAllowance.prototype) as PdbAllowance;
    Object.assign(c, { budgets: this.budgets.map((b) => ({ ...b })) });
    return c;
  }

  /** Counts `pods` as evicted (call after `blocked` said they may go). */
  take(pods: readonly Pick<SchedulingPod, 'namespace' | 'labels'>[]): void {
    for (const p of pods) for (const b of this.covering(p)) b.left--;
  }
}
