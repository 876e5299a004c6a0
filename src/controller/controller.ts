// Over 400 lines: the composition root of `headroom controller` (informers, actuator,
// loops, leader election, metrics, status writers); it wires, it does not decide.
import type { Log, LogSubject } from '../api/log.js';
import { hostname } from 'node:os';
import type { KubeConfig } from '@kubernetes/client-node';
import type { Registry } from 'prom-client';
import { EventRecorder } from '../capi/events.js';
import { KubeActionEvents } from '../capi/kube-action-events.js';
import { KubeGroupMemory } from '../capi/kube-group-memory.js';
import { SCALE_UP_MEMORY_ANNOTATION } from '../provisioning/scale-up-memory.js';
import { KubeActuator } from '../capi/kube-actuator.js';
import type { DisruptionReport } from '../disruption/disruption-report.js';
import { Disruptor, type DisruptorOptions } from '../disruption/disruptor.js';
import { SnapshotBuilder } from '../cluster/snapshot-builder.js';
import { ClusterCache } from '../kube/cluster-cache.js';
import type { GroupDiscoverySpec } from '../kube/discovery.js';
import type { InformerOptions } from '../kube/informer.js';
import { KubeClient } from '../kube/kube-client.js';
import { ScaleReader } from '../kube/scale-reader.js';
import { solve as solveInProcess } from '../packing/solve.js';
import type { BatcherOptions } from '../provisioning/batcher.js';
import { capacityBufferPods } from '../provisioning/capacity-buffers.js';
import { combinePredictedSources, type PredictedPodSource } from '../provisioning/predicted-sources.js';
import { bookedPods, provisioningRequestPods } from '../provisioning/provisioning-requests.js';
import { CapacityBufferStatusWriter } from './capacity-buffer-status.js';
import { ProvisioningRequestWriter } from './provisioning-request-status.js';
import { systemClock } from '../provisioning/clock.js';
import type { DemandIntake } from '../provisioning/demand-intake.js';
import { Provisioner, type ProvisionerOptions } from '../provisioning/provisioner.js';
import type { CycleReport } from '../provisioning/cycle-report.js';
import type { SolveFn } from '../provisioning/solve-deadline.js';
import { KubeDisruptionNodes } from './kube-disruption-nodes.js';
import { LeaderElector } from './leader-election.js';
import { registerControllerMetrics, type ControllerMetrics } from './metrics.js';
import { MeteredActuator } from '../capi/metered-actuator.js';
import { NodePoolStatusWriter } from './nodepool-status.js';
import { SnapshotIssueEvents } from './snapshot-issue-events.js';
import { WorkloadNodePoolWarnings } from './workload-nodepools.js';
import { ConfigMapStateStore } from './model-store.js';
import { PodLatencyTracker } from './pod-latency.js';
import { PredictionEvents } from './prediction-events.js';
import { PredictionLoop } from './prediction-loop.js';
import type { ProvisionedForPatch } from './provisioned-for.js';
import { PROVISIONED_FOR_ANNOTATION } from '../extender/state.js';

/**
 * `headroom controller` as an object: informer cache (always warm, also on the
 * standby replica), CAPI actuator, provisioning loop, leader election, metrics.
 * The CLI (src/cli/controller.ts) parses flags into these options; integration
 * tests run it in-process.
 */
