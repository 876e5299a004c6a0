import type { V1LabelSelector, V1LabelSelectorRequirement, V1PodAffinityTerm } from '@kubernetes/client-node';
import { matchesLabelSelector } from './label-selector.js';
import type { SchedulingPod } from './scheduling-pod.js';

/** The namespaces a pod affinity term selects pods from. */
export interface NamespaceScope {
  all: boolean;
  names: ReadonlySet<string>;
}

/**
 * A pod (anti-)affinity term with its namespaces resolved against the pod that
 * carries it, and matchLabelKeys / mismatchLabelKeys folded into the selector,
 * as kube-scheduler's InterPodAffinity plugin does before counting.
 */
export interface ResolvedAffinityTerm {
  topologyKey: string;
  /** undefined (a nil selector) selects no pod. */
  selector: V1LabelSelector | undefined;
  namespaces: NamespaceScope;
  /** Identical terms share one signature, so the packer counts them once. */
  signature: string;
}

function isEmptySelector(s: V1LabelSelector | undefined | null): boolean {
  return !!s && !s.matchExpressions?.length && !Object.keys(s.matchLabels ?? {}).length;
}

/**
 * `namespaces` and `namespaceSelector` are ORed; both absent means the owner
 * pod's namespace; an empty namespaceSelector (`{}`) means every namespace.
 */
export function resolveNamespaces(
  term: V1PodAffinityTerm, ownerNamespace: string, namespaceLabels: Record<string, Record<string, string>>,
): NamespaceScope {
  const names = new Set<string>(term.namespaces ?? []);
  const sel = term.namespaceSelector;
  if (sel) {
    if (isEmptySelector(sel)) return { all: true, names };
    for (const [ns, labels] of Object.entries(namespaceLabels)) if (matchesLabelSelector(sel, labels)) names.add(ns);
  } else if (names.size === 0) {
    names.add(ownerNamespace);
  }
  return { all: false, names };
}

export function resolveAffinityTerm(
  term: V1PodAffinityTerm, owner: Pick<SchedulingPod, 'namespace' | 'labels'>, namespaceLabels: Record<string, Record<string, string>>,
): ResolvedAffinityTerm {
  let selector: V1LabelSelector | undefined = term.labelSelector ?? undefined;
  const extra: V1LabelSelectorRequirement[] = [];
  // matchLabelKeys / mismatchLabelKeys (KEP-3633) only apply with a non-nil selector.
  if (selector) {
    for (const k of term.matchLabelKeys ?? []) if (k in owner.labels) extra.push({ key: k, operator: 'In', values: [owner.labels[k]!] });
    for (const k of term.mismatchLabelKeys ?? []) if (k in owner.labels) extra.push({ key: k, operator: 'NotIn', values: [owner.labels[k]!] });
    if (extra.length) selector = { ...selector, matchExpressions: [...(selector.matchExpressions ?? []), ...extra] };
  }
  const namespaces = resolveNamespaces(term, owner.namespace, namespaceLabels);
  const signature = JSON.stringify([term.topologyKey, selector ?? null, namespaces.all, [...namespaces.names].sort()]);
  return { topologyKey: term.topologyKey, selector, namespaces, signature };
}

/** Whether a pod (by namespace and labels) is one the term selects. */
export function termSelects(term: ResolvedAffinityTerm, namespace: string, labels: Record<string, string>): boolean {
  if (!term.namespaces.all && !term.namespaces.names.has(namespace)) return false;
  return matchesLabelSelector(term.selector, labels);
}

/** Required pod affinity terms of a pod (all must hold). */
export function requiredAffinityTerms(pod: Pick<SchedulingPod, 'affinity'>): V1PodAffinityTerm[] {
  return pod.affinity?.podAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? [];
}

/** Required pod anti-affinity terms of a pod (all must hold; they also repel others symmetrically). */
export function requiredAntiAffinityTerms(pod: Pick<SchedulingPod, 'affinity'>): V1PodAffinityTerm[] {
  return pod.affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? [];
}

/**
 * Per-domain counts of the pods a term selects. `total` lets the affinity check
 * apply kube-scheduler's rule that a pod matching its own affinity term may go
 * anywhere while no pod matches the term yet (the first replica of a group).
 */
export class DomainCounts {
  readonly counts = new Map<string, number>();
  total = 0;

  get(domain: string): number {
    return this.counts.get(domain) ?? 0;
  }

  add(domain: string | undefined, n: number): void {
    if (domain === undefined || n === 0) return;
    this.counts.set(domain, (this.counts.get(domain) ?? 0) + n);
    this.total += n;
  }
}
