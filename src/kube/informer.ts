import type { KubernetesObject } from '@kubernetes/client-node';
import type { StateChange } from '../cluster/state.js';
import { stripObject } from './informer-transform.js';
import { KubeApiError, type KubeClient } from './kube-client.js';

/**
 * A list+watch cache of one resource (a reflector, in client-go's terms), written
 * here rather than taken from client-node because client-node's informers are
 * known to stop silently. This one never trusts a quiet stream:
 * - watches ask for bookmarks and a server-side timeout, so a healthy stream
 *   shows life at least every minute or ends cleanly and is resumed;
 * - a stream with no bytes for `stallTimeoutMs` is aborted and resumed;
 * - it lists by streaming (a watch-list: `sendInitialEvents`, ADR 0121) where the
 *   server can, so a list of the whole cluster is never one response held in memory,
 *   and falls back to paged lists where it cannot;
 * - 410 Gone (HTTP or an ERROR event) relists; other errors back off
 *   exponentially with jitter and resume from the last resourceVersion;
 * - a relist keeps the object it already holds when the resourceVersion is unchanged,
 *   so the new cache shares what did not change with the old one;
 * - `lastFreshAt` is when the cache was last known current (list done, watch
 *   accepted, event or bookmark received); the controller exports its age as a metric and
 *   reports not-ready when it grows, so staleness is never unnoticed.
 */

export interface ResourcePath {
  /** '' for the core group. */
  group: string;
  version: string;
  plural: string;
  /** Watch one namespace; absent = all namespaces (or a cluster-scoped resource). */
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
}

export interface InformerOptions {
  /** Abort a watch that delivered nothing (not even a bookmark) for this long. Default 150 s. */
  stallTimeoutMs?: number;
  /** Server-side watch timeout. Default 240-360 s (jittered so watches do not reconnect in lockstep). */
  watchTimeoutSeconds?: number;
  minBackoffMs?: number;
  maxBackoffMs?: number;
  pageSize?: number;
  /** Keeps only objects for which this returns true (client-side filtering, e.g. by clusterName). */
  filter?: (obj: KubernetesObject) => boolean;
  /**
   * What is stored of each object (and given to change listeners), applied as it
   * arrives: drop what is never read (informer-transform.ts). Default: metadata.managedFields
   * and the last-applied annotation.
   */
  transform?: <T extends KubernetesObject>(obj: T) => T;
  /** Called with the error of each failed list/watch attempt (logging). */
  onError?: (err: unknown) => void;
  /**
   * List by a watch-list stream (sendInitialEvents). Default true; the informer falls
   * back to paged lists by itself when the server refuses it or never ends its initial
   * events, so false is only for servers known to mishandle it.
   */
  watchList?: boolean;
}

export function resourceUrl(r: ResourcePath, name?: string): string {
  const base = r.group === '' ? `/api/${r.version}` : `/apis/${r.group}/${r.version}`;
  const ns = r.namespace ? `/namespaces/${encodeURIComponent(r.namespace)}` : '';
  return `${base}${ns}/${r.plural}${name ? `/${encodeURIComponent(name)}` : ''}`;
}

export function resourceName(r: ResourcePath): string {
  return r.group ? `${r.plural}.${r.group}` : r.plural;
}

