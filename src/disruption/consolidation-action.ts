import type { Plan } from '../packing/plan.js';
import type { ClusterSnapshot } from '../cluster/snapshot.js';
import { podsToMove } from './pods.js';
import type { ConsolidationCandidate, CandidateSetFilter } from './consolidation-candidates.js';
import { totalsFor } from './consolidation-candidates.js';
import type { SolveSnapshot } from './expiry.js';
import type { Removal } from './removal.js';
import { consolidationScore, type ScoreTotals } from './score.js';
import { evaluateRemoval } from './what-if.js';

/**
 * Whether one consolidation action (a set of candidates removed together, with at
 * most one cheaper replacement) may be taken: the set filter admits it, it scores at
 * least `minScore`, and the what-if solve finds a home for every pod. Shared by the
 * multi-node and single-node decisions. Pure apart from the solver passed in.
 */

export interface ActionContext {
  snapshot: ClusterSnapshot;
  solve: SolveSnapshot;
  totals: ReadonlyMap<string, ScoreTotals>;
  /** 0 takes any action that saves money (Karpenter's WhenEmptyOrUnderutilized); BALANCED_MIN_SCORE weighs disruption. */
  minScore: number;
  admissible?: CandidateSetFilter;
  /** The plan for the snapshot as it is, when predicted pods are pending. */
  baseline?: Plan;
}

export type Judgement =
  | { ok: true; score: number; replacement?: Removal['replacement'] }
  /** `filtered`: refused by the set filter (PodDisruptionBudgets), which may tell twins apart. */
  | { ok: false; why: string; filtered?: true };

export async function judgeAction(set: readonly ConsolidationCandidate[], ctx: ActionContext): Promise<Judgement> {
  const refused = ctx.admissible?.(set);
  if (refused) return { ok: false, why: refused, filtered: true };
  let price = 0;
  let disruption = 0;
  for (const c of set) {
    price += c.price;
    disruption += c.disruption;
  }
  const totals = totalsFor(set, ctx.totals);
  // The best this set can do is save all its price: below the bar even then, no solve is needed.
  if (consolidationScore(price, disruption, totals) < ctx.minScore || price <= 0) return { ok: false, why: 'saving too small for the disruption' };
  const what = await evaluateRemoval(ctx.snapshot, new Set(set.map((c) => c.node.name)), ctx.solve, ctx.baseline, price);
  if (what.kind === 'refused') return { ok: false, why: what.why };
  if (what.kind === 'delete') return { ok: true, score: consolidationScore(price, disruption, totals) };
  const saved = price - what.pricePerHour;
  const score = consolidationScore(saved, disruption, totals);
  if (saved <= 1e-9) return { ok: false, why: 'no cheaper replacement' };
  if (score < ctx.minScore) return { ok: false, why: `replacement saves too little for the disruption (score ${score.toFixed(2)})` };
  return { ok: true, score, replacement: { group: what.group, pricePerHour: what.pricePerHour } };
}

/** The removals of an accepted action. */
export function actionRemovals(set: readonly ConsolidationCandidate[], judged: Extract<Judgement, { ok: true }>, since: ReadonlyMap<string, number>): Removal[] {
  return set.map((c) => ({
    node: c.node.name, group: c.group, reason: 'Underutilized' as const, since: since.get(c.node.name) ?? 0,
    ...(c.node.machine ? { machine: c.node.machine } : {}),
    podUids: podsToMove(c.node).map((p) => p.uid),
    score: judged.score,
    ...(judged.replacement ? { replacement: judged.replacement } : {}),
  }));
}
