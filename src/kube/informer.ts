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
 * - 410 Gone (HTTP or an ERROR event) relists; other errors back off
 *   exponentially with jitter and resume from the last resourceVersion;
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
  private wakeUp: (() => void) | undefined;
  /** Epoch ms when the cache was last known to be current; 0 before the first list. */
  lastFreshAt = 0;
  readonly stats = { lists: 0, relists: 0, watches: 0, stalls: 0, errors: 0, events: 0, expiredContinues: 0 };
  readonly name: string;
  private readonly opts: Required<Omit<InformerOptions, 'filter' | 'onError' | 'watchTimeoutSeconds'>> & Pick<InformerOptions, 'filter' | 'onError' | 'watchTimeoutSeconds'>;
  private readonly transform: <O extends KubernetesObject>(obj: O) => O;

  constructor(private readonly client: KubeClient, readonly resource: ResourcePath, options: InformerOptions = {}) {
    this.name = resourceName(resource);
    this.opts = {
      stallTimeoutMs: 150_000, minBackoffMs: 200, maxBackoffMs: 30_000, pageSize: 500, transform: stripObject, ...options,
    };
    this.transform = this.opts.transform;
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
      for (const o of page.items ?? []) if (this.keep(o)) items.set(objectKey(o), this.transform(o as T));
      cont = page.metadata?.continue || undefined;
      rv = page.metadata?.resourceVersion ?? '';
      if (!cont) break;
    }
    this.store.clear();
    for (const [k, v] of items) this.store.set(k, v);
    this.resourceVersion = rv;
    this.stats.lists++;
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

  /** One watch from the current resourceVersion, until the server ends it, it stalls, or it fails. */
  private async watchOnce(): Promise<void> {
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
    try {
      await this.client.watch(resourceUrl(this.resource), {
        resourceVersion: this.resourceVersion, allowWatchBookmarks: true,
        timeoutSeconds: this.opts.watchTimeoutSeconds ?? 240 + Math.floor(Math.random() * 120),
        labelSelector: this.resource.labelSelector, fieldSelector: this.resource.fieldSelector,
      }, (ev) => {
        pet();
        try {
          this.applyEvent(ev.type, ev.object);
        } catch (err) {
          failure = err;
          abort.abort();
        }
      }, abort.signal, () => {
        // The server accepted our resourceVersion: it will replay anything newer, so
        // the cache is current as of now even if nothing changes (a quiet resource).
        this.lastFreshAt = Date.now();
      });
    } catch (err) {
      if (!failure && !stalled && this.running) failure = err;
    } finally {
      clearTimeout(watchdog);
    }
    if (stalled && !failure) {
      this.stats.stalls++;
      throw new Error(`watch of ${this.name} stalled: nothing for ${this.opts.stallTimeoutMs} ms`);
    }
    if (failure) {
      if (failure instanceof KubeApiError && failure.status === 410) throw new GoneError(failure.message);
      throw failure;
    }
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
    let needList = true;
    let backoff = this.opts.minBackoffMs;
    while (this.running) {
      const started = Date.now();
      try {
        if (needList) {
          await this.listAll();
          if (this.stats.lists > 1) this.stats.relists++;
          needList = false;
        }
        await this.watchOnce();
        // A clean end (server timeout): resume at once.
        backoff = this.opts.minBackoffMs;
      } catch (err) {
        if (!this.running) break;
        this.stats.errors++;
        this.opts.onError?.(err);
        if (err instanceof GoneError) {
          needList = true;
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
