import type { SnapshotNode } from '../cluster/snapshot.js';
import type { SchedulingPod } from '../scheduling/scheduling-pod.js';
import { podsToMove } from './pods.js';

/**
 * The consolidation score (docs/adr/0083-consolidation.md): an action is worth
 * taking only when the share of its scope's cost it saves is at least half the share
 * of its scope's disruption it causes. Disruption is the sum of the moved pods'
 * weights; a pod weighs more with a higher priority and a higher
 * controller.kubernetes.io/pod-deletion-cost. Pure.
 */

/** The score an action needs: savings share / disruption share >= 1 / 2 (Karpenter's Balanced uses the same bar). */
export const BALANCED_MIN_SCORE = 0.5;

const MIN_WEIGHT = 0.1;
const MAX_WEIGHT = 10;

function clamp(x: number, lo: number, hi: number): number {
  return Math.min(hi, Math.max(lo, x));
}

/**
 * How much disrupting one pod costs: 1 for an ordinary pod; +3 per 10^9 of priority
 * (a pod at the highest user priority weighs 4, system-critical ones 7), less for
 * negative priorities; and +1 per factor 1000 of deletion cost (log scale, since
 * owners use it on any scale), less for negative costs. Within [0.1, 10].
 */
export function podWeight(pod: Pick<SchedulingPod, 'priority' | 'deletionCost'>): number {
  const priority = clamp(pod.priority / 1e9, -1, 2) * 3;
  const cost = pod.deletionCost ?? 0;
  const deletion = cost === 0 ? 0 : clamp(Math.sign(cost) * Math.log10(1 + Math.abs(cost)) / 3, -0.9, 3);
  return clamp(1 + priority + deletion, MIN_WEIGHT, MAX_WEIGHT);
}

/** The disruption of removing `node`: the weights of the pods that would have to move. */
export function nodeDisruption(node: SnapshotNode): number {
  let sum = 0;
  for (const p of podsToMove(node)) sum += podWeight(p);
  return sum;
}

/** What an action is scored against: the totals of the nodes in its scopes. */
export interface ScoreTotals {
  /** Price per hour of every existing node in scope. */
  cost: number;
  /** Disruption of every existing node in scope. */
  disruption: number;
}

/**
 * savings share / disruption share. An action that disrupts nothing scores Infinity;
 * one that saves nothing (or costs more) scores 0 or less.
 */
export function consolidationScore(savedPerHour: number, disruption: number, totals: ScoreTotals): number {
  if (savedPerHour <= 0) return 0;
  if (disruption <= 0 || totals.disruption <= 0) return Infinity;
  if (totals.cost <= 0) return 0;
  return (savedPerHour / totals.cost) / (disruption / totals.disruption);
}
