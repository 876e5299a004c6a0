import { AggregatorRegistry, Gauge, type Registry } from 'prom-client';
import type { Log } from '../api/log.js';
import type { ClusterControllerSettings } from '../controller/cluster-controller.js';
import { Informer } from '../kube/informer.js';
import { KubeApiError, type KubeClient } from '../kube/kube-client.js';
import { METRIC_PREFIX } from '../server/metrics.js';
import type { ClusterObject } from './cluster-hold.js';
import { ClusterRunner } from './cluster-runner.js';
import { FleetLeases, type FleetView } from './fleet-leases.js';
import { presenceSuspectMs } from './presence.js';
import { presenceToCollect } from './presence-gc.js';
import { decideShards } from './shards.js';

export interface FleetLeaseTiming {
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
}

/**
 * A dead replica is suspected after 2.5 retry periods (presence.ts), its clusters warm up
 * elsewhere meanwhile and move once their Leases expire, ~8-10 s after the kill.
 */
export const FLEET_LEASE_DEFAULTS: Readonly<FleetLeaseTiming> = { leaseDurationMs: 8000, renewDeadlineMs: 6000, retryPeriodMs: 2000 };

export interface FleetOptions {
  /** The management cluster, shared by every cluster's controller (CAPI objects, NodePools, Leases). */
  management: KubeClient;
  /** The release namespace: the Leases and the prediction state live there. */
  namespace: string;
  /** This replica (unique per process: a restarted replica is a new one). */
  identity: string;
  /** Only Clusters in this namespace (`--fleet-namespace`); absent = all namespaces. */
  clusterNamespace?: string;
  /** Only Clusters matching this label selector (`--fleet-selector`). */
  clusterSelector?: string;
  /** The flags every cluster's controller shares. */
  settings: ClusterControllerSettings;
  stateName?: string;
  log: Log;
  /** Fleet gauges go here (the process registry); each cluster's metrics have a registry of their own. */
  registry?: Registry;
  /** Per-cluster and presence Lease timing (`--fleet-lease-duration` ...); FLEET_LEASE_DEFAULTS when absent. */
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  /** How often the shards are decided again. Default: the retry period. */
  reconcileMs?: number;
  probeTimeoutMs?: number;
  retryHeldMs?: number;
  unreachableAfterMs?: number;
  probeEveryMs?: number;
}

/**
 * `headroom controller --fleet` (ADR 0143): one process in the management cluster
 * autoscaling every selected CAPI Cluster. It watches the Clusters, keeps a presence
 * Lease, decides its shard each tick (shards.ts) and runs a ClusterRunner for each
 * cluster of it; the runner's per-cluster Lease is the only licence to act.
 */
export class FleetController {
  private readonly runners = new Map<string, ClusterRunner>();
  private readonly stopping = new Map<string, Promise<void>>();
  private informer: Informer | undefined;
  private leases: FleetLeases;
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> | undefined;
  private stopped = false;
  /** The loop has begun (start() done with the informer): changes may wake it. */
  private looping = false;
  private again = false;
  private lastTickOk = 0;
  /** A collection of dead replicas' presence Leases in flight (one at a time, off the tick). */
  private collecting: Promise<void> | undefined;
  private readonly leaseMs: number;
  private readonly renewMs: number;
  private readonly retryMs: number;

  constructor(private readonly o: FleetOptions) {
    this.leaseMs = o.leaseDurationMs ?? FLEET_LEASE_DEFAULTS.leaseDurationMs;
    this.renewMs = o.renewDeadlineMs ?? FLEET_LEASE_DEFAULTS.renewDeadlineMs;
    this.retryMs = o.retryPeriodMs ?? FLEET_LEASE_DEFAULTS.retryPeriodMs;
    this.leases = new FleetLeases(o.management, o.namespace, o.identity, this.leaseMs, o.log, presenceSuspectMs(o.reconcileMs ?? this.retryMs, this.leaseMs));
  }

  private get clustersPath(): string {
    return `/apis/cluster.x-k8s.io/v1beta2${this.o.clusterNamespace ? `/namespaces/${encodeURIComponent(this.o.clusterNamespace)}` : ''}/clusters`;
  }

