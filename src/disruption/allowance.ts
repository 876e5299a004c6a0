import {
  DEFAULT_BUDGETS, DEFAULT_CONSOLIDATE_AFTER_MS, DEFAULT_CONSOLIDATION_POLICY, DEFAULT_EXPIRE_AFTER_MS,
} from '../api/disruption-defaults.js';
import type { DisruptionBudget, NodePoolDisruption } from '../api/nodepool.js';
import type { ClusterSnapshot, NodeGroup } from '../cluster/snapshot.js';
import type { SchedulingPod } from '../scheduling/scheduling-pod.js';
import { budgetActive } from './budget-schedule.js';
import type { GroupDisruption } from './autoscaling-options.js';
import type { PdbAllowance } from './pdb.js';
import type { BlockReason } from './removal.js';

/**
 * How many nodes one disruption pass may still remove, per NodePool (budgets) and
 * per group (min size), and per PodDisruptionBudget (pods evicted). Shared by every
 * decision of a pass (emptiness, expiry, consolidation) so together they never
 * exceed any bound. Pure: built from a snapshot.
 * See docs/adr/0080-disruption-first-slice.md.
 */

/** Karpenter's disruption reasons, as budgets name them. */
export type DisruptionReason = 'Empty' | 'Underutilized' | 'Drifted' | 'Expired';

/** Why the allowance refuses one more node: the code (for metrics) and the words (for logs and plan). */
export interface Blocked {
  by: Extract<BlockReason, 'min-size' | 'unmanaged' | 'budget' | 'pdb'>;
  why: string;
}

/** Settings for groups that belong to no NodePool: the same defaults as a NodePool's unset fields (api/disruption-defaults.ts). */
export const DEFAULT_DISRUPTION: NodePoolDisruption = {
  consolidationPolicy: DEFAULT_CONSOLIDATION_POLICY,
  consolidateAfterMs: DEFAULT_CONSOLIDATE_AFTER_MS,
  expireAfterMs: DEFAULT_EXPIRE_AFTER_MS,
  budgets: DEFAULT_BUDGETS.map((b) => ({ nodes: b.nodes, reasons: [...b.reasons] })),
};

/** The disruption settings of a group: its pool's, else the defaults; with its own scale-down options. */
export type SettingsOf = (group: NodeGroup) => GroupDisruption;

/** Budget scope: the pool, or the group itself when it has no pool. */
export function budgetScope(group: NodeGroup): string {
  return group.nodePool ? `pool:${group.nodePool}` : `group:${group.id}`;
}

/**
 * Nodes a budget allows disrupted at once in a scope of `total` nodes: a count, or
 * a percentage rounded up (as Karpenter does, so "10%" of 3 nodes is 1).
 */
export function budgetNodes(budget: DisruptionBudget, total: number): number {
  const pct = /^([0-9]+)%$/.exec(budget.nodes);
  if (pct) return Math.ceil((Number(pct[1]) / 100) * total);
  return Number(budget.nodes);
}

/**
 * The smallest budget that applies to `reason` (a budget without reasons applies to
 * all) and is in force at `now` (see budget-schedule.ts; without `now` every budget is).
 */
export function allowedByBudgets(budgets: readonly DisruptionBudget[], reason: DisruptionReason, total: number, now?: number): number {
  let allowed = Infinity;
  for (const b of budgets) {
    if (b.reasons && !b.reasons.includes(reason)) continue;
    if (!budgetActive(b, now)) continue;
    allowed = Math.min(allowed, budgetNodes(b, total));
  }
  return allowed;
}

export class DisruptionAllowance {
  /** Scope -> nodes (existing, not in flight) and nodes already being disrupted. */
  private readonly scopes = new Map<string, { total: number; disrupting: number }>();
  /** Group id -> how many more of its replicas may go before it hits min size. */
  private readonly aboveMin = new Map<string, number>();

  /**
   * `disrupting`: nodes already on their way out (our own earlier removals not yet
   * visible, besides the snapshot's unschedulable nodes); they use up budget.
   */
  constructor(
    snapshot: ClusterSnapshot, private readonly settingsOf: SettingsOf, disrupting: ReadonlySet<string> = new Set(),
    /** Nodes of the batch being re-checked: they count when taken again, not before (their taint may already show). */
    batch: ReadonlySet<string> = new Set(),
    /** For budget schedules; without it every scheduled budget counts as in force. */
    private readonly now?: number,
    /** PodDisruptionBudgets; without them no pod is covered by one. */
    private readonly pdbs?: PdbAllowance,
  ) {
    // Group id -> its scope's counts, so the per-node loop builds no scope key.
    const scopeOf = new Map<string, { total: number; disrupting: number }>();
    for (const g of snapshot.groups) {
      this.aboveMin.set(g.id, g.replicas - g.minSize);
      const key = budgetScope(g);
      let scope = this.scopes.get(key);
      if (!scope) this.scopes.set(key, (scope = { total: 0, disrupting: 0 }));
      scopeOf.set(g.id, scope);
    }
    for (const n of snapshot.nodes) {
      const s = n.groupId ? scopeOf.get(n.groupId) : undefined;
      if (!s || n.inFlight) continue;
      s.total++;
      if ((n.unschedulable || disrupting.has(n.name)) && !batch.has(n.name)) s.disrupting++;
    }
  }

  /** An independent copy, for trying a set of nodes before taking it. */
  clone(): DisruptionAllowance {
    const c = Object.create(DisruptionAllowance.prototype) as DisruptionAllowance;
    Object.assign(c, this, {
      scopes: new Map([...this.scopes].map(([k, v]) => [k, { ...v }])),
      aboveMin: new Map(this.aboveMin),
      pdbs: this.pdbs?.clone(),
    });
    return c;
  }

  /** Whether one more node of `group` may go for `reason`, evicting `moved`; if so, counts it. */
  take(group: NodeGroup, reason: DisruptionReason, moved: readonly SchedulingPod[] = []): boolean {
    const why = this.blocked(group, reason, moved);
    if (why) return false;
    this.scopes.get(budgetScope(group))!.disrupting++;
    this.aboveMin.set(group.id, this.aboveMin.get(group.id)! - 1);
    this.pdbs?.take(moved);
    return true;
  }

  /** Why one more node of `group` may not go for `reason`, evicting `moved`, or undefined when it may. */
  blocked(group: NodeGroup, reason: DisruptionReason, moved: readonly SchedulingPod[] = []): Blocked | undefined {
    if ((this.aboveMin.get(group.id) ?? 0) <= 0) return { by: 'min-size', why: `${group.id} is at min size ${group.minSize}` };
    const s = this.scopes.get(budgetScope(group));
    if (!s) return { by: 'unmanaged', why: `${group.id} is not managed` };
    const allowed = allowedByBudgets(this.settingsOf(group).budgets, reason, s.total, this.now);
    if (s.disrupting >= allowed) {
      return { by: 'budget', why: `disruption budget of ${group.nodePool ? `NodePool ${group.nodePool}` : group.id} allows ${allowed} node(s) at once` };
    }
    const pdb = moved.length > 0 ? this.pdbs?.blocked(moved) : undefined;
    return pdb ? { by: 'pdb', why: pdb } : undefined;
  }
}
