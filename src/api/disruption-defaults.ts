/**
 * The one set of disruption defaults (DECISIONS.md item 1), for groups in no NodePool
 * and for a NodePool's unset fields alike. The parser (nodepool.ts), the pool-less
 * settings (disruption/allowance.ts), the CRD's `default:`s (a test compares them:
 * test/unit/api/disruption-defaults.test.ts), the reference docs (a docs test) and the
 * simulator read them from here, so there is no second set to drift.
 *
 * - consolidationPolicy WhenEmptyOrUnderutilized: Karpenter's default, and what Cluster
 *   Autoscaler's scale-down does (it removes underutilised nodes too), so a group's
 *   `scaledownutilizationthreshold` annotation has something to tune;
 * - consolidateAfter 30 s (Karpenter's 0 s races kube-scheduler binding pods to a node that
 *   just came up or just had its pods replaced, ADR 0080);
 * - expireAfter Never: Cluster Autoscaler users do not expect nodes replaced every 30
 *   days; Karpenter's 720h is one field away (`spec.disruption.expireAfter: 720h`);
 * - budgets: Karpenter's 10% for the disruptions that move pods (Underutilized, Drifted,
 *   Expired), and 10 nodes at once for Empty ones, Cluster Autoscaler's
 *   `--max-empty-bulk-delete` / `--max-scale-down-parallelism`. A lone 10% rounds up to one
 *   node in a scope of up to 10 (a group in no NodePool is its own scope), so empty nodes
 *   left after demand went away went one per group per pass (10 s) where CA deletes them
 *   in bulk (issue 28). An empty node moves no pod; min size still bounds every group.
 */

export const DEFAULT_CONSOLIDATION_POLICY = 'WhenEmptyOrUnderutilized' as const;
/** 30 s; a NodePool field or the `scaledownunneededtime` annotation overrides it. */
export const DEFAULT_CONSOLIDATE_AFTER_MS = 30_000;
/** null = Never. */
export const DEFAULT_EXPIRE_AFTER_MS = null;
export const DEFAULT_BUDGETS: ReadonlyArray<{ readonly nodes: string; readonly reasons: ReadonlyArray<'Empty' | 'Underutilized' | 'Drifted' | 'Expired'> }> = [
  { nodes: '10%', reasons: ['Underutilized', 'Drifted', 'Expired'] },
  { nodes: '10', reasons: ['Empty'] },
];

/** The same defaults as the CRD spells them (Go durations, `Never`). */
export const DISRUPTION_DEFAULTS_AS_WRITTEN = {
  consolidationPolicy: DEFAULT_CONSOLIDATION_POLICY,
  consolidateAfter: `${DEFAULT_CONSOLIDATE_AFTER_MS / 1000}s`,
  expireAfter: 'Never',
  budgets: DEFAULT_BUDGETS.map((b) => ({ nodes: b.nodes, reasons: [...b.reasons] })),
} as const;
