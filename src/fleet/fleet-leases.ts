import type { Log } from '../api/log.js';
import { microTime } from '../capi/events.js';
import { isConflict, isNotFound, type KubeClient } from '../kube/kube-client.js';
import { presenceAlive } from './presence.js';
import type { PresenceDeletion, PresenceRecord } from './presence-gc.js';
import type { FleetReplica } from './shards.js';
import { FLEET_CLUSTER_ANNOTATION, FLEET_CONTENDING_ANNOTATION, FLEET_LABEL, replicaLeaseName } from './names.js';

interface LeaseObject {
  apiVersion?: string;
  kind?: string;
  metadata: { name: string; namespace?: string; resourceVersion?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec?: { holderIdentity?: string | null; renewTime?: string | null; leaseDurationSeconds?: number; acquireTime?: string | null };
}

export interface FleetView {
  /** Live replicas (their presence Lease not suspected dead: presence.ts), this one included. */
  replicas: FleetReplica[];
  /** Cluster key -> holder of its Lease, for Leases not expired by our clock. */
  holders: Map<string, string>;
  /** Every presence Lease as observed, alive or not (presence-gc.ts decides which go). */
  presence: PresenceRecord[];
}

/** How far another replica's clock may be ahead of ours before its presence reads as stale. */
const PRESENCE_SKEW_MS = 2000;

/** The LeaderElector's record key (leader-election.ts): holder, renewTime, resourceVersion. */
export function leaseRecordKey(l: LeaseObject): string {
  return `${l.spec?.holderIdentity ?? ''}|${l.spec?.renewTime ?? ''}|${l.metadata.resourceVersion ?? ''}`;
}

/**
 * The fleet's Leases in the management cluster's release namespace: this replica's
 * presence Lease (renewed each tick, with the clusters it contends for), and every
 * replica's and cluster's Lease as observed. A Lease is live while its record changed
 * within its duration, measured on this process's clock from when it saw the change
 * (client-go's rule, so skew between replicas is harmless).
 */
export class FleetLeases {
  /** Lease name -> the record last seen and when it was first seen. */
  private readonly seen = new Map<string, { key: string; at: number }>();
  /** Record key -> when first seen (handed to cluster electors: LeaderElectionOptions.priorObservation). */
  private readonly firstSeen = new Map<string, number>();
  readonly presenceName: string;

  constructor(
    private readonly client: KubeClient,
    private readonly namespace: string,
    private readonly identity: string,
    private readonly leaseDurationMs: number,
    private readonly log: Log,
    /** Presence unchanged this long = suspected dead, for balance (presence.ts). Default: the lease duration. */
    private readonly suspectMs = leaseDurationMs,
  ) {
    this.presenceName = replicaLeaseName(identity);
  }

  private path(name?: string): string {
    return `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(this.namespace)}/leases${name ? `/${encodeURIComponent(name)}` : ''}`;
  }

  /** When this process first saw a Lease record, if it did. */
  observedAt(key: string): number | undefined {
    return this.firstSeen.get(key);
  }

  /** Writes this replica's presence Lease: alive now, contending for `contending`. */
  async renewPresence(contending: readonly string[], now = Date.now()): Promise<void> {
    const spec = { holderIdentity: this.identity, leaseDurationSeconds: Math.ceil(this.leaseDurationMs / 1000), renewTime: microTime(now) };
    const annotations = { [FLEET_CONTENDING_ANNOTATION]: JSON.stringify([...contending].sort()) };
    try {
      const lease = await this.client.request<LeaseObject>('GET', this.path(this.presenceName), { timeoutMs: this.leaseDurationMs / 2 });
      await this.client.request('PUT', this.path(this.presenceName), {
        body: { ...lease, metadata: { ...lease.metadata, annotations: { ...lease.metadata.annotations, ...annotations } }, spec: { ...lease.spec, ...spec } },
        timeoutMs: this.leaseDurationMs / 2,
      });
    } catch (err) {
      if (!isNotFound(err)) throw err;
      await this.client.request('POST', this.path(), {
        body: {
          apiVersion: 'coordination.k8s.io/v1', kind: 'Lease',
          metadata: { name: this.presenceName, namespace: this.namespace, labels: { [FLEET_LABEL]: 'replica' }, annotations },
          spec: { ...spec, acquireTime: spec.renewTime },
        },
        timeoutMs: this.leaseDurationMs / 2,
      });
    }
  }

