import type { V1Pod } from '@kubernetes/client-node';
import { CPU, MEMORY, podRequests, type Resources } from '../scheduling/resources.js';
import { ownerKeys } from './owner.js';
import { usageFromNode, type ExtenderState, type NodeEntry, type NodeUsage } from './state.js';
import { MAX_EXTENDER_PRIORITY, MIN_EXTENDER_PRIORITY, type Candidates, type HostPriorityList } from './types.js';

/** Score range given to packing; the rest of 0..10 is the provisioned-for bonus. */
export const PACKING_MAX_SCORE = 8;
export const PROVISIONED_BONUS = MAX_EXTENDER_PRIORITY - PACKING_MAX_SCORE;

/**
 * Tight packing: a node that is fuller after placing the pod scores higher (mean of
 * cpu and memory utilisation after placement, scaled to 0..8), so load concentrates
 * and emptier nodes drain and consolidate. Capacity Headroom provisioned for this
 * pod's workload gets +2, so a pod lands on the node that was brought up for it.
 * A node the pod does not fit on, or that the state does not know (NodeNames mode),
 * scores 0; kube-scheduler's own plugins still rank those.
 *
 * Nodes scoring 0 are left out of the answer: kube-scheduler adds an extender's score
 * only to the hosts it lists, so an absent host's total is what a 0 would have made it,
 * and the list it decodes for every pod (and this process encodes) is shorter (ADR 0135).
 */
export function prioritizeNodes(state: ExtenderState, pod: V1Pod, candidates: Candidates): HostPriorityList {
  const requests = podRequests(pod);
  const cpu = requests[CPU] ?? 0;
  const memory = requests[MEMORY] ?? 0;
  const owners = ownerKeys(pod);
  const bonus = (e: NodeEntry | undefined) => {
    const set = e?.provisionedFor;
    return set && owners.some((o) => set.has(o)) ? PROVISIONED_BONUS : 0;
  };
  const out: HostPriorityList = [];
  if (candidates.mode === 'names') {
    const names = candidates.names;
    for (let i = 0; i < names.length; i++) {
      const name = names[i]!;
      const e = state.entry(name);
      if (e === undefined) continue;
      const score = clampScore((e.usage ? fill(e.allocCpu, e.requestedCpu + cpu, e.allocMemory, e.requestedMemory + memory) : 0) + bonus(e));
      if (score > MIN_EXTENDER_PRIORITY) out.push({ Host: name, Score: score });
    }
    return out;
  }
  for (const n of candidates.nodes) {
    const name = n.metadata!.name!;
    const e = state.entry(name);
    const usage = e?.usage ?? usageFromNode(n);
    const score = clampScore(packingScore(usage, requests) + bonus(e));
    if (score > MIN_EXTENDER_PRIORITY) out.push({ Host: name, Score: score });
  }
  return out;
}

/**
 * The extender API's range, whatever the inputs: quantities are refused negative when
 * parsed, but a score outside 0..10 would be multiplied by the extender's weight into
 * every node's total, so it is clamped here as well.
 */
function clampScore(score: number): number {
  if (!(score > MIN_EXTENDER_PRIORITY)) return MIN_EXTENDER_PRIORITY;
  return Math.min(MAX_EXTENDER_PRIORITY, Math.round(score));
}

/** The packing score from unpacked numbers: mean utilisation after placement over the resources the node has. */
function fill(allocCpu: number, cpuAfter: number, allocMemory: number, memoryAfter: number): number {
  let sum = 0;
  let counted = 0;
  if (allocCpu > 0) {
    if (cpuAfter > allocCpu) return 0;
    sum += cpuAfter / allocCpu;
    counted++;
  }
  if (allocMemory > 0) {
    if (memoryAfter > allocMemory) return 0;
    sum += memoryAfter / allocMemory;
    counted++;
  }
  return counted === 0 ? 0 : Math.round((PACKING_MAX_SCORE * sum) / counted);
}

/** 0..PACKING_MAX_SCORE: utilisation after placement; 0 when the pod does not fit. */
export function packingScore(usage: NodeUsage, requests: Resources): number {
  return fill(
    usage.allocatable[CPU] ?? 0, (usage.requested[CPU] ?? 0) + (requests[CPU] ?? 0),
    usage.allocatable[MEMORY] ?? 0, (usage.requested[MEMORY] ?? 0) + (requests[MEMORY] ?? 0),
  );
}
