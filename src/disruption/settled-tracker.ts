import type { V1Node, V1Pod } from '@kubernetes/client-node';
import { occupiesNode } from './validation.js';

/**
 * Since when the pods bound to each node have not changed (Karpenter's
 * consolidateAfter for underutilised nodes: a node whose pods keep coming and going
 * is not a consolidation candidate yet). Folded in from the objects the state
 * source shows; a node's pods are summarised by their count and a hash of their uids.
 */
export class SettledTracker {
  /** Node -> signature of its pods, and since when it has held. */
  private readonly nodes = new Map<string, { sig: string; since: number }>();
  /** Pod object -> [its node, hash of its uid], or null when it keeps no node. */
  private readonly seen = new WeakMap<V1Pod, [string, number] | null>();
  private lastPods: readonly V1Pod[] | undefined;
  private lastSigs = new Map<string, string>();

  observe(nodes: readonly V1Node[], pods: readonly V1Pod[], now: number): void {
    const sigs = this.signatures(pods);
    const present = new Set<string>();
    for (const n of nodes) {
      const name = n.metadata?.name;
      if (!name) continue;
      present.add(name);
      const sig = sigs.get(name) ?? '';
      const cur = this.nodes.get(name);
      if (!cur || cur.sig !== sig) this.nodes.set(name, { sig, since: now });
    }
    for (const name of this.nodes.keys()) if (!present.has(name)) this.nodes.delete(name);
  }

  /** Node -> since when its pods have not changed (a live view). */
  settledSince(): ReadonlyMap<string, number> {
    const out = new Map<string, number>();
    for (const [name, s] of this.nodes) out.set(name, s.since);
    return out;
  }

  private signatures(pods: readonly V1Pod[]): Map<string, string> {
    if (pods === this.lastPods) return this.lastSigs;
    const acc = new Map<string, { count: number; sum: number }>();
    for (const pod of pods) {
      let e = this.seen.get(pod);
      if (e === undefined) {
        const bound = pod.spec?.nodeName;
        e = bound && occupiesNode(pod) ? [bound, fnv1a(pod.metadata?.uid ?? `${pod.metadata?.namespace}/${pod.metadata?.name}`)] : null;
        this.seen.set(pod, e);
      }
      if (e === null) continue;
      const a = acc.get(e[0]) ?? { count: 0, sum: 0 };
      a.count++;
      a.sum = (a.sum + e[1]) >>> 0;
      acc.set(e[0], a);
    }
    const sigs = new Map<string, string>();
    for (const [node, a] of acc) sigs.set(node, `${a.count}:${a.sum}`);
    this.lastPods = pods;
    this.lastSigs = sigs;
    return sigs;
  }
}

function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}