  /** Graceful stop: the presence Lease goes, so the others rebalance at once. */
  async dropPresence(): Promise<void> {
    try {
      await this.client.request('DELETE', this.path(this.presenceName), { timeoutMs: 5000 });
    } catch (err) {
      if (!isNotFound(err)) this.log(`fleet: deleting the presence Lease failed: ${(err as Error).message}`);
    }
  }

  async observe(now = Date.now()): Promise<FleetView> {
    const list = await this.client.request<{ items: LeaseObject[] }>('GET', this.path(), { query: { labelSelector: FLEET_LABEL }, timeoutMs: this.leaseDurationMs / 2 });
    const replicas: FleetReplica[] = [];
    const holders = new Map<string, string>();
    const presence: PresenceRecord[] = [];
    const names = new Set<string>();
    for (const l of list.items) {
      const name = l.metadata.name;
      names.add(name);
      const key = leaseRecordKey(l);
      let s = this.seen.get(name);
      if (!s || s.key !== key) {
        s = { key, at: now };
        this.seen.set(name, s);
        this.firstSeen.set(key, now);
      }
      const holder = l.spec?.holderIdentity ?? '';
      const live = holder !== '' && s.at + (l.spec?.leaseDurationSeconds ?? 0) * 1000 > now;
      const kind = l.metadata.labels?.[FLEET_LABEL];
      if (kind === 'replica') {
        // Presence decides balance only, never safety (the cluster Leases do): a replica
        // that missed two renewals is suspected dead at once (presence.ts), so its clusters'
        // controllers warm up here while their Leases run out.
        const alive = presenceAlive({ holder, seenAt: s.at, renewedAt: Date.parse(l.spec?.renewTime ?? '') }, now, this.suspectMs, PRESENCE_SKEW_MS);
        if (alive || holder === this.identity) replicas.push({ id: holder, contending: contendingOf(l) });
        presence.push({ name, holder, resourceVersion: l.metadata.resourceVersion ?? '', seenAt: s.at, durationMs: (l.spec?.leaseDurationSeconds ?? 0) * 1000 });
      } else if (kind === 'cluster') {
        const cluster = l.metadata.annotations?.[FLEET_CLUSTER_ANNOTATION];
        if (cluster && live) holders.set(cluster, holder);
      }
    }
    // Forget what is gone: the maps stay bounded by the Leases there are.
    for (const name of [...this.seen.keys()]) if (!names.has(name)) this.seen.delete(name);
    const keep = new Set([...this.seen.values()].map((s) => s.key));
    for (const key of [...this.firstSeen.keys()]) if (!keep.has(key)) this.firstSeen.delete(key);
    if (!replicas.some((r) => r.id === this.identity)) replicas.push({ id: this.identity, contending: new Set() });
    return { replicas, holders, presence };
  }

  /**
   * Deletes dead replicas' presence Leases, each only at the resourceVersion it was judged
   * on: a 409 is a replica that renewed since (it keeps its Lease), a 404 one already gone.
   */
  async collectPresence(deletions: readonly PresenceDeletion[]): Promise<string[]> {
    const deleted: string[] = [];
    for (const d of deletions) {
      try {
        await this.client.request('DELETE', this.path(d.name), {
          body: { apiVersion: 'v1', kind: 'DeleteOptions', preconditions: { resourceVersion: d.resourceVersion } },
          timeoutMs: this.leaseDurationMs / 2,
        });
        deleted.push(d.name);
        this.log(`fleet: deleted the presence Lease ${d.name} of replica ${d.holder || '(none)'}, unchanged for ${Math.round(d.unchangedMs / 1000)} s`);
      } catch (err) {
        if (isConflict(err)) this.log(`fleet: kept the presence Lease ${d.name}: replica ${d.holder} renewed it`);
        else if (!isNotFound(err)) this.log(`fleet: deleting the presence Lease ${d.name} failed: ${(err as Error).message}`);
      }
    }
    return deleted;
  }
}

function contendingOf(l: LeaseObject): Set<string> {
  try {
    const v = JSON.parse(l.metadata.annotations?.[FLEET_CONTENDING_ANNOTATION] ?? '[]') as unknown;
    return new Set(Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
  } catch {
    return new Set();
  }
}
