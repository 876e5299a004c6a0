import type { V1Node, V1Pod } from '@kubernetes/client-node';
import { forEachListChange } from '../cluster/list-changes.js';
import { occupiesNode } from './validation.js';

/** A pod that keeps a node occupied: the node and the hash of the pod's uid. */
interface Occupant {
  node: string;
  hash: number;
}

const podKey = (p: V1Pod) => `${p.metadata?.namespace ?? ''}/${p.metadata?.name ?? ''}`;
const nodeKey = (n: V1Node) => n.metadata?.name;

/**
 * Which nodes are present and which pods keep each of them occupied (bound, not
 * terminal, not following their node: occupiesNode), kept change by change. Each
 * `update` walks the new lists against the last ones by identity (list-changes.ts)
 * and folds in only the objects that changed, so a second of churn in a cluster of
 * 50,000 pods costs its changes, not a pass over every pod. What it holds equals a
 * fresh computation from the latest lists (test/unit/disruption/node-occupancy.test.ts).
 * A node's occupants are summarised by their count and the sum of their uid hashes:
 * the settled tracker's signature.
 */
export class NodeOccupancy {
  private readonly occupants = new Map<string, Occupant>();
  private readonly perNode = new Map<string, { count: number; sum: number }>();
  /** Names of the present nodes. */
  private readonly nodes = new Set<string>();
  private lastNodes: readonly V1Node[] = [];
  private lastPods: readonly V1Pod[] = [];

  /** Folds in the current lists; returns the nodes whose presence or occupants changed since the last update. */
  update(nodes: readonly V1Node[], pods: readonly V1Pod[]): Set<string> {
    const changed = new Set<string>();
    forEachListChange(this.lastNodes, nodes, nodeKey, (n) => {
      const name = nodeKey(n);
      if (name && this.nodes.delete(name)) changed.add(name);
    }, (n) => {
      const name = nodeKey(n);
      if (!name || this.nodes.has(name)) return; // a new version of a present node (a heartbeat)
      this.nodes.add(name);
      changed.add(name);
    });
    forEachListChange(this.lastPods, pods, podKey, (p) => {
      const key = podKey(p);
      const cur = this.occupants.get(key);
      if (!cur) return;
      this.occupants.delete(key);
      this.leave(cur, changed);
    }, (p) => {
      const key = podKey(p);
      const cur = this.occupants.get(key);
      const node = p.spec?.nodeName;
      const next = node && occupiesNode(p) ? { node, hash: fnv1a(p.metadata?.uid ?? `${p.metadata?.namespace}/${p.metadata?.name}`) } : undefined;
      if (cur && next && cur.node === next.node && cur.hash === next.hash) return; // a new version, same occupancy
      if (cur) this.leave(cur, changed);
      if (!next) {
        this.occupants.delete(key);
        return;
      }
      this.occupants.set(key, next);
      const a = this.perNode.get(next.node);
      if (a) {
        a.count++;
        a.sum = (a.sum + next.hash) >>> 0;
      } else this.perNode.set(next.node, { count: 1, sum: next.hash });
      changed.add(next.node);
    });
    // Copies: a caller may push into a list it passed before.
    if (this.lastNodes !== nodes) this.lastNodes = nodes.slice();
    if (this.lastPods !== pods) this.lastPods = pods.slice();
    return changed;
  }

  /** The node is present in the last update. */
  has(node: string): boolean {
    return this.nodes.has(node);
  }

  /** Some pod keeps the node occupied. */
  occupied(node: string): boolean {
    return this.perNode.has(node);
  }

  /** The node's occupants as `count:sum of uid hashes`; '' for none. */
  signature(node: string): string {
    const a = this.perNode.get(node);
    return a ? `${a.count}:${a.sum}` : '';
  }

  private leave(o: Occupant, changed: Set<string>): void {
    const a = this.perNode.get(o.node)!;
    changed.add(o.node);
    if (--a.count === 0) this.perNode.delete(o.node);
    else a.sum = (a.sum - o.hash) >>> 0;
  }
}

/** The hash a pod's uid adds to its node's signature (FNV-1a, 32 bits). */
export function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}