  /** Checks the selector and that Clusters are served, syncs the Cluster informer, starts ticking. */
  async start(): Promise<void> {
    try {
      await this.o.management.request('GET', this.clustersPath, { query: { limit: 1, ...(this.o.clusterSelector ? { labelSelector: this.o.clusterSelector } : {}) } });
    } catch (err) {
      if (err instanceof KubeApiError && err.status === 400) throw new Error(`--fleet-selector ${JSON.stringify(this.o.clusterSelector)} is not a valid label selector`);
      if (err instanceof KubeApiError && err.status === 404) throw new Error('the management cluster does not serve cluster.x-k8s.io/v1beta2 Clusters (install Cluster API v1.11 or later)');
      throw err;
    }
    this.informer = new Informer(this.o.management, {
      group: 'cluster.x-k8s.io', version: 'v1beta2', plural: 'clusters',
      ...(this.o.clusterNamespace ? { namespace: this.o.clusterNamespace } : {}),
      ...(this.o.clusterSelector ? { labelSelector: this.o.clusterSelector } : {}),
    }, { onError: (err) => this.o.log(`fleet: watch clusters: ${(err as Error).message}`) });
    this.informer.onChange(() => this.soon());
    this.informer.start();
    await this.informer.waitForSync(60_000);
    if (this.o.registry) this.registerMetrics(this.o.registry);
    this.o.log(`fleet: ${this.informer.list().length} Cluster(s) selected; replica ${this.o.identity}`);
    this.looping = true;
    this.loop();
  }

  /** One tick at a time: a change during a tick makes the next one come at once. */
  private loop(): void {
    if (this.stopped || this.ticking) return;
    clearTimeout(this.timer);
    this.again = false;
    this.ticking = this.tick().catch((err) => this.o.log(`fleet: ${(err as Error).message}`)).finally(() => {
      this.ticking = undefined;
      if (!this.stopped) this.timer = setTimeout(() => this.loop(), this.again ? 50 : (this.o.reconcileMs ?? this.retryMs));
    });
  }

