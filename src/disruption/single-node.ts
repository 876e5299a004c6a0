import type { DisruptionAllowance } from './allowance.js';
import { actionRemovals, judgeAction, type ActionContext } from './consolidation-action.js';
import type { ConsolidationCandidate } from './consolidation-candidates.js';
import { podsToMove } from './pods.js';
import type { Removal, Skip } from './removal.js';
import { roomFor, spareRoom } from './room.js';
import { twinKey } from './twin-candidates.js';

/**
 * Single-node consolidation: the first candidate, best deal first, that can be
 * deleted or replaced by one cheaper node, each checked by one solve. Runs when the
 * multi-node decision took nothing. At most `maxChecks` candidates checked; a twin
 * of one refused for room or price (twin-candidates.ts) is refused without a solve.
 * Pure apart from the solver. See docs/adr/0083-consolidation.md.
 */

export interface SingleNodeInput extends ActionContext {
  candidates: readonly ConsolidationCandidate[];
  allowance: DisruptionAllowance;
  settledSince: ReadonlyMap<string, number>;
  /** Candidates checked with a solve at most. Default 50. */
  maxChecks?: number;
}

export async function decideSingleNodeConsolidation(input: SingleNodeInput): Promise<{ remove: Removal[]; skipped: Skip[] }> {
  const max = input.maxChecks ?? 50;
  const skipped: Skip[] = [];
  let checks = 0;
  const spare = spareRoom(input.snapshot);
  /** Twin key -> the refused candidate's name and why. */
  const refused = new Map<string, { node: string; why: string }>();
  for (const c of input.candidates) {
    if (checks >= max) break;
    const moved = podsToMove(c.node);
    const blocked = input.allowance.blocked(c.group, 'Underutilized', moved);
    if (blocked) {
      skipped.push({ node: c.node.name, why: blocked.why, reason: 'Underutilized', blockedBy: blocked.by });
      continue;
    }
    // A solve only where one could succeed: the pods fit in the spare room elsewhere, or with one cheaper node.
    const why = roomFor(c, spare, input.snapshot.groups);
    if (why) {
      skipped.push({ node: c.node.name, why });
      continue;
    }
    // A twin counts as a check: the candidates looked at stay the same, only the solve is saved.
    checks++;
    const key = twinKey(c);
    const twin = refused.get(key);
    if (twin) {
      skipped.push({ node: c.node.name, why: `${twin.why} (as for ${twin.node}, a node like it)` });
      continue;
    }
    const judged = await judgeAction([c], input);
    if (!judged.ok) {
      skipped.push({ node: c.node.name, why: judged.why });
      if (!judged.filtered) refused.set(key, { node: c.node.name, why: judged.why });
      continue;
    }
    input.allowance.take(c.group, 'Underutilized', moved);
    return { remove: actionRemovals([c], judged, input.settledSince), skipped };
  }
  return { remove: [], skipped };
}
