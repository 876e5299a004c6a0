import type { V1Pod } from '@kubernetes/client-node';
import { CPU, MEMORY, podRequests, type Resources } from '../scheduling/resources.js';
import { ownerKey } from './owner.js';
import { usageFromNode, type ExtenderState, type NodeUsage } from './state.js';
import { MAX_EXTENDER_PRIORITY, type Candidates, type HostPriorityList } from './types.js';

/** Score range given to packing; the rest of 0..10 is the provisioned-for bonus. */
export const PACKING_MAX_SCORE = 8;
export const PROVISIONED_BONUS = MAX_EXTENDER_PRIORITY - PACKING_MAX_SCORE;

const PACKED_RESOURCES = [CPU, MEMORY];

/**
 * Tight packing: a node that is fuller after placing the pod scores higher (mean of
 * cpu and memory utilisation after placement, scaled to 0..8), so load concentrates
 * and emptier nodes drain and consolidate. Capacity Headroom provisioned for this
 * pod's workload gets +2, so a pod lands on the node that was brought up for it.
 * A node the pod does not fit on, or that the state does not know (NodeNames mode),
 * scores 0; kube-scheduler's own plugins still rank those.
 */
export function prioritizeNodes(state: ExtenderState, pod: V1Pod, candidates: Candidates): HostPriorityList {
  const requests = podRequests(pod);
  const owner = ownerKey(pod);
  const score = (name: string, usage: NodeUsage | undefined) => ({
    Host: name,
    Score: (usage ? packingScore(usage, requests) : 0) + (state.isProvisionedFor(name, owner) ? PROVISIONED_BONUS : 0),
  });
  if (candidates.mode === 'names') return candidates.names.map((name) => score(name, state.node(name)));
  return candidates.nodes.map((n) => {
    const name = n.metadata!.name!;
    return score(name, state.node(name) ?? usageFromNode(n));
  });
}

/** 0..PACKING_MAX_SCORE: utilisation after placement; 0 when the pod does not fit. */
export function packingScore(usage: NodeUsage, requests: Resources): number {
  let sum = 0;
  let counted = 0;
  for (const r of PACKED_RESOURCES) {
    const alloc = usage.allocatable[r] ?? 0;
    if (alloc <= 0) continue;
    const after = ((usage.requested[r] ?? 0) + (requests[r] ?? 0)) / alloc;
    if (after > 1) return 0;
    sum += after;
    counted++;
  }
  return counted === 0 ? 0 : Math.round((PACKING_MAX_SCORE * sum) / counted);
}
