import type { ClusterSnapshot } from '../cluster/snapshot.js';
import type { ScaleUp } from '../packing/plan.js';
import { CPU, MEMORY } from '../scheduling/resources.js';

/**
 * The last check before actuation: trims a plan's scale-ups so that no group
 * goes beyond its max size and no NodePool beyond its cpu / memory / nodes
 * limits, counting what the pool already has (existing and in-flight nodes,
 * `PoolLimits.used`) plus what earlier scale-ups of the same plan add. The solver
 * should already respect these; this makes the guarantee independent of it.
 * Pure.
 */
export interface TrimmedScaleUp extends ScaleUp {
  /** `to` before trimming, when it was trimmed. */
  requestedTo?: number;
  trimmedBy?: 'maxSize' | 'nodePoolLimit';
}

export function enforceLimits(snapshot: ClusterSnapshot, scaleUps: readonly ScaleUp[]): TrimmedScaleUp[] {
  const groups = new Map(snapshot.groups.map((g) => [g.id, g]));
  const used = new Map(Object.entries(snapshot.limits).map(([pool, l]) => [pool, { ...l.used }]));
  const out: TrimmedScaleUp[] = [];
  for (const up of scaleUps) {
    if (up.to <= up.from) continue;
    const g = groups.get(`${up.kind}/${up.namespace}/${up.name}`);
    if (!g) continue;
    let to = Math.min(up.to, g.maxSize);
    let trimmedBy: TrimmedScaleUp['trimmedBy'] = to < up.to ? 'maxSize' : undefined;
    const limits = g.nodePool ? snapshot.limits[g.nodePool] : undefined;
    const u = g.nodePool ? used.get(g.nodePool) : undefined;
    if (limits && u) {
      const cpu = g.template.allocatable[CPU] ?? 0;
      const mem = g.template.allocatable[MEMORY] ?? 0;
      let add = 0;
      while (up.from + add < to) {
        const fits = (limits.nodes === undefined || u.nodes + add + 1 <= limits.nodes)
          && (limits.cpu === undefined || u.cpu + cpu * (add + 1) <= limits.cpu)
          && (limits.memory === undefined || u.memory + mem * (add + 1) <= limits.memory);
        if (!fits) break;
        add++;
      }
      if (up.from + add < to) {
        to = up.from + add;
        trimmedBy = 'nodePoolLimit';
      }
      u.nodes += add;
      u.cpu += cpu * add;
      u.memory += mem * add;
    }
    if (to <= up.from) continue;
    out.push({ ...up, to, ...(trimmedBy ? { requestedTo: up.to, trimmedBy } : {}) });
  }
  return out;
}