export interface ControllerOptions {
  /** The workload cluster (pods, nodes, ...). */
  workload: KubeConfig;
  /** The management cluster (CAPI objects, NodePools, CapacityBuffers); default: the workload cluster. */
  management?: KubeConfig;
  /**
   * The management cluster as a client its owner shares between controllers (fleet
   * mode); wins over `management` and is not closed by stop().
   */
  managementClient?: KubeClient;
  discovery?: GroupDiscoverySpec[];
  dryRun?: boolean;
  /** Pods below this priority are expendable: no demand, and no obstacle to removing a node (default -10, as Cluster Autoscaler). */
  expendablePodsPriorityCutoff?: number;
  batch?: BatcherOptions;
  /**
   * The terms are given by the caller through lead() (fleet mode: the cluster's Lease is
   * held outside, ADR 0143); leaderElection is then ignored.
   */
  externalTerms?: boolean;
  /** Leader election; absent = act at once (single replica). */
  leaderElection?: {
    namespace: string;
    name?: string;
    identity?: string;
    leaseDurationMs?: number;
    renewDeadlineMs?: number;
    retryPeriodMs?: number;
    /** Where the Lease lives: the workload cluster (default) or the management cluster (fleet mode, one Lease per Cluster). */
    in?: 'workload' | 'management';
  };
  /** Default: the in-process solver. Pass the piscina pool's solve in production. */
  solve?: SolveFn;
  /** Used when `solve` outlives solveDeadlineMs (the pool's FFD baseline in production). */
  fallbackSolve?: SolveFn;
  /** See ProvisionerOptions.solveDeadlineMs. Default 60 s. */
  solveDeadlineMs?: number;
  /** Provisioning failures: see ProvisionerOptions (max node provision time, back-off, unhealthy nodes). */
  provisioning?: Pick<ProvisionerOptions, 'maxNodeProvisionMs' | 'backoff' | 'unhealthyNodeMs' | 'scaleUpEffect'>;
  /** /healthz fails when the leader's demand waits longer than this for a cycle. Default 5 min. */
  livenessStallMs?: number;
  registry?: Registry;
  /** Demand from the webhook / extender, when they run in this process. */
  intake?: DemandIntake;
  informer?: InformerOptions;
  /** See ClusterCacheOptions.workloadScope (shared clusters, tests). */
  workloadScope?: { namespace?: string; nodeLabelSelector?: string };
  observeTimeoutMs?: number;
  /** How often the leader refreshes NodePool status. Default 10 s. */
  nodePoolStatusIntervalMs?: number;
  /**
   * With `management` given: how often the leader looks for NodePools applied to the
   * workload cluster, which are ignored, and tells them so. Default 60 s.
   */
  workloadNodePoolCheckMs?: number;
  /** Only NodePools with spec.clusterRef (fleet mode, ADR 0140). */
  requireNodePoolClusterRef?: boolean;
  onCycle?: (r: CycleReport) => void;
  /**
   * The disruption loop (empty-node removal, safe expiry) while leading; false disables
   * it. Default on, except with workloadScope.namespace (then only when given explicitly).
   */
  disruption?: DisruptorOptions | false;
  /** How long a drain waits for evicted pods before keeping the node (`--drain-timeout`; default DEFAULT_DRAIN's 10 min). */
  drainTimeoutMs?: number;
  onDisruption?: (r: DisruptionReport) => void;
  /**
   * Prediction (issue 13): watch workloads, learn their demand and, in NodePools with
   * spec.prediction.enabled, hold capacity for the forecast. Absent = off.
   */
  prediction?: PredictionOptions;
  log?: Log;
  /** How long a Provisioned ProvisioningRequest's capacity is held for its pods. Default 10 min. */
  provisioningRequestBookingMs?: number;
  /** How often the leader refreshes CapacityBuffer and ProvisioningRequest status. Default 5 s. */
  capacityStatusIntervalMs?: number;
  /**
   * More sources of predicted pods (forecasts), for both the provisioner and the
   * disruption what-if, next to CapacityBuffers and ProvisioningRequest bookings.
   */
  predictedSources?: PredictedPodSource[];
}

export interface PredictionOptions {
  /** Node boot time assumed for a group until boots are observed. */
  defaultBootHorizonMs: number;
  /**
   * Where the leader keeps the learned model (ADR 0092); absent = in memory only. `in`:
   * the cluster holding the ConfigMaps (default the workload cluster; the management
   * cluster in fleet mode, ADR 0141), `labels` on them.
   */
  state?: { namespace: string; name: string; in?: 'workload' | 'management'; labels?: Record<string, string> };
  /** Pass period (default 10 s) and save period (default 2 min). */
  intervalMs?: number;
  saveIntervalMs?: number;
}

export const DEFAULT_LIVENESS_STALL_MS = 300_000;

