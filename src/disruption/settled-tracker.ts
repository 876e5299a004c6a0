import type { NodeOccupancy } from './node-occupancy.js';

/**
 * Since when the pods bound to each node have not changed (Karpenter's
 * consolidateAfter for underutilised nodes: a node whose pods keep coming and going
 * is not a consolidation candidate yet). Folded in from the nodes whose occupancy
 * changed (node-occupancy.ts); a node's pods are summarised by their count and a hash
 * of their uids, so a pod that came and went between two looks changes nothing.
 */
export class SettledTracker {
  /** Node -> signature of its pods, and since when it has held. */
  private readonly nodes = new Map<string, { sig: string; since: number }>();

  /** Folds in the nodes whose presence or occupants changed at `now`. */
  observe(occupancy: NodeOccupancy, changed: Iterable<string>, now: number): void {
    for (const name of changed) {
      if (!occupancy.has(name)) {
        this.nodes.delete(name);
        continue;
      }
      const sig = occupancy.signature(name);
      const cur = this.nodes.get(name);
      if (!cur || cur.sig !== sig) this.nodes.set(name, { sig, since: now });
    }
  }

  /** Node -> since when its pods have not changed (a copy). */
  settledSince(): ReadonlyMap<string, number> {
    const out = new Map<string, number>();
    for (const [name, s] of this.nodes) out.set(name, s.since);
    return out;
  }
}
