import { nodePoolTemplateHash } from '../api/nodepool-hash.js';
import type { NodePool } from '../api/nodepool.js';
import type { PoolTemplate } from './snapshot.js';

/**
 * Each NodePool's current machineTemplate (its hash and namespace), for the pools that
 * have one: resolved once per snapshot, so drift compares Machines with it and parses no
 * NodePool itself (docs/adr/0084-drift.md).
 */
export function poolTemplates(pools: readonly NodePool[]): Record<string, PoolTemplate> {
  const out: Record<string, PoolTemplate> = {};
  for (const p of pools) {
    if (p.machineTemplate) out[p.name] = { hash: nodePoolTemplateHash(p.machineTemplate), namespace: p.machineTemplate.namespace };
  }
  return out;
}
