import type { V1Node, V1Pod } from '@kubernetes/client-node';
import { occupiesNode } from './validation.js';

/**
 * Since when each node has been empty (only DaemonSet / mirror pods bound), folded in
 * from the objects the state source shows. Emptiness is judged per decision on the
 * snapshot; this only remembers for how long.
 */
export class EmptyTracker {
  /** Node -> first observed empty (ms). */
  private readonly since = new Map<string, number>();
  /** Pod object -> the node it keeps occupied, or null (see occupiedNodes). */
  private readonly occupies = new WeakMap<V1Pod, string | null>();
  private lastPods: readonly V1Pod[] | undefined;
  private lastOccupied: ReadonlySet<string> = new Set();

  /** Folds in the current objects; returns the names of the nodes present. */
  observe(nodes: readonly V1Node[], pods: readonly V1Pod[], now: number): ReadonlySet<string> {
    const occupied = this.occupiedNodes(pods);
    const present = new Set<string>();
    for (const n of nodes) {
      const name = n.metadata?.name;
      if (!name) continue;
      present.add(name);
      if (occupied.has(name)) this.since.delete(name);
      else if (!this.since.has(name)) this.since.set(name, now);
    }
    for (const name of this.since.keys()) if (!present.has(name)) this.since.delete(name);
    return present;
  }

  /** Node -> when it was first seen empty (live view; callers must not keep it across observations). */
  emptySince(): ReadonlyMap<string, number> {
    return this.since;
  }

  /**
   * Nodes with a pod that keeps them (bound, not terminal, not following its node).
   * Objects are immutable (ClusterStateSource), so the answer is kept per pod object
   * and per pods list: most observations see the same list or mostly the same pods.
   */
  private occupiedNodes(pods: readonly V1Pod[]): ReadonlySet<string> {
    if (pods === this.lastPods) return this.lastOccupied;
    const occupied = new Set<string>();
    for (const pod of pods) {
      let node = this.occupies.get(pod);
      if (node === undefined) {
        const bound = pod.spec?.nodeName;
        node = bound && occupiesNode(pod) ? bound : null;
        this.occupies.set(pod, node);
      }
      if (node !== null) occupied.add(node);
    }
    this.lastPods = pods;
    this.lastOccupied = occupied;
    return occupied;
  }
}