export class Controller {
  readonly workloadClient: KubeClient;
  readonly managementClient: KubeClient;
  readonly cache: ClusterCache;
  actuator: KubeActuator | undefined;
  private actionEvents: KubeActionEvents | undefined;
  private groupMemory: KubeGroupMemory | undefined;
  provisioner: Provisioner | undefined;
  disruptor: Disruptor | undefined;
  prediction: PredictionLoop | undefined;
  private elector: LeaderElector | undefined;
  private metrics: ControllerMetrics | undefined;
  private latency: PodLatencyTracker | undefined;
  private poolStatus: NodePoolStatusWriter | undefined;
  private workloadPools: WorkloadNodePoolWarnings | undefined;
  private bufferStatus: CapacityBufferStatusWriter | undefined;
  private requestStatus: ProvisioningRequestWriter | undefined;
  private lastCycle: CycleReport | undefined;
  private unsubscribeIntake: (() => void) | undefined;
  private leading = false;
  /**
   * One SnapshotBuilder for the controller's life: the provisioner, the disruptor, the
   * prediction loop, the NodePool status and the metrics build from the same cache,
   * so one change generation costs one build, whoever asks first.
   */
  private readonly snapshots: SnapshotBuilder;
  /** The term without leader election (one replica). */
  private ownTerm: AbortController | undefined;
  /** The current term's start (waits for the previous term's stop), and the last term's stop. */
  private starting: Promise<void> = Promise.resolve();
  private stopping: Promise<void> = Promise.resolve();
  private readonly log: Log;

  constructor(private readonly opts: ControllerOptions) {
    this.log = opts.log ?? ((m) => console.log(`${new Date().toISOString()} ${m}`));
    this.snapshots = new SnapshotBuilder(opts.expendablePodsPriorityCutoff === undefined ? {} : { expendablePodsPriorityCutoff: opts.expendablePodsPriorityCutoff });
    this.workloadClient = new KubeClient(opts.workload);
    this.managementClient = opts.managementClient ?? (opts.management ? new KubeClient(opts.management) : this.workloadClient);
    this.cache = new ClusterCache({
      workload: this.workloadClient, management: this.managementClient,
      discovery: opts.discovery ?? [],
      ...(opts.workloadScope ? { workloadScope: opts.workloadScope } : {}),
      workloads: opts.prediction !== undefined,
      ...(opts.requireNodePoolClusterRef ? { requireNodePoolClusterRef: true } : {}),
      informer: { onError: (err) => this.log(`watch: ${(err as Error).message}`), ...opts.informer },
    });
  }

  isLeader(): boolean {
    return this.leading;
  }

  /** Ready = caches synced and fresh (the /readyz gate). */
  ready(): boolean {
    return this.cache.healthy();
  }

  /** An Event that could not be written is logged naming the object it was about. */
  private readonly onEventError = (err: unknown, about: LogSubject): void => this.log(`event: ${(err as Error).message}`, about);

  async start(): Promise<void> {
    await this.cache.start();
    const capiVersion = this.cache.capiVersion!;
    this.actuator = new KubeActuator({
      management: this.managementClient, capiVersion, dryRun: this.opts.dryRun ?? false,
      events: new EventRecorder(this.managementClient, this.onEventError),
      log: this.log,
    });
    this.actionEvents = new KubeActionEvents({
      capiVersion,
      groupEvents: new EventRecorder(this.managementClient, this.onEventError),
      podEvents: new EventRecorder(this.workloadClient, this.onEventError),
    });
    this.groupMemory = new KubeGroupMemory({ management: this.managementClient, capiVersion, annotation: SCALE_UP_MEMORY_ANNOTATION, dryRun: this.opts.dryRun ?? false });
    if (this.opts.registry) {
      this.metrics = registerControllerMetrics(this.opts.registry, this.cache, this.actuator, this.snapshots);
      this.latency = new PodLatencyTracker(this.cache, (s) => this.metrics?.observePodReady(s), undefined, (s) => this.metrics?.observePodStartup(s));
      this.latency.start();
    }
    await this.cache.waitForSync(60_000);
    this.log(`caches synced (cluster.x-k8s.io/${capiVersion}${this.cache.absent.length ? `; not installed: ${this.cache.absent.join(', ')}` : ''})`);
    // Fleet mode: the terms come from the cluster's Lease, held by its owner (lead()).
    if (this.opts.externalTerms) return;
    const le = this.opts.leaderElection;
    if (!le) {
      // One replica: a single term, ended by stop().
      this.ownTerm = new AbortController();
      this.startLeading(this.ownTerm.signal);
      return;
    }
    this.elector = new LeaderElector({
      client: le.in === 'management' ? this.managementClient : this.workloadClient, namespace: le.namespace, name: le.name ?? 'headroom-controller',
      identity: le.identity ?? `${hostname()}_${process.pid}`,
      ...(le.leaseDurationMs ? { leaseDurationMs: le.leaseDurationMs } : {}),
      ...(le.renewDeadlineMs ? { renewDeadlineMs: le.renewDeadlineMs } : {}),
      ...(le.retryPeriodMs ? { retryPeriodMs: le.retryPeriodMs } : {}),
      onStartedLeading: (term) => this.startLeading(term),
      onStoppedLeading: () => void this.stopLeading(),
      log: this.log,
    });
    this.elector.start();
  }

