import type { NodePoolDisruption } from '../api/nodepool.js';
import type { ClusterSnapshot, NodeGroup } from '../cluster/snapshot.js';
import type { SettingsOf } from './allowance.js';

/**
 * The disruption settings of a pass, from the snapshot (which parsed each NodePool
 * once): a group's pool's, else `poolless` for groups in no pool.
 */
export interface PassSettings {
  settingsOf: SettingsOf;
  /** Every distinct setting in force (each pool's and the pool-less one). */
  all: readonly NodePoolDisruption[];
}

export function passSettings(snapshot: Pick<ClusterSnapshot, 'disruption'>, poolless: NodePoolDisruption): PassSettings {
  const byPool = snapshot.disruption;
  return {
    settingsOf: (g: NodeGroup) => (g.nodePool ? byPool[g.nodePool] : undefined) ?? poolless,
    all: [poolless, ...Object.values(byPool)],
  };
}

/** True when some setting lets expiry remove nodes. */
export function expiryConfigured(all: readonly NodePoolDisruption[]): boolean {
  return all.some((d) => d.expireAfterMs !== null);
}

/** The shortest consolidateAfter in force (Infinity when every one is Never). */
export function shortestConsolidateAfter(all: readonly NodePoolDisruption[]): number {
  let after = Infinity;
  for (const d of all) if (d.consolidateAfterMs !== null) after = Math.min(after, d.consolidateAfterMs);
  return after;
}
