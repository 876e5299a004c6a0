import type { ClusterSnapshot, NodeGroup } from '../cluster/snapshot.js';
import { requiredAffinityTerms, requiredAntiAffinityTerms } from '../scheduling/pod-affinity.js';
import type { RelaxationLevel } from '../scheduling/preferences.js';
import { subtract } from '../scheduling/resources.js';
import { HOSTNAME } from '../scheduling/topology-spread.js';
import type { GroupInfo } from './bins.js';
import { nodeUse } from './node-use.js';
import type { BoundPod, SolverNode } from './solver-snapshot.js';

/**
 * Topology classes: groups whose nodes share every value of the topology keys in use
 * (hostname aside) are interchangeable when right-sizing, because moving a new node
 * between them changes no affinity or spread count.
 */

/**
 * The topology keys in use: those of the pending pods' required (anti-)affinity terms
 * and spread constraints at every relaxation level, and of running pods with required
 * anti-affinity (returned too: their terms repel pending pods). Hostname aside, sorted.
 */
export function topologyKeysInUse(
  ladders: readonly (readonly RelaxationLevel[])[], nodes: readonly SolverNode[],
): { keys: string[]; antiOwners: Array<{ pod: BoundPod; node: SolverNode }> } {
  const keys = new Set<string>();
  for (const ladder of ladders) {
    for (const l of ladder) {
      for (const t of [...requiredAffinityTerms(l.pod), ...requiredAntiAffinityTerms(l.pod)]) keys.add(t.topologyKey);
      for (const s of l.pod.topologySpreadConstraints) keys.add(s.topologyKey);
    }
  }
  const antiOwners: Array<{ pod: BoundPod; node: SolverNode }> = [];
  for (const n of nodes) {
    const use = nodeUse(n);
    for (const p of use.antiOwners) antiOwners.push({ pod: p, node: n });
    for (const k of use.antiTopologyKeys) keys.add(k);
  }
  keys.delete(HOSTNAME);
  return { keys: [...keys].sort(), antiOwners };
}

/** The packer's view of each group, and the groups of each topology class (cheapest first). */
export function groupsByTopologyClass(groups: ClusterSnapshot['groups'], topoKeys: readonly string[]): { groups: GroupInfo[]; tclasses: number[][] } {
  const tclassIndex = new Map<string, number>();
  const tclasses: number[][] = [];
  const infos = groups.map((group: NodeGroup, index) => {
    const labels = group.template.labels;
    const tkey = JSON.stringify(topoKeys.map((k) => labels[k] ?? null));
    let tclass = tclassIndex.get(tkey);
    if (tclass === undefined) {
      tclass = tclasses.length;
      tclassIndex.set(tkey, tclass);
      tclasses.push([]);
    }
    tclasses[tclass]!.push(index);
    return { index, group, capacity: subtract(group.template.allocatable, group.daemonSetOverhead), labels, taints: group.template.taints, tclass };
  });
  for (const members of tclasses) {
    members.sort((a, b) => infos[a]!.group.pricePerHour - infos[b]!.group.pricePerHour || a - b);
  }
  return { groups: infos, tclasses };
}