  /**
   * Fleet mode (`externalTerms`): a term begun by whoever holds this cluster's Lease
   * (src/fleet); it ends when `term` aborts. Call after start().
   */
  lead(term: AbortSignal): void {
    if (term.aborted) return;
    term.addEventListener('abort', () => void this.stopLeading(), { once: true });
    this.startLeading(term);
  }

  /**
   * A leadership term begins. Everything that acts (provisioner, disruptor, status
   * writer) is built for this term on an actuator and clients fenced by `term`, so
   * nothing it does is written once the term has ended. A new term starts acting only
   * after the previous term's loops have stopped: never two provisioners at once.
   */
  private startLeading(term: AbortSignal): void {
    if (this.leading) return;
    this.leading = true;
    this.metrics?.setLeader(true);
    const previous = this.stopping;
    this.starting = (async () => {
      await previous;
      if (term.aborted) return;
      this.act(term);
    })();
  }

  private act(term: AbortSignal): void {
    const fenced = this.actuator!.fenced(term);
    // Every CAPI call of the loops is timed and its errors counted (cloudprovider_* metrics).
    const actuator = this.metrics ? new MeteredActuator(fenced, this.metrics.observeCapiCall) : fenced;
    const solve = this.opts.solve ?? ((s) => solveInProcess(s));
    const prediction = this.opts.prediction ? this.startPrediction(this.opts.prediction, term) : undefined;
    // Forecasts change between passes while the objects stay the same: never memoized.
    const withForecast = (source: PredictedPodSource, which: 'pods' | 'keepPods' = 'pods'): PredictedPodSource => (prediction
      ? (objects) => {
        const forecast = which === 'pods' ? prediction.pods() : prediction.keepPods();
        const rest = source(objects);
        return forecast.length === 0 ? rest : [...rest, ...forecast];
      }
      : source);
    const snapshots = this.snapshots;
    // What the snapshot rejects or does not scale is also said on the object.
    const issueEvents = new SnapshotIssueEvents({
      capiVersion: this.cache.capiVersion!,
      management: new EventRecorder(this.managementClient.fenced(term), this.onEventError),
      workload: new EventRecorder(this.workloadClient.fenced(term), this.onEventError),
    });
    this.provisioner = new Provisioner({
      state: this.cache, actuator, events: this.actionEvents!.fenced(term), memory: this.groupMemory!.fenced(term), clock: systemClock, snapshots,
      solve,
      ...(this.opts.fallbackSolve ? { fallbackSolve: this.opts.fallbackSolve } : {}),
      term,
      ready: () => this.cache.healthy(),
      log: this.log,
      onIssue: (i) => {
        this.log(`snapshot ${i.severity}: ${i.message}`, i.object);
        issueEvents.report(i);
      },
      onCycle: (r) => {
        this.lastCycle = r;
        this.metrics?.observeCycle(r);
        this.opts.onCycle?.(r);
      },
    }, {
      // Capacity to scale for: buffers and atomic bookings (check-capacity never scales).
      extraPendingPods: withForecast(combinePredictedSources([capacityBufferPods, provisioningRequestPods, ...(this.opts.predictedSources ?? [])])),
      ...(this.opts.batch ? { batch: this.opts.batch } : {}),
      ...(this.opts.observeTimeoutMs ? { observeTimeoutMs: this.opts.observeTimeoutMs } : {}),
      ...(this.opts.solveDeadlineMs ? { solveDeadlineMs: this.opts.solveDeadlineMs } : {}),
      ...this.opts.provisioning,
    });
    this.provisioner.start();
    // With pods watched in one namespace only, a node running just other namespaces'
    // pods would look empty: disruption then runs only when asked for explicitly.
    const podScoped = this.opts.workloadScope?.namespace !== undefined;
    if (podScoped && this.opts.disruption === undefined) this.log('disruption off: pods are watched in one namespace only (pass --disruption=true to run it anyway)');
    if (this.opts.disruption !== false && !(podScoped && this.opts.disruption === undefined)) {
      this.disruptor = new Disruptor({
        state: this.cache, actuator, clock: systemClock, snapshots,
        // Taints go through the term's fenced client: none is written once leadership is lost.
        nodes: new KubeDisruptionNodes(this.workloadClient.fenced(term), { dryRun: this.opts.dryRun ?? false, log: this.log }),
        // The term's end also ends a pass's solves.
        solve: (s) => solve(s, term),
        ready: () => this.cache.healthy(),
        log: this.log,
        onPass: (r) => {
          this.metrics?.observeDisruption(r);
          this.opts.onDisruption?.(r);
        },
      }, {
        // Capacity to keep: buffers and every booking.
        // The Disruptor keeps what the forecast needs over the keep window, not only what is provisioned for now.
        extraPendingPods: withForecast(combinePredictedSources([capacityBufferPods, bookedPods, ...(this.opts.predictedSources ?? [])]), 'keepPods'),
        ...withDrainTimeout(this.opts.disruption ?? {}, this.opts.drainTimeoutMs),
      });
      this.disruptor.start();
    }
    if (this.managementClient !== this.workloadClient) {
      const client = this.workloadClient.fenced(term);
      this.workloadPools = new WorkloadNodePoolWarnings({
        client, events: new EventRecorder(client, this.onEventError), managementServer: this.managementClient.server.origin,
        log: this.log, dryRun: this.opts.dryRun ?? false,
        ...(this.opts.workloadNodePoolCheckMs ? { intervalMs: this.opts.workloadNodePoolCheckMs } : {}),
      });
      this.workloadPools.start();
    }
    if (!this.opts.dryRun) {
      this.poolStatus = new NodePoolStatusWriter(
        this.cache, this.managementClient.fenced(term), this.log, this.opts.nodePoolStatusIntervalMs, this.snapshots,
        new EventRecorder(this.managementClient.fenced(term), this.onEventError),
      );
      this.poolStatus.start();
      const intervalMs = this.opts.capacityStatusIntervalMs ?? 5000;
      if (this.cache.capacityBufferVersion) {
        this.bufferStatus = new CapacityBufferStatusWriter({
          cache: this.cache, client: this.workloadClient.fenced(term), scales: new ScaleReader(this.workloadClient), log: this.log,
          lastCycle: () => this.lastCycle, onChunksChanged: () => this.provisioner?.trigger(), intervalMs,
        });
        this.bufferStatus.start();
      }
      if (this.cache.provisioningRequestVersion) {
        this.requestStatus = new ProvisioningRequestWriter({
          cache: this.cache, client: this.workloadClient.fenced(term), plan: (s) => solve(s, term), log: this.log, intervalMs,
          events: new EventRecorder(this.workloadClient.fenced(term), this.onEventError),
          ...(this.opts.provisioningRequestBookingMs !== undefined ? { bookingMs: this.opts.provisioningRequestBookingMs } : {}),
          onOutcome: (cls, outcome) => this.metrics?.observeProvisioningRequest(cls, outcome),
          onBooked: () => this.provisioner?.trigger(),
        });
        this.requestStatus.start();
      }
    }
    if (this.opts.intake) this.unsubscribeIntake = this.opts.intake.subscribe(() => this.provisioner?.trigger());
    if (prediction) void prediction.start();
  }

