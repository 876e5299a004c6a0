import type { V1Node, V1Pod } from '@kubernetes/client-node';
import type { ClusterStateSource } from '../cluster/state.js';
import { firstSeenOf } from '../webhook/first-seen.js';

/**
 * Feeds two histograms. Pod creation to node Ready: pods seen unbound are remembered;
 * once bound to a Ready node, the time from the pod's creation (the webhook's
 * headroom.dev/first-seen, in milliseconds, else creationTimestamp, in whole seconds)
 * to that node's Ready transition (or zero, if the node was Ready before the pod
 * existed) is observed once. Pod startup (creation to Running): pods seen Pending are
 * remembered, and observed once when a scan sees them Running. Scans are throttled so a burst of pod events costs
 * one pass over the pods per `intervalMs`, not one per event.
 */
export class PodLatencyTracker {
  private readonly waiting = new Map<string, number>();
  /** Pods seen before they ran (uid -> created at, ms): the startup histogram's pods. */
  private readonly starting = new Map<string, number>();
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
    this.unsubscribe = this.state.onChange((kind) => {
      if ((kind === 'pods' || kind === 'nodes') && !this.timer) {
        this.timer = setTimeout(() => {
          this.timer = undefined;
          this.scan();
        }, this.intervalMs);
      }
    });
  }

  stop(): void {
    this.unsubscribe?.();
    clearTimeout(this.timer);
  }

  scan(): void {
    const { pods, nodes } = this.state.objects();
    const readyAt = new Map<string, number>();
    for (const n of nodes as V1Node[]) {
      const ready = n.status?.conditions?.find((c) => c.type === 'Ready' && c.status === 'True');
      if (ready && n.metadata?.name) readyAt.set(n.metadata.name, ready.lastTransitionTime ? new Date(ready.lastTransitionTime).getTime() : 0);
    }
    const live = new Set<string>();
    for (const p of pods as V1Pod[]) {
      const uid = p.metadata?.uid;
      if (!uid) continue;
      live.add(uid);
      if (this.observeStartup) this.startup(uid, p);
      const node = p.spec?.nodeName;
      if (!node) {
        if (!this.waiting.has(uid) && !p.metadata?.deletionTimestamp) {
          const created = firstSeenOf(p) ?? (p.metadata?.creationTimestamp ? new Date(p.metadata.creationTimestamp) : undefined);
          if (created) this.waiting.set(uid, created.getTime());
        }
        continue;
      }
      const created = this.waiting.get(uid);
      if (created === undefined) continue;
      const ready = readyAt.get(node);
      if (ready === undefined) continue;
      this.waiting.delete(uid);
      this.observe(Math.max(0, ready - created) / 1000);
    }
    for (const uid of this.waiting.keys()) if (!live.has(uid)) this.waiting.delete(uid);
    for (const uid of this.starting.keys()) if (!live.has(uid)) this.starting.delete(uid);
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
