import { buildSnapshot } from '../cluster/build-snapshot.js';
import type { ClusterStateSource } from '../cluster/state.js';
import { ExtenderState } from '../extender/state.js';

/**
 * The scheduler extender's view, kept current from the informer cache. The
 * extender reads it on every scheduling decision, so `get()` is O(1): changes
 * only mark it dirty, and it is rebuilt at most once per `intervalMs`, off the
 * request path.
 */
export class LiveExtenderState {
  private state = new ExtenderState();
  private dirty = true;
  private timer: NodeJS.Timeout | undefined;
  private unsubscribe: (() => void) | undefined;

  constructor(
    private readonly source: ClusterStateSource,
    private readonly intervalMs = 250,
    private readonly onError: (err: unknown) => void = () => {},
    /** Nodes the leader's Disruptor is removing (before the cache shows their Machines marked). */
    private readonly disrupting: () => ReadonlyMap<string, string> = () => new Map(),
  ) {}

  get(): ExtenderState {
    return this.state;
  }

  start(): void {
    this.unsubscribe = this.source.onChange((kind) => {
      if (kind !== 'pods' && kind !== 'nodes' && kind !== 'nodeGroups' && kind !== 'machines' && kind !== 'daemonSets') return;
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
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.rebuild();
    }, this.intervalMs);
  }

  /** Rebuilds now if anything changed (and the source has synced). */
  rebuild(): void {
    if (!this.dirty || !this.source.synced()) return;
    this.dirty = false;
    try {
      const objects = this.source.objects();
      const state = ExtenderState.fromSnapshot(buildSnapshot(objects, { strict: false }), objects.nodes);
      for (const [node, reason] of this.disrupting()) state.markDisrupting(node, reason);
      this.state = state;
    } catch (err) {
      this.onError(err);
    }
  }
}
