import type { NodeOccupancy } from './node-occupancy.js';

/**
 * Since when each node has been empty (only DaemonSet / mirror pods bound), folded in
 * from the nodes whose occupancy changed (node-occupancy.ts). Emptiness is judged per
 * decision on the snapshot; this only remembers for how long.
 */
export class EmptyTracker {
  /** Node -> first observed empty (ms). */
  private readonly since = new Map<string, number>();

  /** Folds in the nodes whose presence or occupants changed at `now`. */
  observe(occupancy: NodeOccupancy, changed: Iterable<string>, now: number): void {
    for (const name of changed) {
      if (!occupancy.has(name) || occupancy.occupied(name)) this.since.delete(name);
      else if (!this.since.has(name)) this.since.set(name, now);
    }
  }

  /** Node -> when it was first seen empty (live view; callers must not keep it across observations). */
  emptySince(): ReadonlyMap<string, number> {
    return this.since;
  }
}