function objectKey(o: KubernetesObject): string {
  return `${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;
}

class GoneError extends Error {}

/** The server does not serve watch-lists (refused, or a stream without the end bookmark). */
class WatchListUnsupportedError extends Error {}

/** The bookmark that ends a watch-list's initial events (KEP-3157). */
const INITIAL_EVENTS_END = 'k8s.io/initial-events-end';

/**
 * Answers that say a server will not serve `sendInitialEvents` (a server without the
 * WatchList feature refuses the parameters as invalid); 410 and 429 are not among them.
 */
const REFUSED = new Set([400, 422]);

interface ListResponse {
  metadata?: { resourceVersion?: string; continue?: string };
  items?: KubernetesObject[];
}

export class Informer<T extends KubernetesObject = KubernetesObject> {
  private readonly store = new Map<string, T>();
  private cached: T[] | undefined;
  private resourceVersion = '';
  private running = false;
  private abort: AbortController | undefined;
  private readonly listeners = new Set<(change: StateChange) => void>();
  private synced = false;
  private needList = true;
  /** Lists by watch-list until the server shows it cannot. */
  private streamLists: boolean;
  private wakeUp: (() => void) | undefined;
  /** Epoch ms when the cache was last known to be current; 0 before the first list. */
  lastFreshAt = 0;
  readonly stats = { lists: 0, relists: 0, watches: 0, stalls: 0, errors: 0, events: 0, expiredContinues: 0, streamedLists: 0, watchListFallbacks: 0 };
  readonly name: string;
  private readonly opts: Required<Omit<InformerOptions, 'filter' | 'onError' | 'watchTimeoutSeconds' | 'watchList'>> & Pick<InformerOptions, 'filter' | 'onError' | 'watchTimeoutSeconds'>;
  private readonly transform: <O extends KubernetesObject>(obj: O) => O;

  constructor(private readonly client: KubeClient, readonly resource: ResourcePath, options: InformerOptions = {}) {
    this.name = resourceName(resource);
    this.opts = {
      stallTimeoutMs: 150_000, minBackoffMs: 200, maxBackoffMs: 30_000, pageSize: 500, transform: stripObject, ...options,
    };
    this.transform = this.opts.transform;
    this.streamLists = options.watchList ?? true;
  }

  hasSynced(): boolean {
    return this.synced;
  }

  /** The cached objects; the same array until the next change. Treat as immutable. */
  list(): T[] {
    this.cached ??= [...this.store.values()];
    return this.cached;
  }

  get(namespace: string | undefined, name: string): T | undefined {
    return this.store.get(`${namespace ?? ''}/${name}`);
  }

  onChange(fn: (change: StateChange) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    void this.run();
  }

  stop(): void {
    this.running = false;
    this.abort?.abort();
    this.wakeUp?.();
  }

  /** Resolves when the initial list is done (or rejects after `timeoutMs`). */
  async waitForSync(timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!this.synced) {
      if (Date.now() > deadline) throw new Error(`informer ${this.name} did not sync within ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  private changed(change: StateChange): void {
    this.cached = undefined;
    for (const fn of this.listeners) {
      try {
        fn(change);
      } catch (err) {
        this.opts.onError?.(err);
      }
    }
  }

  private keep(o: KubernetesObject): boolean {
    return !this.opts.filter || this.opts.filter(o);
  }

  private async listAll(): Promise<void> {
    const items = new Map<string, T>();
    let cont: string | undefined;
    let rv = '';
    let limit: number | undefined = this.opts.pageSize;
    while (this.running) {
      let page: ListResponse;
      try {
        page = await this.client.get<ListResponse>(resourceUrl(this.resource), {
          limit, continue: cont,
          labelSelector: this.resource.labelSelector, fieldSelector: this.resource.fieldSelector,
        });
      } catch (err) {
        // The continue token expired (etcd compacted past the list's revision while it
        // was being paged). Paging again from the start can expire the same way for as
        // long as a paged list outlasts compaction, so, like client-go's pager, list
        // everything again in one unpaged request.
        if (!(cont && err instanceof KubeApiError && err.status === 410)) throw err;
        items.clear();
        cont = undefined;
        limit = undefined;
        this.stats.expiredContinues++;
        continue;
      }
      for (const o of page.items ?? []) this.collect(items, o);
      cont = page.metadata?.continue || undefined;
      rv = page.metadata?.resourceVersion ?? '';
      if (!cont) break;
    }
    if (this.running) this.replaceStore(items, rv);
  }

  /**
   * Adds a listed object to the cache being built. An object whose resourceVersion is
   * the one already held is the same object: the held one is kept, so during a relist
   * only what changed is held twice (and identity-keyed memos downstream stay warm).
   */
  private collect(items: Map<string, T>, o: KubernetesObject): void {
    if (!this.keep(o)) return;
    const key = objectKey(o);
    const held = this.store.get(key);
    const rv = o.metadata?.resourceVersion;
    items.set(key, held && rv && held.metadata?.resourceVersion === rv ? held : this.transform(o as T));
  }

  /** A whole list is in: it becomes the cache, as of `rv`. */
  private replaceStore(items: Map<string, T>, rv: string): void {
    this.store.clear();
    for (const [k, v] of items) this.store.set(k, v);
    this.resourceVersion = rv;
    this.stats.lists++;
    if (this.stats.lists > 1) this.stats.relists++;
    this.needList = false;
    this.synced = true;
    this.lastFreshAt = Date.now();
    this.changed({ type: 'RELIST' });
  }

  private applyEvent(type: string, obj: Record<string, unknown>): void {
    const o = obj as KubernetesObject;
    const rv = o.metadata?.resourceVersion;
    if (type === 'BOOKMARK') {
      if (rv) this.resourceVersion = rv;
      this.lastFreshAt = Date.now();
      return;
    }
    if (type === 'ERROR') {
      const status = obj as { code?: number; reason?: string; message?: string };
      if (status.code === 410 || status.reason === 'Expired' || status.reason === 'Gone') throw new GoneError(status.message ?? 'gone');
      throw new KubeApiError(status.code ?? 500, status.reason ?? 'Error', status.message ?? '', 'WATCH', resourceUrl(this.resource));
    }
    if (rv) this.resourceVersion = rv;
    this.lastFreshAt = Date.now();
    this.stats.events++;
    const key = objectKey(o);
    if (type === 'DELETED' || !this.keep(o)) {
      if (!this.store.delete(key)) return;
      this.changed({ type: 'DELETED', object: o });
    } else if (type === 'ADDED' || type === 'MODIFIED') {
      const existed = this.store.has(key);
      const kept = this.transform(o as T);
      this.store.set(key, kept);
      this.changed({ type: existed ? 'MODIFIED' : 'ADDED', object: kept });
    }
  }

  /**
   * One watch, until the server ends it, it stalls, or it fails. From the current
   * resourceVersion; or, with `list`, a watch-list: the server first streams every
   * object as ADDED, then a bookmark annotated initial-events-end, and the collected
   * objects replace the cache there; the same stream then carries changes. Objects
   * arrive one at a time and are stored transformed, so memory never holds the raw
   * list, only the new cache (sharing unchanged objects with the old one).
   */
  private async watchOnce(list = false): Promise<void> {
    const abort = new AbortController();
    this.abort = abort;
    let stalled = false;
    let watchdog: NodeJS.Timeout | undefined;
    const pet = () => {
      clearTimeout(watchdog);
      watchdog = setTimeout(() => {
        stalled = true;
        abort.abort();
      }, this.opts.stallTimeoutMs);
    };
    pet();
    this.stats.watches++;
    let failure: unknown;
    /** The cache being built while a watch-list streams its initial events. */
    let initial = list ? new Map<string, T>() : undefined;
    try {
      await this.client.watch(resourceUrl(this.resource), {
        ...(list ? { sendInitialEvents: true, resourceVersionMatch: 'NotOlderThan' } : { resourceVersion: this.resourceVersion }),
        allowWatchBookmarks: true,
        timeoutSeconds: this.opts.watchTimeoutSeconds ?? 240 + Math.floor(Math.random() * 120),
        labelSelector: this.resource.labelSelector, fieldSelector: this.resource.fieldSelector,
      }, (ev) => {
        pet();
        try {
          if (!initial) return this.applyEvent(ev.type, ev.object);
          if (!this.initialEvent(initial, ev.type, ev.object)) return;
          initial = undefined;
          this.stats.streamedLists++;
        } catch (err) {
          failure = err;
          abort.abort();
        }
      }, abort.signal, () => {
        // The server accepted our resourceVersion: it will replay anything newer, so
        // the cache is current as of now even if nothing changes (a quiet resource).
        // A watch-list's cache is current only at its end bookmark.
        if (!list) this.lastFreshAt = Date.now();
      });
    } catch (err) {
      if (!failure && !stalled && this.running) failure = err;
    } finally {
      clearTimeout(watchdog);
    }
    if (list && failure instanceof KubeApiError && REFUSED.has(failure.status)) throw new WatchListUnsupportedError(`${this.name}: the server refused a watch-list (${failure.status} ${failure.message})`);
    // A server that ignores sendInitialEvents streams objects and changes but never the
    // end bookmark; its stream ends at the timeout with the list unfinished.
    if (initial && !failure && !stalled && this.running) throw new WatchListUnsupportedError(`${this.name}: the watch-list stream ended before its initial-events-end bookmark`);
    if (stalled && !failure) {
      this.stats.stalls++;
      throw new Error(`watch of ${this.name} stalled: nothing for ${this.opts.stallTimeoutMs} ms`);
    }
    if (failure) {
      if (failure instanceof KubeApiError && failure.status === 410) throw new GoneError(failure.message);
      throw failure;
    }
  }

  /**
   * One event of a watch-list's initial phase, into `items`; true at the end bookmark,
   * when `items` has become the cache. A plain bookmark before it means the server
   * ignored sendInitialEvents (it sends those only after the initial events).
   */
  private initialEvent(items: Map<string, T>, type: string, obj: Record<string, unknown>): boolean {
    const o = obj as KubernetesObject;
    if (type === 'BOOKMARK') {
      if (o.metadata?.annotations?.[INITIAL_EVENTS_END] !== 'true') throw new WatchListUnsupportedError(`${this.name}: a bookmark before the initial-events-end one: the server ignored sendInitialEvents`);
      this.replaceStore(items, o.metadata.resourceVersion ?? '');
      return true;
    }
    if (type === 'ERROR') {
      this.applyEvent(type, obj); // throws
      return false;
    }
    if (type === 'DELETED') items.delete(objectKey(o));
    else this.collect(items, o);
    return false;
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const t = setTimeout(() => {
        this.wakeUp = undefined;
        resolve();
      }, ms);
      this.wakeUp = () => {
        clearTimeout(t);
        this.wakeUp = undefined;
        resolve();
      };
    });
  }

  private async run(): Promise<void> {
    this.needList = true;
    let backoff = this.opts.minBackoffMs;
    while (this.running) {
      const started = Date.now();
      try {
        if (this.needList && this.streamLists) await this.watchOnce(true);
        else {
          if (this.needList) await this.listAll();
          await this.watchOnce();
        }
        // A clean end (server timeout): resume at once.
        backoff = this.opts.minBackoffMs;
      } catch (err) {
        if (!this.running) break;
        if (err instanceof WatchListUnsupportedError) {
          // Not a failure of this server's, a feature it lacks: page from now on.
          this.streamLists = false;
          this.stats.watchListFallbacks++;
          this.opts.onError?.(err);
          continue;
        }
        this.stats.errors++;
        this.opts.onError?.(err);
        if (err instanceof GoneError) {
          this.needList = true;
          continue;
        }
        if (Date.now() - started > 10_000) backoff = this.opts.minBackoffMs;
        const jittered = backoff * (0.5 + Math.random());
        backoff = Math.min(backoff * 2, this.opts.maxBackoffMs);
        // A watch refused by API Priority and Fairness says when to come back: no sooner.
        const retryAfter = err instanceof KubeApiError && err.status === 429 ? Math.min(err.retryAfterMs ?? 1000, 10_000) : 0;
        await this.sleep(Math.max(jittered, retryAfter));
      }
    }
  }
}
