import type { ClusterSnapshot, NodeGroup } from '../cluster/snapshot.js';
import { CPU, MEMORY, type Resources } from '../scheduling/resources.js';
import type { ConsolidationCandidate } from './consolidation-candidates.js';
import { podsToMove } from './pods.js';

/**
 * A necessary condition for a single-node action, checked on sums before any solve:
 * the candidate's pods need at most the cpu and memory left free on the other
 * existing nodes, or that plus one node of a cheaper group. A candidate that fails
 * it cannot be deleted or replaced; one that passes still needs the solve. Pure.
 */

/** cpu and memory left free on existing, schedulable nodes, in all and per node. */
export interface SpareRoom {
  total: { cpu: number; memory: number };
  byNode: Map<string, { cpu: number; memory: number }>;
}

function free(allocatable: Resources, used: Resources): { cpu: number; memory: number } {
  return { cpu: Math.max(0, (allocatable[CPU] ?? 0) - (used[CPU] ?? 0)), memory: Math.max(0, (allocatable[MEMORY] ?? 0) - (used[MEMORY] ?? 0)) };
}

export function spareRoom(snapshot: ClusterSnapshot): SpareRoom {
  const total = { cpu: 0, memory: 0 };
  const byNode = new Map<string, { cpu: number; memory: number }>();
  for (const n of snapshot.nodes) {
    if (n.inFlight || n.unschedulable) continue;
    const used: Resources = {};
    for (const p of n.pods) {
      used[CPU] = (used[CPU] ?? 0) + (p.requests[CPU] ?? 0);
      used[MEMORY] = (used[MEMORY] ?? 0) + (p.requests[MEMORY] ?? 0);
    }
    const f = free(n.allocatable, used);
    byNode.set(n.name, f);
    total.cpu += f.cpu;
    total.memory += f.memory;
  }
  return { total, byNode };
}

/** Why no solve can delete or cheaply replace `c`, or undefined when one might. */
export function roomFor(c: ConsolidationCandidate, spare: SpareRoom, groups: readonly NodeGroup[]): string | undefined {
  let cpu = 0;
  let memory = 0;
  for (const p of podsToMove(c.node)) {
    cpu += p.requests[CPU] ?? 0;
    memory += p.requests[MEMORY] ?? 0;
  }
  const own = spare.byNode.get(c.node.name) ?? { cpu: 0, memory: 0 };
  const short = { cpu: cpu - (spare.total.cpu - own.cpu), memory: memory - (spare.total.memory - own.memory) };
  if (short.cpu <= 0 && short.memory <= 0) return undefined;
  for (const g of groups) {
    if (g.pricePerHour >= c.price || g.replicas >= g.maxSize) continue;
    const room = free(g.template.allocatable, g.daemonSetOverhead);
    if (room.cpu >= short.cpu && room.memory >= short.memory) return undefined;
  }
  return 'no room elsewhere, and no cheaper node could take its pods';
}
