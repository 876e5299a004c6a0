import type { NodePoolDisruption } from '../api/nodepool.js';
import type { ClusterSnapshot, NodeGroup } from '../cluster/snapshot.js';
import type { SettingsOf } from './allowance.js';
import { withScaleDownOptions, type GroupDisruption, type ScaleDownOptions } from './autoscaling-options.js';

/**
 * The disruption settings of a pass, from the snapshot (which parsed each NodePool
 * once): a group's pool's, else `poolless` for groups in no pool, with the group's
 * own Cluster Autoscaler scale-down options (autoscaling-options.ts) on top.
 */
export interface PassSettings {
  settingsOf: SettingsOf;
  /** Every distinct setting in force (each pool's, the pool-less one, and groups' own). */
  all: readonly GroupDisruption[];
}

export function passSettings(
  snapshot: Pick<ClusterSnapshot, 'disruption'>, poolless: NodePoolDisruption, byGroup: ReadonlyMap<string, ScaleDownOptions> = new Map(),
): PassSettings {
  const byPool = snapshot.disruption;
  const base = (g: NodeGroup) => (g.nodePool ? byPool[g.nodePool] : undefined) ?? poolless;
  const overridden = new Map<string, ReturnType<SettingsOf>>();
  return {
    settingsOf: (g: NodeGroup) => {
      const opts = byGroup.get(g.id);
      if (!opts) return base(g);
      let s = overridden.get(g.id);
      if (!s) overridden.set(g.id, (s = withScaleDownOptions(base(g), opts)));
      return s;
    },
    all: [poolless, ...Object.values(byPool), ...[...byGroup.values()].map((o) => withScaleDownOptions(poolless, o))],
  };
}

/** True when some setting lets expiry remove nodes. */
export function expiryConfigured(all: readonly NodePoolDisruption[]): boolean {
  return all.some((d) => d.expireAfterMs !== null);
}

/** True when some setting consolidates underutilised nodes. */
export function consolidationConfigured(all: readonly GroupDisruption[]): boolean {
  return all.some((d) => d.consolidationPolicy === 'WhenEmptyOrUnderutilized' && d.consolidateAfterMs !== null);
}

/** The shortest consolidateAfter (or unready time) in force (Infinity when every one is Never). */
export function shortestConsolidateAfter(all: readonly GroupDisruption[]): number {
  let after = Infinity;
  for (const d of all) {
    if (d.consolidateAfterMs !== null) after = Math.min(after, d.consolidateAfterMs);
    if (d.unreadyAfterMs !== undefined) after = Math.min(after, d.unreadyAfterMs);
  }
  return after;
}
