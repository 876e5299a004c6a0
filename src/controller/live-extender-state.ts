import type { V1Node, V1Pod } from '@kubernetes/client-node';
import type { UnstructuredObject } from '../api/unstructured-object.js';
import type { ClusterObjects } from '../cluster/objects.js';
import type { ClusterStateSource, StateChange } from '../cluster/state.js';
import { ExtenderState } from '../extender/state.js';
import { ExtenderIndex } from './extender-index.js';

/** Kinds whose change can alter what the extender answers. */
type Watched = 'pods' | 'nodes' | 'machines';
const WATCHED = new Set<keyof ClusterObjects>(['pods', 'nodes', 'machines']);

/** A full build hands the event loop back after this much work, so requests wait at most about this long. */
const SLICE_MS = 5;

/** Before the first build: nothing known, so the filter keeps every node and prioritize scores none (ADR 0115). */
const NOTHING_KNOWN = new ExtenderState();

/**
 * The scheduler extender's view, kept current from the informer cache. The extender
 * reads it on every scheduling decision, so `get()` is O(1).
 *
 * Every pod, Node and Machine change is applied at once to an ExtenderIndex as a
 * per-object delta (a kubelet heartbeat changes nothing the extender reads, so it
 * changes nothing). A full build from the whole cache happens only at the start and
 * after a relist (or a change that does not carry its object); it runs in slices of
 * about 5 ms that yield to the event loop, so admission and the extender keep
 * answering while 5,000 nodes and 50,000 pods are read, and the previous state (or,
 * before the first, the neutral NOTHING_KNOWN) is served until it is done. Changes
 * that arrive during a build are replayed onto it before it is swapped in.
 * Every `intervalMs` a tick re-reads the Disruptor's overlay and, coalesced, the
 * node <-> Machine mapping when a change touched it.
 */
export class LiveExtenderState {
  private current: ExtenderIndex | undefined;
  private building: { index: ExtenderIndex; pending: Array<[Watched, StateChange]>; restart: boolean } | undefined;
  private generation = 0;
  private timer: NodeJS.Timeout | undefined;
  private unsubscribe: (() => void) | undefined;
  private running = false;

  /** Full builds finished so far (tests and benchmarks watch it). */
  rebuilds = 0;
  /** The last full build: wall time from start to swap, and the longest slice it held the event loop. */
  lastBuild: { wallMs: number; longestSliceMs: number; slices: number } | undefined;

  constructor(
    private readonly source: ClusterStateSource,
    private readonly intervalMs = 250,
    private readonly onError: (err: unknown) => void = () => {},
    /** Nodes the leader's Disruptor is removing (before the cache shows their Machines marked). */
    private readonly disrupting: () => ReadonlyMap<string, string> = () => new Map(),
    private readonly now: () => number = () => performance.now(),
  ) {}

  get(): ExtenderState {
    return this.current?.state ?? NOTHING_KNOWN;
  }

  /** True once a full build has been swapped in. */
  ready(): boolean {
    return this.current !== undefined;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.unsubscribe = this.source.onChange((kind, change) => {
      if (WATCHED.has(kind)) this.changed(kind as Watched, change);
    });
    this.timer = setInterval(() => this.tick(), this.intervalMs);
    this.timer.unref?.();
    this.tick();
  }

  stop(): void {
    this.running = false;
    this.generation++; // abandons a build in progress
    this.building = undefined;
    this.unsubscribe?.();
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Resolves when no build is running or due (tests, benchmarks). */
  async settled(): Promise<void> {
    while (this.running && (this.building || (!this.current && this.source.synced()))) {
      this.tick();
      await new Promise((r) => setTimeout(r, 1));
    }
  }

  private changed(kind: Watched, change: StateChange | undefined): void {
    if (!change?.object || change.type === 'RELIST') {
      // The whole kind was replaced (or we cannot tell what changed): read everything again.
      if (this.building) this.building.restart = true;
      else if (this.current) void this.build();
      return;
    }
    if (this.building) this.building.pending.push([kind, change]);
    if (this.current) {
      try {
        apply(this.current, kind, change);
      } catch (err) {
        this.onError(err);
      }
    }
  }

  private tick(): void {
    if (!this.running) return;
    if (!this.current && !this.building && this.source.synced()) {
      void this.build();
      return;
    }
    const index = this.current;
    if (!index) return;
    try {
      index.remap();
      index.setOverlay(this.disrupting());
    } catch (err) {
      this.onError(err);
    }
  }

  /** Reads the whole cache into a new index, in slices, then swaps it in. */
  private async build(): Promise<void> {
    const generation = ++this.generation;
    const building = { index: new ExtenderIndex(), pending: [] as Array<[Watched, StateChange]>, restart: false };
    this.building = building;
    const started = this.now();
    let sliceStart = started;
    let longest = 0;
    let slices = 1;
    /** True when the slice is used up: the caller awaits yieldNow() and checks the build is still wanted. */
    const due = () => this.now() - sliceStart >= SLICE_MS;
    const yieldNow = async () => {
      longest = Math.max(longest, this.now() - sliceStart);
      await new Promise((r) => setImmediate(r));
      sliceStart = this.now();
      slices++;
      return generation === this.generation && !building.restart;
    };
    try {
      const { nodes, machines, pods } = this.source.objects();
      const index = building.index;
      for (const n of nodes) {
        index.node(n, false);
        if (due() && !(await yieldNow())) return this.afterAbandoned(generation, building);
      }
      for (const m of machines) {
        index.machine(m, false);
        if (due() && !(await yieldNow())) return this.afterAbandoned(generation, building);
      }
      index.remap();
      for (const p of pods) {
        index.pod(p as V1Pod, false);
        if (due() && !(await yieldNow())) return this.afterAbandoned(generation, building);
      }
      for (const [kind, change] of building.pending) apply(index, kind, change);
      index.remap();
      index.setOverlay(this.disrupting());
      longest = Math.max(longest, this.now() - sliceStart);
      this.current = index;
      this.building = undefined;
      this.rebuilds++;
      this.lastBuild = { wallMs: this.now() - started, longestSliceMs: longest, slices };
    } catch (err) {
      if (this.building === building) this.building = undefined;
      this.onError(err);
    }
  }

  /** A build given up for a newer one (a relist during it) or for stop(). */
  private afterAbandoned(generation: number, building: NonNullable<LiveExtenderState['building']>): void {
    if (this.building !== building) return;
    this.building = undefined;
    if (generation === this.generation && building.restart && this.running) void this.build();
  }
}

function apply(index: ExtenderIndex, kind: Watched, change: StateChange): void {
  const deleted = change.type === 'DELETED';
  if (kind === 'pods') index.pod(change.object as V1Pod, deleted);
  else if (kind === 'nodes') index.node(change.object as V1Node, deleted);
  else index.machine(change.object as UnstructuredObject, deleted);
}
