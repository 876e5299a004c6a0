import type { ClusterSnapshot } from '../cluster/snapshot.js';
import type { DisruptionAllowance, SettingsOf } from './allowance.js';
import { scopeTotals, underutilizedCandidates, type CandidateOrder, type CandidateSetFilter } from './consolidation-candidates.js';
import type { SolveSnapshot } from './expiry.js';
import { decideMultiNodeConsolidation } from './multi-node.js';
import type { Removal, Skip } from './removal.js';
import { decideSingleNodeConsolidation } from './single-node.js';

/**
 * Underutilisation consolidation (consolidationPolicy WhenEmptyOrUnderutilized): the
 * multi-node decision first, then, if it took nothing, the single-node one (as
 * Karpenter orders them). Skipped entirely while real pods are pending: that
 * capacity is spoken for. Predicted pods pending (CapacityBuffers, bookings,
 * forecasts) stay in every what-if, so capacity held for them is kept. Pure apart
 * from the solver. See docs/adr/0083-consolidation.md.
 */

export interface ConsolidationOptions {
  /** The score an action needs (score.ts): 0 = any saving (Karpenter's default), BALANCED_MIN_SCORE = weigh disruption. */
  minScore: number;
  /** Nodes in one multi-node action at most. Default 100. */
  maxMultiNode?: number;
  /** Single-node candidates checked with a solve per pass at most. Default 50. */
  maxSingleNodeChecks?: number;
  /** Let a multi-node action be replaced by one cheaper node, as Karpenter does. Default false here; the Disruptor's DEFAULT_CONSOLIDATION turns it on (ADR 0150). */
  multiNodeReplace?: boolean;
  /** Candidate order: most saving per disruption first (default), or least disruption first (Karpenter's). */
  order?: CandidateOrder;
  /** Leave nodes running Job pods alone (default true; Karpenter evicts them). */
  keepRunToCompletion?: boolean;
}

export interface ConsolidationInput extends ConsolidationOptions {
  snapshot: ClusterSnapshot;
  settingsOf: SettingsOf;
  settledSince: ReadonlyMap<string, number>;
  now: number;
  allowance: DisruptionAllowance;
  solve: SolveSnapshot;
  keep?: ReadonlySet<string>;
  /** Safety checks over a whole set (PodDisruptionBudgets). */
  admissible?: CandidateSetFilter;
}

export async function decideConsolidation(input: ConsolidationInput): Promise<{ remove: Removal[]; skipped: Skip[] }> {
  const { snapshot, solve } = input;
  if (snapshot.pendingPods.some((p) => !p.predicted)) return { remove: [], skipped: [] };
  const { candidates, skipped } = underutilizedCandidates(input);
  if (candidates.length === 0) return { remove: [], skipped };
  const ctx = {
    snapshot, solve, totals: scopeTotals(snapshot), minScore: input.minScore,
    candidates, allowance: input.allowance, settledSince: input.settledSince,
    ...(input.admissible ? { admissible: input.admissible } : {}),
    ...(snapshot.pendingPods.length > 0 ? { baseline: await solve(snapshot) } : {}),
  };
  const multi = await decideMultiNodeConsolidation({
    ...ctx, replace: input.multiNodeReplace ?? false, ...(input.maxMultiNode !== undefined ? { maxCandidates: input.maxMultiNode } : {}),
  });
  if (multi.remove.length > 0) return { remove: multi.remove, skipped: [...skipped, ...multi.skipped] };
  const single = await decideSingleNodeConsolidation({ ...ctx, ...(input.maxSingleNodeChecks !== undefined ? { maxChecks: input.maxSingleNodeChecks } : {}) });
  return { remove: single.remove, skipped: [...skipped, ...multi.skipped, ...single.skipped] };
}