  /** A Cluster changed: decide again now rather than at the next tick. */
  private soon(): void {
    if (this.stopped || !this.looping) return;
    if (this.ticking) {
      this.again = true;
      return;
    }
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.loop(), 50);
  }

  private clusters(): Map<string, ClusterObject> {
    const out = new Map<string, ClusterObject>();
    for (const c of (this.informer?.list() ?? []) as ClusterObject[]) {
      const ns = c.metadata?.namespace;
      const name = c.metadata?.name;
      if (ns && name) out.set(`${ns}/${name}`, c);
    }
    return out;
  }

  private async tick(): Promise<void> {
    const contending = [...this.runners.values()].filter((r) => r.warm).map((r) => r.key);
    await this.leases.renewPresence(contending);
    const view = await this.leases.observe();
    // Killed or stopped while it waited: start nothing more.
    if (this.stopped) return;
    // Only after this tick renewed our own presence (renewPresence throws otherwise).
    this.collectDeadPresence(view);
    const holders = new Map(view.holders);
    for (const [key, h] of holders) if (h === this.o.identity && !this.runners.get(key)?.leading()) holders.delete(key);
    for (const r of this.runners.values()) if (r.leading()) holders.set(r.key, this.o.identity);
    const clusters = this.clusters();
    const d = decideShards({ self: this.o.identity, clusters: [...clusters.keys()], replicas: view.replicas, holders });
    const run = new Set(d.run);
    for (const key of d.run) {
      if (this.runners.has(key) || this.stopping.has(key)) continue;
      const [namespace, name] = splitKey(key);
      this.runners.set(key, new ClusterRunner({
        namespace, name, cluster: () => this.clusters().get(key),
        management: this.o.management, leaseNamespace: this.o.namespace, identity: this.o.identity,
        settings: this.o.settings, ...(this.o.stateName ? { stateName: this.o.stateName } : {}),
        election: { leaseDurationMs: this.leaseMs, renewDeadlineMs: this.renewMs, retryPeriodMs: this.retryMs },
        priorObservation: (k) => this.leases.observedAt(k),
        log: this.o.log,
        ...(this.o.probeTimeoutMs ? { probeTimeoutMs: this.o.probeTimeoutMs } : {}),
        ...(this.o.retryHeldMs ? { retryHeldMs: this.o.retryHeldMs } : {}),
        ...(this.o.unreachableAfterMs ? { unreachableAfterMs: this.o.unreachableAfterMs } : {}),
        ...(this.o.probeEveryMs ? { probeEveryMs: this.o.probeEveryMs } : {}),
      }));
    }
    for (const [key, r] of [...this.runners]) {
      // Released (handed over or no longer selected), or contended for but no longer ours.
      if (!run.has(key)) this.release(key, r, d.release.includes(key) ? 'handed over or no longer selected' : 'not in this replica\'s shard');
    }
    for (const r of this.runners.values()) void r.sync();
    this.lastTickOk = Date.now();
  }

  private collectDeadPresence(view: FleetView): void {
    if (this.collecting) return;
    const dead = presenceToCollect({ self: this.o.identity, alive: view.replicas.map((r) => r.id), presence: view.presence, leaseDurationMs: this.leaseMs, now: Date.now() });
    if (dead.length === 0) return;
    this.collecting = this.leases.collectPresence(dead).then(() => {}, (err) => this.o.log(`fleet: ${(err as Error).message}`)).finally(() => {
      this.collecting = undefined;
    });
  }

  private release(key: string, r: ClusterRunner, why: string): void {
    this.runners.delete(key);
    if (r.leading()) this.o.log(`fleet: releasing cluster ${key} (${why})`);
    this.stopping.set(key, r.stop().finally(() => this.stopping.delete(key)));
  }

  /** Cluster keys whose Lease this replica holds. */
  owned(): string[] {
    return [...this.runners.values()].filter((r) => r.leading()).map((r) => r.key).sort();
  }

  runner(key: string): ClusterRunner | undefined {
    return this.runners.get(key);
  }

  ready(): boolean {
    return (this.informer?.hasSynced() ?? false) && Date.now() - this.lastTickOk < 5 * Math.max(this.leaseMs, this.o.reconcileMs ?? 0);
  }

  live(): boolean {
    return [...this.runners.values()].every((r) => r.live());
  }

  /** The process's metrics and every cluster's (their `cluster` label keeps them apart). */
  async metrics(base: Registry): Promise<string> {
    const own = await base.metrics();
    const regs = [...this.runners.values()].map((r) => r.registry).filter((r): r is Registry => r !== undefined);
    if (regs.length === 0) return own;
    const merged = AggregatorRegistry.aggregate(await Promise.all(regs.map((r) => r.getMetricsAsJSON())));
    return `${own}\n${await merged.metrics()}`;
  }

  private registerMetrics(registry: Registry): void {
    registerFleetMetrics(registry, () => {
      const rs = [...this.runners.values()];
      return { selected: this.clusters().size, owned: rs.filter((r) => r.leading()).length, held: rs.filter((r) => r.leading() && r.held()).length };
    });
  }

  /** Graceful: every cluster's Lease released, then the presence Lease deleted. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.ticking;
    const all = [...this.runners.values()].map((r) => r.stop());
    this.runners.clear();
    await Promise.all([...all, ...this.stopping.values()]);
    await this.collecting;
    await this.leases.dropPresence();
    this.informer?.stop();
  }

  /** Abrupt (tests: a SIGKILLed replica): nothing released, every Lease expires. */
  kill(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    for (const r of this.runners.values()) r.kill();
    this.runners.clear();
    this.informer?.stop();
  }
}

function splitKey(key: string): [string, string] {
  const i = key.indexOf('/');
  return [key.slice(0, i), key.slice(i + 1)];
}

/** `headroom_fleet_clusters{state}`: selected, owned (this replica holds the Lease), held (owned, not scaled). */
export function registerFleetMetrics(registry: Registry, counts: () => { selected: number; owned: number; held: number }): void {
  new Gauge({
    name: `${METRIC_PREFIX}fleet_clusters`,
    help: 'Fleet mode: Clusters selected, owned by this replica (it holds their Lease), and owned but held (paused, deleting, unreachable).',
    labelNames: ['state'] as const,
    registers: [registry],
    collect() {
      const c = counts();
      this.set({ state: 'selected' }, c.selected);
      this.set({ state: 'owned' }, c.owned);
      this.set({ state: 'held' }, c.held);
    },
  });
}