  /** The prediction loop of this term: its writes (model, Events, provisioned-for) are fenced by `term`. */
  private startPrediction(opts: PredictionOptions, term: AbortSignal): PredictionLoop {
    const client = this.workloadClient.fenced(term);
    const events = new PredictionEvents();
    const recorder = new EventRecorder(client, this.onEventError);
    this.prediction = new PredictionLoop({
      state: this.cache, clock: systemClock, log: this.log, signal: term, snapshots: this.snapshots,
      ...(opts.state && !this.opts.dryRun ? {
        store: new ConfigMapStateStore(
          opts.state.in === 'management' ? this.managementClient.fenced(term) : client, opts.state.namespace, opts.state.name,
          ...(opts.state.labels ? [{ 'app.kubernetes.io/managed-by': 'headroom', ...opts.state.labels }] : []),
        ),
      } : {}),
      ...(this.opts.intake ? { intake: this.opts.intake } : {}),
      onPredictedChange: () => this.provisioner?.trigger(),
      onPass: (p) => {
        this.metrics?.observePrediction(p);
        for (const e of events.next(p.decisions)) void recorder.emit(e.target, e.spec);
        if (!this.opts.dryRun) for (const patch of p.provisionedFor) void this.markProvisionedFor(client, patch);
      },
    }, {
      defaultBootHorizonMs: opts.defaultBootHorizonMs,
      ...(opts.intervalMs ? { intervalMs: opts.intervalMs } : {}),
      ...(opts.saveIntervalMs ? { saveIntervalMs: opts.saveIntervalMs } : {}),
    });
    return this.prediction;
  }

