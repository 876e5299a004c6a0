import type { V1NodeSelector, V1NodeSelectorTerm } from '@kubernetes/client-node';
import { matchesNodeSelectorRequirement } from './label-selector.js';
import type { SchedulingPod } from './scheduling-pod.js';

/** The only field a NodeSelectorTerm's matchFields may name. */
const METADATA_NAME = 'metadata.name';

/**
 * One NodeSelectorTerm: all matchExpressions (labels) AND all matchFields
 * (`metadata.name`, In/NotIn) must hold. An empty term matches nothing, as in
 * k8s.io/component-helpers nodeaffinity. A node that does not exist yet has no name
 * (`nodeName` undefined): it is never `In` a list of names and always `NotIn` one.
 */
export function nodeSelectorTermMatches(term: V1NodeSelectorTerm, labels: Record<string, string>, nodeName?: string): boolean {
  const exprs = term.matchExpressions;
  const fields = term.matchFields;
  if (!exprs?.length && !fields?.length) return false;
  if (exprs) for (const e of exprs) if (!matchesNodeSelectorRequirement(e, labels)) return false;
  if (fields) {
    for (const f of fields) {
      if (f.key !== METADATA_NAME) return false;
      const names = f.values ?? [];
      if (f.operator === 'In') {
        if (nodeName === undefined || !names.includes(nodeName)) return false;
      } else if (f.operator === 'NotIn') {
        if (nodeName !== undefined && names.includes(nodeName)) return false;
      } else {
        return false;
      }
    }
  }
  return true;
}

/** A NodeSelector (required node affinity, PV node affinity): the OR of its terms. */
export function nodeSelectorTermsMatch(selector: V1NodeSelector, labels: Record<string, string>, nodeName?: string): boolean {
  for (const term of selector.nodeSelectorTerms ?? []) if (nodeSelectorTermMatches(term, labels, nodeName)) return true;
  return false;
}

/**
 * Whether the pod may run on a node with these labels: `spec.nodeSelector` (every
 * pair) AND required node affinity (OR of terms, AND within a term).
 */
export function nodeSelectorMatches(pod: SchedulingPod, labels: Record<string, string>, nodeName?: string): boolean {
  const ns = pod.nodeSelector;
  for (const k in ns) if (labels[k] !== ns[k]) return false;
  const required = pod.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution;
  if (required && !nodeSelectorTermsMatch(required, labels, nodeName)) return false;
  return true;
}

/**
 * The sum of the weights of the pod's preferred node affinity terms that match
 * (the NodeAffinity score plugin before normalisation). Empty terms and zero
 * weights count for nothing.
 */
export function preferredNodeAffinityScore(pod: SchedulingPod, labels: Record<string, string>, nodeName?: string): number {
  const preferred = pod.affinity?.nodeAffinity?.preferredDuringSchedulingIgnoredDuringExecution;
  if (!preferred) return 0;
  let score = 0;
  for (const p of preferred) {
    if (!p.weight) continue;
    if (nodeSelectorTermMatches(p.preference, labels, nodeName)) score += p.weight;
  }
  return score;
}
