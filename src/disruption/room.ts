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

/** cpu and memory a node's bound pods leave free. */
function nodeFree(n: ClusterSnapshot['nodes'][number]): { cpu: number; memory: number } {
  const used: Resources = {};
  for (const p of n.pods) {
    used[CPU] = (used[CPU] ?? 0) + (p.requests[CPU] ?? 0);
    used[MEMORY] = (used[MEMORY] ?? 0) + (p.requests[MEMORY] ?? 0);
  }
  return free(n.allocatable, used);
}

export function spareRoom(snapshot: ClusterSnapshot): SpareRoom {
  const total = { cpu: 0, memory: 0 };
  const byNode = new Map<string, { cpu: number; memory: number }>();
  for (const n of snapshot.nodes) {
    if (n.inFlight || n.unschedulable) continue;
    const f = nodeFree(n);
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

/**
 * The same kind of bound for a what-if next to pending (predicted) pods, checked
 * before its solve: the moved pods and the pending ones, less the baseline's
 * unschedulable count of the largest pending pods, need at most the room left on
 * the other nodes (in flight ones too: pending pods may use them) plus the new nodes
 * the what-if may add, the baseline's count and one more, each at most the largest
 * node of a group priced within the what-if's price bound. Any what-if that passes
 * evaluateRemoval meets it, so a refusal here only saves the solve. Why it matters:
 * a forecast's spare fills the free room, and each candidate's solve would only
 * find that predicted demand no longer fits. Pure.
 */

interface PendingRoom {
  /** Free cpu and memory of every schedulable node, in flight ones included, by name, and in all. */
  byNode: Map<string, { cpu: number; memory: number }>;
  total: { cpu: number; memory: number };
  /** Pending pods' requests, in all and largest first (prefix sums), per resource. */
  pending: { cpu: number[]; memory: number[] };
}

const pendingRooms = new WeakMap<ClusterSnapshot, PendingRoom>();

function prefixSumsDescending(values: number[]): number[] {
  values.sort((a, b) => b - a);
  const sums = [0];
  for (const v of values) sums.push(sums[sums.length - 1]! + v);
  return sums;
}

function pendingRoom(snapshot: ClusterSnapshot): PendingRoom {
  const cached = pendingRooms.get(snapshot);
  if (cached) return cached;
  const total = { cpu: 0, memory: 0 };
  const byNode = new Map<string, { cpu: number; memory: number }>();
  for (const n of snapshot.nodes) {
    if (n.unschedulable) continue;
    const f = nodeFree(n);
    byNode.set(n.name, f);
    total.cpu += f.cpu;
    total.memory += f.memory;
  }
  const room: PendingRoom = {
    byNode, total,
    pending: {
      cpu: prefixSumsDescending(snapshot.pendingPods.map((p) => p.requests[CPU] ?? 0)),
      memory: prefixSumsDescending(snapshot.pendingPods.map((p) => p.requests[MEMORY] ?? 0)),
    },
  };
  pendingRooms.set(snapshot, room);
  return room;
}

/**
 * Why no what-if removing `names` (whose movable pods are `moved`) can pass next to the
 * snapshot's pending pods, or undefined when one might. `newNodes` and `newPrice` are the
 * baseline plan's; `replacementBelow`: a replacement must cost less than this (absent: any).
 */
export function pendingRoomShort(
  snapshot: ClusterSnapshot, names: ReadonlySet<string>, moved: readonly { requests: Resources }[],
  baseline: { newNodes: number; newPrice: number; unschedulable: number }, replacementBelow?: number,
): string | undefined {
  const room = pendingRoom(snapshot);
  const priceBound = baseline.newPrice + (replacementBelow ?? Number.POSITIVE_INFINITY);
  const biggest = { cpu: 0, memory: 0 };
  for (const g of snapshot.groups) {
    if (g.pricePerHour >= priceBound) continue;
    const f = free(g.template.allocatable, g.daemonSetOverhead);
    biggest.cpu = Math.max(biggest.cpu, f.cpu);
    biggest.memory = Math.max(biggest.memory, f.memory);
  }
  const newNodes = baseline.newNodes + 1;
  const have = { cpu: room.total.cpu + newNodes * biggest.cpu, memory: room.total.memory + newNodes * biggest.memory };
  for (const name of names) {
    const own = room.byNode.get(name);
    if (own) {
      have.cpu -= own.cpu;
      have.memory -= own.memory;
    }
  }
  const k = Math.min(baseline.unschedulable, snapshot.pendingPods.length);
  const pendingCpu = room.pending.cpu[room.pending.cpu.length - 1]! - room.pending.cpu[k]!;
  const pendingMemory = room.pending.memory[room.pending.memory.length - 1]! - room.pending.memory[k]!;
  let cpu = pendingCpu;
  let memory = pendingMemory;
  for (const p of moved) {
    cpu += p.requests[CPU] ?? 0;
    memory += p.requests[MEMORY] ?? 0;
  }
  // A small tolerance: sums of millicores and bytes are exact, but keep float noise out.
  if (cpu <= have.cpu + 1e-6 && memory <= have.memory + 1e-6) return undefined;
  if (snapshot.pendingPods.length > 0) return 'predicted demand would no longer fit';
  return replacementBelow === undefined ? 'no room elsewhere, even with one new node' : 'no room elsewhere, and no cheaper node could take its pods';
}