  /** The extender's provisioned-for bonus reads this annotation from the Node, on every replica. */
  private async markProvisionedFor(client: KubeClient, patch: ProvisionedForPatch): Promise<void> {
    try {
      await client.request('PATCH', `/api/v1/nodes/${encodeURIComponent(patch.node)}`, {
        body: { metadata: { annotations: { [PROVISIONED_FOR_ANNOTATION]: patch.owners.join(',') } } },
        contentType: 'application/merge-patch+json',
      });
    } catch (err) {
      this.log(`provisioned-for on node ${patch.node}: ${(err as Error).message}`, { kind: 'Node', name: patch.node });
    }
  }

  /**
   * The term has ended (its token already aborted, so its writes are refused): stop
   * its loops. The next term waits for this.
   */
  private stopLeading(): Promise<void> {
    if (!this.leading) return this.stopping;
    this.leading = false;
    this.metrics?.setLeader(false);
    const starting = this.starting;
    this.stopping = (async () => {
      await starting;
      this.unsubscribeIntake?.();
      this.unsubscribeIntake = undefined;
      this.poolStatus?.stop();
      this.poolStatus = undefined;
      this.workloadPools?.stop();
      this.workloadPools = undefined;
      this.bufferStatus?.stop();
      this.bufferStatus = undefined;
      this.requestStatus?.stop();
      this.requestStatus = undefined;
      const p = this.provisioner;
      this.provisioner = undefined;
      const d = this.disruptor;
      this.disruptor = undefined;
      const pr = this.prediction;
      this.prediction = undefined;
      // The term has ended: no save here (stop() saves before it ends the term).
      await Promise.all([p?.stop(), d?.stop(), pr?.stop({ save: false })]);
    })();
    return this.stopping;
  }

  /**
   * Liveness: false when this replica leads and demand has waited longer than
   * `stallMs` for a provisioning cycle to finish on it (a stuck cycle or solve). A
   * standby, or a leader with nothing to do, is alive: restarting it would not help.
   */
  live(now = Date.now()): boolean {
    const p = this.provisioner;
    if (!this.leading || !p) return true;
    return p.stalledMs(now) <= (this.opts.livenessStallMs ?? DEFAULT_LIVENESS_STALL_MS);
  }

  /** Graceful stop: end the term (cancelling the running cycle), release the lease, stop watching. */
  async stop(): Promise<void> {
    // Still leading: keep what was learned before the term ends (ADR 0092).
    await this.prediction?.save();
    this.ownTerm?.abort(new Error('controller stopping'));
    // The elector aborts the term before it releases the lease, then calls onStoppedLeading.
    await this.elector?.stop();
    await this.stopLeading();
    this.latency?.stop();
    this.cache.stop();
    this.workloadClient.close();
    if (this.managementClient !== this.workloadClient && !this.opts.managementClient) this.managementClient.close();
  }

  /** Abrupt stop for tests (a killed process): no lease release, nothing finished. */
  kill(): void {
    this.ownTerm?.abort(new Error('controller killed'));
    this.leading = false;
    this.unsubscribeIntake?.();
    this.poolStatus?.stop();
    this.workloadPools?.stop();
    this.bufferStatus?.stop();
    this.requestStatus?.stop();
    void this.provisioner?.stop();
    this.provisioner = undefined;
    void this.disruptor?.stop();
    this.disruptor = undefined;
    void this.prediction?.stop({ save: false });
    this.prediction = undefined;
    this.elector?.abandon();
    this.cache.stop();
  }
}

/** The Disruptor's options with `--drain-timeout` as its drain's timeout (a drain the options turn off stays off). */
export function withDrainTimeout(options: DisruptorOptions, drainTimeoutMs: number | undefined): DisruptorOptions {
  if (!drainTimeoutMs || options.drain === false) return options;
  return { ...options, drain: { timeoutMs: drainTimeoutMs, ...options.drain } };
}
