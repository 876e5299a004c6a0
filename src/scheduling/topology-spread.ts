import type { V1LabelSelector, V1LabelSelectorRequirement, V1Taint, V1TopologySpreadConstraint } from '@kubernetes/client-node';
import { matchesLabelSelector } from './label-selector.js';
import { nodeSelectorMatches } from './node-affinity.js';
import type { SchedulingPod } from './scheduling-pod.js';
import { untoleratedTaint } from './taints.js';

export const HOSTNAME = 'kubernetes.io/hostname';

/**
 * A topology spread constraint resolved for counting: matchLabelKeys folded into
 * the selector, defaults applied (minDomains 1, nodeAffinityPolicy Honor,
 * nodeTaintsPolicy Ignore), as the PodTopologySpread plugin does.
 */
export interface ResolvedSpread {
  topologyKey: string;
  maxSkew: number;
  minDomains: number;
  /** whenUnsatisfiable: DoNotSchedule. ScheduleAnyway constraints are preferences. */
  hard: boolean;
  selector: V1LabelSelector | undefined;
  namespace: string;
  honourNodeAffinity: boolean;
  honourTaints: boolean;
  /** Constraints with equal signatures count the same pods on the same nodes. */
  signature: string;
}

export function resolveSpread(c: V1TopologySpreadConstraint, pod: SchedulingPod): ResolvedSpread {
  let selector: V1LabelSelector | undefined = c.labelSelector ?? undefined;
  if (selector && c.matchLabelKeys?.length) {
    const extra: V1LabelSelectorRequirement[] = [];
    for (const k of c.matchLabelKeys) if (k in pod.labels) extra.push({ key: k, operator: 'In', values: [pod.labels[k]!] });
    if (extra.length) selector = { ...selector, matchExpressions: [...(selector.matchExpressions ?? []), ...extra] };
  }
  const honourNodeAffinity = (c.nodeAffinityPolicy ?? 'Honor') === 'Honor';
  const honourTaints = c.nodeTaintsPolicy === 'Honor';
  const hard = c.whenUnsatisfiable !== 'ScheduleAnyway';
  const minDomains = hard && c.minDomains && c.minDomains > 0 ? c.minDomains : 1;
  const signature = JSON.stringify([
    c.topologyKey, selector ?? null, pod.namespace,
    honourNodeAffinity ? [pod.nodeSelector, pod.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? null] : null,
    honourTaints ? pod.tolerations : null,
  ]);
  return {
    topologyKey: c.topologyKey, maxSkew: Math.max(1, c.maxSkew), minDomains, hard, selector, namespace: pod.namespace,
    honourNodeAffinity, honourTaints, signature,
  };
}

/** Whether the spread constraint counts pods on (and offers as a domain) a node with these labels and taints. */
export function spreadCountsNode(
  s: ResolvedSpread, pod: SchedulingPod, labels: Record<string, string>, taints: readonly V1Taint[],
): boolean {
  if (!(s.topologyKey in labels)) return false;
  if (s.honourNodeAffinity && !nodeSelectorMatches(pod, labels)) return false;
  if (s.honourTaints && untoleratedTaint(taints, pod.tolerations)) return false;
  return true;
}

/** Whether the constraint's selector counts a pod with this namespace and these labels. */
export function spreadSelects(s: ResolvedSpread, namespace: string, labels: Record<string, string>): boolean {
  return namespace === s.namespace && matchesLabelSelector(s.selector, labels);
}

/**
 * The global minimum that skew is measured against: the smallest count over the
 * eligible domains, or 0 when fewer than minDomains domains exist.
 */
export function globalMinimum(domainCounts: Iterable<number>, domainCount: number, minDomains: number): number {
  if (domainCount < minDomains) return 0;
  let min = Infinity;
  for (const c of domainCounts) if (c < min) min = c;
  return min === Infinity ? 0 : min;
}

/**
 * How many more pods a domain can take now: for pods the constraint selects,
 * `count + 1 - min <= maxSkew` must hold after each one; a pod it does not select
 * only needs the domain not to be over the skew already.
 */
export function spreadAllowance(count: number, min: number, maxSkew: number, selfMatch: boolean): number {
  if (selfMatch) return Math.max(0, maxSkew + min - count);
  return count - min <= maxSkew ? Infinity : 0;
}
