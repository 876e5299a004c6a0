import type {
  V1Affinity, V1NodeSelectorTerm, V1PodAffinityTerm, V1TopologySpreadConstraint,
} from '@kubernetes/client-node';
import type { SchedulingPod } from './scheduling-pod.js';

/**
 * One way of placing a pod: its preferences that are still honoured are folded
 * into the required fields, so every hard predicate applies unchanged.
 */
export interface RelaxationLevel {
  pod: SchedulingPod;
  /** PreferNoSchedule taints keep the pod off at this level. */
  avoidPreferNoSchedule: boolean;
  /** Preferences given up to reach this level, for reasons. */
  relaxed: string[];
}

type Item =
  | { kind: 'podAffinity'; weight: number; term: V1PodAffinityTerm }
  | { kind: 'podAntiAffinity'; weight: number; term: V1PodAffinityTerm }
  | { kind: 'nodeAffinity'; weight: number; term: V1NodeSelectorTerm }
  | { kind: 'spread'; weight: number; c: V1TopologySpreadConstraint }
  | { kind: 'preferNoSchedule'; weight: number };

function describe(item: Item): string {
  switch (item.kind) {
    case 'podAffinity': return `preferred pod affinity (${item.term.topologyKey}, weight ${item.weight})`;
    case 'podAntiAffinity': return `preferred pod anti-affinity (${item.term.topologyKey}, weight ${item.weight})`;
    case 'nodeAffinity': return `preferred node affinity (weight ${item.weight})`;
    case 'spread': return `topology spread ScheduleAnyway (${item.c.topologyKey})`;
    case 'preferNoSchedule': return 'PreferNoSchedule taints';
  }
}

/** AND a list of extra terms into the OR of required terms (each required term gains them all). */
function andTerms(required: V1NodeSelectorTerm[] | undefined, extra: V1NodeSelectorTerm[]): V1NodeSelectorTerm[] {
  const exprs = extra.flatMap((t) => t.matchExpressions ?? []);
  const fields = extra.flatMap((t) => t.matchFields ?? []);
  const base = required?.length ? required : [{}];
  return base.map((t) => ({
    matchExpressions: [...(t.matchExpressions ?? []), ...exprs],
    matchFields: [...(t.matchFields ?? []), ...fields],
  }));
}

function levelPod(pod: SchedulingPod, kept: Item[]): SchedulingPod {
  const aff = pod.affinity ?? {};
  const podAff = kept.filter((i) => i.kind === 'podAffinity').map((i) => (i as { term: V1PodAffinityTerm }).term);
  const podAnti = kept.filter((i) => i.kind === 'podAntiAffinity').map((i) => (i as { term: V1PodAffinityTerm }).term);
  const nodeAff = kept.filter((i) => i.kind === 'nodeAffinity').map((i) => (i as { term: V1NodeSelectorTerm }).term);
  const spreads = new Set(kept.filter((i) => i.kind === 'spread').map((i) => (i as { c: V1TopologySpreadConstraint }).c));

  // Only required fields are kept: the hard predicates never look at preferred ones.
  const affinity: V1Affinity = {};
  const reqNode = aff.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution;
  if (nodeAff.length) {
    affinity.nodeAffinity = { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: andTerms(reqNode?.nodeSelectorTerms, nodeAff) } };
  } else if (reqNode) {
    affinity.nodeAffinity = { requiredDuringSchedulingIgnoredDuringExecution: reqNode };
  }
  const reqAff = [...(aff.podAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? []), ...podAff];
  if (reqAff.length) affinity.podAffinity = { requiredDuringSchedulingIgnoredDuringExecution: reqAff };
  const reqAnti = [...(aff.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? []), ...podAnti];
  if (reqAnti.length) affinity.podAntiAffinity = { requiredDuringSchedulingIgnoredDuringExecution: reqAnti };

  const topologySpreadConstraints = pod.topologySpreadConstraints
    .filter((c) => c.whenUnsatisfiable !== 'ScheduleAnyway' || spreads.has(c))
    .map((c) => (c.whenUnsatisfiable === 'ScheduleAnyway' ? { ...c, whenUnsatisfiable: 'DoNotSchedule' } : c));

  const out: SchedulingPod = { ...pod, topologySpreadConstraints };
  if (affinity.nodeAffinity || affinity.podAffinity || affinity.podAntiAffinity) out.affinity = affinity;
  else delete out.affinity;
  return out;
}

/**
 * The relaxation ladder, as Karpenter schedules: first every preference is treated
 * as required; when a pod cannot be placed that way, preferences are dropped one at
 * a time (preferred pod affinity, then pod anti-affinity, then node affinity, each
 * lightest first; then ScheduleAnyway spread; then PreferNoSchedule taints) until
 * only the hard constraints remain. Level i keeps items i.. of that list.
 *
 * `preferNoScheduleMatters`: whether any node or group carries a PreferNoSchedule
 * taint; without one that rung would be a no-op.
 */
export function relaxationLevels(pod: SchedulingPod, preferNoScheduleMatters: boolean): RelaxationLevel[] {
  const aff = pod.affinity;
  const byWeight = <T extends { weight: number }>(xs: T[]) => xs.sort((a, b) => a.weight - b.weight);
  const items: Item[] = [
    ...byWeight((aff?.podAffinity?.preferredDuringSchedulingIgnoredDuringExecution ?? [])
      .map((p) => ({ kind: 'podAffinity' as const, weight: p.weight, term: p.podAffinityTerm }))),
    ...byWeight((aff?.podAntiAffinity?.preferredDuringSchedulingIgnoredDuringExecution ?? [])
      .map((p) => ({ kind: 'podAntiAffinity' as const, weight: p.weight, term: p.podAffinityTerm }))),
    ...byWeight((aff?.nodeAffinity?.preferredDuringSchedulingIgnoredDuringExecution ?? [])
      .filter((p) => p.weight > 0 && (p.preference.matchExpressions?.length || p.preference.matchFields?.length))
      .map((p) => ({ kind: 'nodeAffinity' as const, weight: p.weight, term: p.preference }))),
    ...pod.topologySpreadConstraints.filter((c) => c.whenUnsatisfiable === 'ScheduleAnyway')
      .map((c) => ({ kind: 'spread' as const, weight: 0, c })),
  ];
  if (preferNoScheduleMatters) items.push({ kind: 'preferNoSchedule', weight: 0 });

  const levels: RelaxationLevel[] = [];
  for (let i = 0; i <= items.length; i++) {
    const kept = items.slice(i);
    levels.push({
      pod: levelPod(pod, kept),
      avoidPreferNoSchedule: kept.some((k) => k.kind === 'preferNoSchedule'),
      relaxed: items.slice(0, i).map(describe),
    });
  }
  return levels;
}
