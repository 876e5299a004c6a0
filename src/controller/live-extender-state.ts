import type { V1Pod } from '@kubernetes/client-node';
import { SnapshotBuilder } from '../cluster/snapshot-builder.js';
import type { ClusterStateSource, StateChange } from '../cluster/state.js';
import { ExtenderState } from '../extender/state.js';
import { toSchedulingPod } from '../scheduling/pod-demand.js';
import type { Resources } from '../scheduling/resources.js';

/** Kinds whose change can alter what the extender answers. */
const WATCHED = new Set(['pods', 'nodes', 'nodeGroups', 'machines', 'daemonSets']);
const TERMINAL = new Set(['Succeeded', 'Failed']);

/** What one bound pod adds to its node's requested resources. */
interface Counted {
  node: string;
  requests: Resources;
}

/**
 * The scheduler extender's view, kept current from the informer cache. The extender
 * reads it on every scheduling decision, so `get()` is O(1).
 *
 * A pod change (the common one: binding, status, deletion) is applied at once as a
 * delta to its node's requested resources: O(1), not a rebuild. Anything else (a
 * node, Machine, group or DaemonSet change, a relist, a change without its object)
 * marks the state for a full rebuild from a fresh snapshot, off the request path, at
 * most once per `intervalMs` and, so that a large cluster's rebuild cannot hog the
 * event loop the webhook and extender share, no sooner than 4x the last rebuild's
 * duration after it (at 5,000 nodes and 50,000 pods a rebuild takes ~0.3-1 s; a
 * rebuild per pod change kept the main thread busy and the extender's p99 near 1 s).
 */
export class LiveExtenderState {
  private state = new ExtenderState();
  private dirty = true;
  private timer: NodeJS.Timeout | undefined;
  private unsubscribe: (() => void) | undefined;
  /** Pod key -> what it contributes to the current state. */
  private counted = new Map<string, Counted>();
  private lastRebuildMs = 0;
  private lastRebuildAt = -Infinity;
  /** Rebuilds reuse what did not change since the last one. */
  private readonly snapshots = new SnapshotBuilder();

  constructor(
    private readonly source: ClusterStateSource,
    private readonly intervalMs = 250,
    private readonly onError: (err: unknown) => void = () => {},
    /** Nodes the leader's Disruptor is removing (before the cache shows their Machines marked). */
    private readonly disrupting: () => ReadonlyMap<string, string> = () => new Map(),
    private readonly now: () => number = () => performance.now(),
  ) {}

  get(): ExtenderState {
    return this.state;
  }

  /** Full rebuilds done so far (tests and the benchmark watch it). */
  rebuilds = 0;

  start(): void {
    this.unsubscribe = this.source.onChange((kind, change) => {
      if (!WATCHED.has(kind)) return;
      if (kind === 'pods' && !this.dirty && this.applyPod(change)) return;
      this.dirty = true;
      this.schedule();
    });
    this.schedule();
  }

  stop(): void {
    this.unsubscribe?.();
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private schedule(): void {
    if (this.timer) return;
    const wait = Math.max(this.intervalMs, this.lastRebuildAt + 4 * this.lastRebuildMs - this.now());
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.rebuild();
      if (this.dirty) this.schedule(); // not synced yet
    }, wait);
  }

  /**
   * Applies one pod's change as a delta; false when it cannot (no object, or a relist),
   * so the caller falls back to a full rebuild.
   */
  private applyPod(change: StateChange | undefined): boolean {
    if (!change?.object || change.type === 'RELIST') return false;
    const pod = change.object as V1Pod;
    const key = `${pod.metadata?.namespace || 'default'}/${pod.metadata?.name ?? ''}`;
    const before = this.counted.get(key);
    const after = change.type === 'DELETED' ? undefined : contribution(pod);
    if (before === undefined && after === undefined) return true;
    if (before && after && before.node === after.node && sameResources(before.requests, after.requests)) return true;
    if (before) {
      this.state.addPod(before.node, before.requests, -1);
      this.counted.delete(key);
    }
    if (after) {
      this.state.addPod(after.node, after.requests);
      this.counted.set(key, after);
    }
    return true;
  }

  /** Rebuilds now if anything changed (and the source has synced). */
  rebuild(): void {
    if (!this.dirty || !this.source.synced()) return;
    this.dirty = false;
    const started = this.now();
    try {
      const objects = this.source.objects();
      const snapshot = this.snapshots.build(objects, { strict: false });
      const state = ExtenderState.fromSnapshot(snapshot, objects.nodes);
      for (const [node, reason] of this.disrupting()) state.markDisrupting(node, reason);
      const counted = new Map<string, Counted>();
      for (const n of snapshot.nodes) {
        if (n.inFlight) continue;
        for (const p of n.pods) counted.set(p.key, { node: n.name, requests: p.requests });
      }
      this.state = state;
      this.counted = counted;
      this.rebuilds++;
    } catch (err) {
      this.onError(err);
    }
    this.lastRebuildAt = this.now();
    this.lastRebuildMs = this.lastRebuildAt - started;
  }
}

/** What a pod adds to its node, as buildSnapshot counts it: bound and not finished. */
function contribution(pod: V1Pod): Counted | undefined {
  const node = pod.spec?.nodeName;
  if (!node || TERMINAL.has(pod.status?.phase ?? '')) return undefined;
  try {
    return { node, requests: toSchedulingPod(pod).requests };
  } catch {
    return undefined; // an unreadable quantity: buildSnapshot skips the pod too
  }
}

function sameResources(a: Resources, b: Resources): boolean {
  const ka = Object.keys(a);
  return ka.length === Object.keys(b).length && ka.every((k) => a[k] === b[k]);
}
