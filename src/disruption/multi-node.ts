import type { DisruptionAllowance } from './allowance.js';
import { actionRemovals, judgeAction, type ActionContext, type Judgement } from './consolidation-action.js';
import type { ConsolidationCandidate } from './consolidation-candidates.js';
import { podsToMove } from './pods.js';
import type { Removal, Skip } from './removal.js';

/**
 * Multi-node consolidation: the largest set of candidates, best deals first, whose
 * pods all fit on the nodes that stay, found by a binary search
 * whose every step is one solve of the whole set by the real solver, so the set is
 * chosen together rather than one node at a time. Bounded by the budgets and min
 * sizes (`allowance`, used up when a set is taken) and by `maxCandidates`. Pure
 * apart from the solver. See docs/adr/0083-consolidation.md.
 */

export interface MultiNodeInput extends ActionContext {
  /** Best deal first (underutilizedCandidates). */
  candidates: readonly ConsolidationCandidate[];
  allowance: DisruptionAllowance;
  /** Node -> pods unchanged since (ms), for the removals' `since`. */
  settledSince: ReadonlyMap<string, number>;
  /** At most this many nodes in one action. Default 100 (Karpenter's multi-node limit). */
  maxCandidates?: number;
  /** Accept a set that needs one cheaper new node (Karpenter's multi-node replace). Default false. */
  replace?: boolean;
}

export async function decideMultiNodeConsolidation(input: MultiNodeInput): Promise<{ remove: Removal[]; skipped: Skip[] }> {
  const max = input.maxCandidates ?? 100;
  const skipped: Skip[] = [];
  // The prefix the budgets allow, best deals first.
  const trial = input.allowance.clone();
  const prefix: ConsolidationCandidate[] = [];
  for (const c of input.candidates) {
    if (prefix.length >= max) break;
    const moved = podsToMove(c.node);
    const why = trial.blocked(c.group, 'Underutilized', moved);
    if (why) {
      skipped.push({ node: c.node.name, why: why.why, reason: 'Underutilized', blockedBy: why.by });
      continue;
    }
    trial.take(c.group, 'Underutilized', moved);
    prefix.push(c);
  }
  let best: { size: number; judged: Extract<Judgement, { ok: true }> } | undefined;
  let lo = 1;
  let hi = prefix.length;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const judged = await judgeAction(prefix.slice(0, mid), input);
    // With `replace` off, deletes only: a set that needs a new node trades evictions for
    // a saving (ADR 0083). The Disruptor turns it on by default (ADR 0150).
    if (judged.ok && (input.replace === true || !judged.replacement)) {
      best = { size: mid, judged };
      lo = mid + 1;
    } else {
      hi = mid - 1;
    }
  }
  if (!best) return { remove: [], skipped };
  let set = prefix.slice(0, best.size);
  let judged = best.judged;
  // A set replaced by a node of the group all its nodes are in (two half-empty nodes
  // into one new twin) may save no more than deleting the set without its last node,
  // which evicts fewer pods and needs no boot: take that delete when it saves as much (ADR 0150).
  const replacement = judged.replacement;
  if (replacement && set.length > 1 && set.every((c) => c.group.id === replacement.group.id)) {
    const smaller = set.slice(0, -1);
    const smallerJudged = await judgeAction(smaller, input);
    const replaceSaving = setPrice(set) - replacement.pricePerHour;
    if (smallerJudged.ok && !smallerJudged.replacement && setPrice(smaller) >= replaceSaving - 1e-9) {
      set = smaller;
      judged = smallerJudged;
    }
  }
  for (const c of set) input.allowance.take(c.group, 'Underutilized', podsToMove(c.node));
  return { remove: actionRemovals(set, judged, input.settledSince), skipped };
}

function setPrice(set: readonly ConsolidationCandidate[]): number {
  let price = 0;
  for (const c of set) price += c.price;
  return price;
}
