import type { V1Taint } from '@kubernetes/client-node';
import {
  DomainCounts, type ResolvedAffinityTerm, requiredAffinityTerms, requiredAntiAffinityTerms, resolveAffinityTerm, termSelects,
} from '../scheduling/pod-affinity.js';
import type { SchedulingPod } from '../scheduling/scheduling-pod.js';
import { type ResolvedSpread, globalMinimum, resolveSpread, spreadAllowance, spreadCountsNode, spreadSelects } from '../scheduling/topology-spread.js';

/** A node as the inter-pod filters see it: its labels, taints and bound pods. */
export interface TopologyNode {
  labels: Record<string, string>;
  taints: readonly V1Taint[];
  pods: Iterable<SchedulingPod>;
}

/** Whether a pod has constraints that depend on other pods (then `interPodFilter` matters). */
export function hasInterPodConstraints(pod: SchedulingPod): boolean {
  return requiredAffinityTerms(pod).length > 0 || requiredAntiAffinityTerms(pod).length > 0
    || pod.topologySpreadConstraints.some((c) => c.whenUnsatisfiable !== 'ScheduleAnyway');
}

/**
 * kube-scheduler's InterPodAffinity and PodTopologySpread filters for one pod,
 * built from the shared resolvers and counters of src/scheduling: one pass over
 * the bound pods counts every term's and constraint's domains, then each node is
 * checked in O(terms). `antiAffinityPods` are the bound pods with required
 * anti-affinity (they repel the new pod symmetrically).
 */
export function interPodFilter(
  pod: SchedulingPod,
  nodes: Iterable<TopologyNode>,
  antiAffinityPods: Iterable<{ pod: SchedulingPod; nodeLabels: Record<string, string> }>,
  namespaceLabels: Record<string, Record<string, string>> = {},
): (node: TopologyNode) => boolean {
  const affinity = requiredAffinityTerms(pod).map((t) => resolveAffinityTerm(t, pod, namespaceLabels));
  const anti = requiredAntiAffinityTerms(pod).map((t) => resolveAffinityTerm(t, pod, namespaceLabels));
  const spreads = pod.topologySpreadConstraints.filter((c) => c.whenUnsatisfiable !== 'ScheduleAnyway').map((c) => resolveSpread(c, pod));
  const termCounts = new Map<ResolvedAffinityTerm, DomainCounts>();
  for (const t of [...affinity, ...anti]) termCounts.set(t, new DomainCounts());
  const spreadCounts = new Map<ResolvedSpread, Map<string, number>>();
  for (const s of spreads) spreadCounts.set(s, new Map());

  if (termCounts.size > 0 || spreads.length > 0) {
    for (const n of nodes) {
      const eligible = spreads.filter((s) => spreadCountsNode(s, pod, n.labels, n.taints));
      for (const s of eligible) {
        const m = spreadCounts.get(s)!;
        const d = n.labels[s.topologyKey]!;
        if (!m.has(d)) m.set(d, 0);
      }
      for (const q of n.pods) {
        for (const [t, c] of termCounts) if (termSelects(t, q.namespace, q.labels)) c.add(n.labels[t.topologyKey], 1);
        for (const s of eligible) {
          if (!spreadSelects(s, q.namespace, q.labels)) continue;
          const m = spreadCounts.get(s)!;
          const d = n.labels[s.topologyKey]!;
          m.set(d, m.get(d)! + 1);
        }
      }
    }
  }
  // Existing pods whose anti-affinity selects this pod forbid their domains.
  const forbidden: [string, string][] = [];
  for (const e of antiAffinityPods) {
    for (const t of requiredAntiAffinityTerms(e.pod)) {
      const r = resolveAffinityTerm(t, e.pod, namespaceLabels);
      const v = e.nodeLabels[r.topologyKey];
      if (v !== undefined && termSelects(r, pod.namespace, pod.labels)) forbidden.push([r.topologyKey, v]);
    }
  }
  const minimum = new Map<ResolvedSpread, number>();
  for (const [s, m] of spreadCounts) minimum.set(s, globalMinimum(m.values(), m.size, s.minDomains));

  return (n) => {
    for (const [k, v] of forbidden) if (n.labels[k] === v) return false;
    for (const t of affinity) {
      const d = n.labels[t.topologyKey];
      if (d === undefined) return false;
      const c = termCounts.get(t)!;
      // The first pod of a group that matches its own affinity term may go anywhere.
      if (c.get(d) === 0 && !(c.total === 0 && termSelects(t, pod.namespace, pod.labels))) return false;
    }
    for (const t of anti) {
      const d = n.labels[t.topologyKey];
      if (d !== undefined && termCounts.get(t)!.get(d) > 0) return false;
    }
    for (const s of spreads) {
      if (!spreadCountsNode(s, pod, n.labels, n.taints)) return false;
      const count = spreadCounts.get(s)!.get(n.labels[s.topologyKey]!) ?? 0;
      if (spreadAllowance(count, minimum.get(s)!, s.maxSkew, spreadSelects(s, pod.namespace, pod.labels)) < 1) return false;
    }
    return true;
  };
}
