import type { V1Node, V1Pod } from '@kubernetes/client-node';
import type { ClusterStateSource } from '../cluster/state.js';
import { firstSeenOf } from '../webhook/first-seen.js';

/**
 * Feeds two histograms. Pod creation to node Ready: pods seen unbound are remembered;
 * once bound to a Ready node, the time from the pod's creation (the webhook's
 * headroom.dev/first-seen, in milliseconds, else creationTimestamp, in whole seconds)
 * to that node's Ready transition (or zero, if the node was Ready before the pod
 * existed) is observed once. Pod startup (creation to Running): pods seen Pending are
 * remembered, and observed once when seen Running.
 *
 * Each pod or Node change is handled by itself, O(1): at 50,000 pods a pass over the
 * whole cache costs about as much as a snapshot build, and pod and Node churn (kubelet
 * heartbeats included) made one every `intervalMs`. A whole pass (`scan`) runs only
 * at the start and after a relist (or a change that does not carry its object),
 * throttled to one per `intervalMs`.
 */
export class PodLatencyTracker {
  private readonly waiting = new Map<string, number>();
  /** Pods seen before they ran (uid -> created at, ms): the startup histogram's pods. */
  private readonly starting = new Map<string, number>();
  /** Node -> when it became Ready (ms; 0 when unknown), for Ready nodes. */
  private readyAt = new Map<string, number>();
  /** Node -> waiting pods bound to it while it is not Ready yet. */
  private boundWaiting = new Map<string, Set<string>>();
  private scanned = false;
  private timer: NodeJS.Timeout | undefined;
  private unsubscribe: (() => void) | undefined;

  constructor(
    private readonly state: ClusterStateSource,
    private readonly observe: (seconds: number) => void,
    private readonly intervalMs = 500,
    /** Creation to Running (Karpenter's pods_startup_duration_seconds), for pods first seen not yet Running; `now` in ms. */
    private readonly observeStartup?: (seconds: number) => void,
    private readonly now: () => number = Date.now,
  ) {}

  start(): void {
    this.unsubscribe = this.state.onChange((kind, change) => {
      if (kind !== 'pods' && kind !== 'nodes') return;
      if (!this.scanned || !change?.object || change.type === 'RELIST') {
        this.scanSoon();
        return;
      }
      if (this.timer) return; // a whole pass is due: it will see this change too
      const deleted = change.type === 'DELETED';
      if (kind === 'pods') this.pod(change.object as V1Pod, deleted);
      else this.node(change.object as V1Node, deleted);
    });
    if (this.state.synced()) this.scanSoon();
  }

  stop(): void {
    this.unsubscribe?.();
    clearTimeout(this.timer);
  }

  private scanSoon(): void {
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      this.scan();
    }, this.intervalMs);
  }

  /** A whole pass over the cache's pods and nodes. */
  scan(): void {
    const { pods, nodes } = this.state.objects();
    this.readyAt = new Map();
    this.boundWaiting = new Map();
    for (const n of nodes as V1Node[]) this.node(n, false);
    const live = new Set<string>();
    for (const p of pods as V1Pod[]) {
      const uid = p.metadata?.uid;
      if (!uid) continue;
      live.add(uid);
      this.pod(p, false);
    }
    for (const uid of this.waiting.keys()) if (!live.has(uid)) this.waiting.delete(uid);
    for (const uid of this.starting.keys()) if (!live.has(uid)) this.starting.delete(uid);
    this.scanned = true;
  }

  private node(n: V1Node, deleted: boolean): void {
    const name = n.metadata?.name;
    if (!name) return;
    const ready = deleted ? undefined : n.status?.conditions?.find((c) => c.type === 'Ready' && c.status === 'True');
    if (!ready) {
      this.readyAt.delete(name);
      if (deleted) this.boundWaiting.delete(name);
      return;
    }
    const at = ready.lastTransitionTime ? new Date(ready.lastTransitionTime).getTime() : 0;
    this.readyAt.set(name, at);
    const bound = this.boundWaiting.get(name);
    if (!bound) return;
    this.boundWaiting.delete(name);
    for (const uid of bound) {
      const created = this.waiting.get(uid);
      if (created === undefined) continue;
      this.waiting.delete(uid);
      this.observe(Math.max(0, at - created) / 1000);
    }
  }

  private pod(p: V1Pod, deleted: boolean): void {
    const uid = p.metadata?.uid;
    if (!uid) return;
    if (deleted) {
      this.waiting.delete(uid);
      this.starting.delete(uid);
      return;
    }
    if (this.observeStartup) this.startup(uid, p);
    const node = p.spec?.nodeName;
    if (!node) {
      if (!this.waiting.has(uid) && !p.metadata?.deletionTimestamp) {
        const created = firstSeenOf(p) ?? (p.metadata?.creationTimestamp ? new Date(p.metadata.creationTimestamp) : undefined);
        if (created) this.waiting.set(uid, created.getTime());
      }
      return;
    }
    const created = this.waiting.get(uid);
    if (created === undefined) return;
    const ready = this.readyAt.get(node);
    if (ready === undefined) {
      let set = this.boundWaiting.get(node);
      if (!set) this.boundWaiting.set(node, (set = new Set()));
      set.add(uid);
      return;
    }
    this.waiting.delete(uid);
    this.observe(Math.max(0, ready - created) / 1000);
  }

  /** Pending when first seen: remembered; Running later: creation to now observed once. */
  private startup(uid: string, p: V1Pod): void {
    const phase = p.status?.phase;
    const created = this.starting.get(uid);
    if (created === undefined) {
      if ((phase === undefined || phase === 'Pending') && !p.metadata?.deletionTimestamp) {
        const at = firstSeenOf(p) ?? (p.metadata?.creationTimestamp ? new Date(p.metadata.creationTimestamp) : undefined);
        if (at) this.starting.set(uid, at.getTime());
      }
      return;
    }
    if (phase === 'Pending' || phase === undefined) return;
    this.starting.delete(uid);
    if (phase === 'Running') this.observeStartup!(Math.max(0, this.now() - created) / 1000);
  }
}
