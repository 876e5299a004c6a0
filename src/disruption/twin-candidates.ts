import { HOSTNAME } from '../scheduling/topology-spread.js';
import type { ConsolidationCandidate } from './consolidation-candidates.js';

/**
 * Twins: candidates whose single-node what-ifs are the same problem. Two nodes of
 * one group, with the same labels (but their hostname), taints, allocatable and
 * price, whose pods are of the same equivalence classes, leave the cluster with the
 * same capacity and the same pods to place, only under other names: removing either
 * is judged alike. A large group of nodes running one Deployment has many, and each
 * would cost a solve over the whole cluster, so a twin of a refused candidate is
 * refused without one. Equivalence keys leave out per-pod labels, so a rule aimed at
 * one pod's name could tell twins apart; reusing a refusal then only keeps a node.
 * Pure.
 */
export function twinKey(c: ConsolidationCandidate): string {
  const { node } = c;
  const labels: Record<string, string> = {};
  for (const [k, v] of Object.entries(node.labels)) if (k !== HOSTNAME) labels[k] = v;
  const pods = node.pods.map((p) => p.equivalenceKey).sort();
  return JSON.stringify([
    c.group.id, c.price, c.disruption, labels, node.taints, node.allocatable, node.deviceBlocked ?? null, pods,
  ]);
}
