import { NODEPOOL_LABEL, type NodePool } from '../api/nodepool.js';
import { CPU, MEMORY } from '../scheduling/resources.js';
import type { NodeGroup, PoolLimits, SnapshotNode } from './snapshot.js';

/** Each NodePool's limits and what its nodes (existing and in flight) already use of them. */
export function poolLimits(pools: readonly NodePool[], groups: readonly NodeGroup[], nodes: readonly SnapshotNode[]): Record<string, PoolLimits> {
  const out: Record<string, PoolLimits> = {};
  if (pools.length === 0) return out;
  const poolOfGroup = new Map<string, string>();
  for (const g of groups) if (g.nodePool) poolOfGroup.set(g.id, g.nodePool);
  for (const p of pools) {
    const l: PoolLimits = { used: { cpu: 0, memory: 0, nodes: 0 } };
    if (p.limits.cpu !== undefined) l.cpu = p.limits.cpu;
    if (p.limits.memory !== undefined) l.memory = p.limits.memory;
    if (p.limits.nodes !== undefined) l.nodes = p.limits.nodes;
    out[p.name] = l;
  }
  for (const n of nodes) {
    const pool = (n.groupId ? poolOfGroup.get(n.groupId) : undefined) ?? n.labels[NODEPOOL_LABEL];
    const l = pool ? out[pool] : undefined;
    if (!l) continue;
    l.used.cpu += n.allocatable[CPU] ?? 0;
    l.used.memory += n.allocatable[MEMORY] ?? 0;
    l.used.nodes += 1;
  }
  return out;
}
