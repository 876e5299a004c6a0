import { nodePoolForGroup, requirementsMatch, type NodePool } from '../api/nodepool.js';
import { matchesLabelSelector, matchesNodeSelectorRequirement } from '../scheduling/label-selector.js';

/**
 * Which NodePool a node group scales under, or whether it is held
 * (docs/adr/0138-a-stricter-nodepool-never-scales-more.md). Pools restrict, never loosen:
 * - no NodePool at all: every managed group scales with the shared defaults (Cluster
 *   Autoscaler's model, so a migration needs no pool);
 * - once any NodePool exists (valid or not): a group scales only under a pool that
 *   admits it (its nodeGroupSelector selects the group and its requirements hold for
 *   the group's node labels); any other group is held, neither grown nor shrunk.
 * So no edit of a pool (a new requirement, a narrower selector, an invalid spec)
 * moves a group out from under the pool's limits into fewer limits. Pure.
 */

export type PoolAdmission =
  | { pool: NodePool; held?: undefined }
  | { pool?: undefined; held?: undefined }
  | { pool?: undefined; held: string };

/**
 * `pools` are the valid pools; `poolObjects` counts every NodePool object there is
 * (an invalid one holds the groups it might have admitted, as a valid one would).
 */
export function admitGroup(
  pools: readonly NodePool[], poolObjects: number, groupLabels: Record<string, string>, templateLabels: Record<string, string>,
): PoolAdmission {
  const pool = nodePoolForGroup(pools, groupLabels, templateLabels);
  if (pool) return { pool };
  if (poolObjects === 0) return {};
  return { held: heldWhy(pools, poolObjects, groupLabels, templateLabels) };
}

function heldWhy(pools: readonly NodePool[], poolObjects: number, groupLabels: Record<string, string>, templateLabels: Record<string, string>): string {
  const refused: string[] = [];
  for (const p of pools) {
    if (!p.nodeGroupSelector || !matchesLabelSelector(p.nodeGroupSelector, groupLabels)) continue;
    if (requirementsMatch(p.requirements, templateLabels)) continue;
    const r = p.requirements.find((q) => !matchesNodeSelectorRequirement(q, templateLabels))!;
    const values = r.values.length ? ` [${r.values.join(', ')}]` : '';
    const has = templateLabels[r.key];
    refused.push(`NodePool ${p.name} selects it but its nodes ${has === undefined ? `have no label ${r.key}` : `have ${r.key}=${has}`}, against requirement ${r.key} ${r.operator}${values}`);
  }
  const invalid = poolObjects - pools.length;
  const because = refused.length > 0 ? refused.join('; ')
    : `no NodePool's nodeGroupSelector selects it${invalid > 0 ? ` (${invalid} NodePool${invalid === 1 ? ' is' : 's are'} invalid and may have)` : ''}`;
  return `held, neither scaled up nor down: ${because}; once any NodePool exists, only groups a NodePool admits are scaled (select it with a pool, or add a catch-all pool with nodeGroupSelector: {})`;
}
