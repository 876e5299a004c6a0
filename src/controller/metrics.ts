import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { CapiActuator } from '../capi/actuator.js';
import type { KubeActuator } from '../capi/kube-actuator.js';
import type { CapiCallObserver } from '../capi/metered-actuator.js';
import type { DisruptionReport } from '../disruption/disruption-report.js';
import type { ClusterCache } from '../kube/cluster-cache.js';
import type { SnapshotBuilder } from '../cluster/snapshot-builder.js';
import { resolveCapacityBuffers } from '../provisioning/capacity-buffers.js';
import type { CycleReport } from '../provisioning/cycle-report.js';
import { ForecastScore } from './forecast-score.js';
import type { PredictionPass } from './prediction-loop.js';
import { METRIC_PREFIX } from '../server/metrics.js';
import { registerClusterStateMetrics } from './cluster-state-metrics.js';

/**
 * The solver workers' heaps, which the process metrics (the main thread's isolate) do
 * not include: what the last solve's worker used and had committed as it ended, and the
 * most any worker committed.
 */
export function registerSolverWorkerMetrics(registry: Registry, workerHeap: { usedBytes: number; committedBytes: number; maxCommittedBytes: number }): void {
  new Gauge({
    name: `${METRIC_PREFIX}solver_worker_heap_bytes`,
    help: 'V8 heap of the solver worker thread that ran the last solve, as it ended (used, committed), and the most any solve\'s worker committed (max_committed).',
    labelNames: ['kind'] as const,
    registers: [registry],
    collect() {
      this.set({ kind: 'used' }, workerHeap.usedBytes);
      this.set({ kind: 'committed' }, workerHeap.committedBytes);
      this.set({ kind: 'max_committed' }, workerHeap.maxCommittedBytes);
    },
  });
}

/**
 * The controller's metrics, in the process-wide registry (src/server/metrics.ts).
 * Gauges that mirror state are computed at scrape time from the cache, so they
 * can never lag behind it.
 */
export interface ControllerMetrics {
  observeCycle(report: CycleReport): void;
  observeDisruption(report: DisruptionReport): void;
  observePodReady(seconds: number): void;
  /** Creation to Running of a pod seen Pending. */
  observePodStartup(seconds: number): void;
  /** A call to the CAPI port (through MeteredActuator). */
  observeCapiCall: CapiCallObserver;
  observePrediction(pass: PredictionPass): void;
  setLeader(leading: boolean): void;
  /** A ProvisioningRequest transition (accepted, provisioned, capacity-not-found, ...). */
  observeProvisioningRequest(className: string, outcome: string): void;
}

export function registerControllerMetrics(registry: Registry, cache: ClusterCache, actuator?: CapiActuator, snapshots?: SnapshotBuilder): ControllerMetrics {
  const p = METRIC_PREFIX;
  new Gauge({
    name: `${p}node_group_replicas`,
    help: 'spec.replicas of each CAPI node group, as observed.',
    labelNames: ['kind', 'namespace', 'name'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const g of cache.objects().nodeGroups) {
        const r = (g.spec as { replicas?: unknown } | undefined)?.replicas;
        if (typeof r === 'number') this.set({ kind: g.kind ?? '', namespace: g.metadata?.namespace ?? '', name: g.metadata?.name ?? '' }, r);
      }
    },
  });
  new Gauge({
    name: `${p}informer_last_sync_age_seconds`,
    help: 'Seconds since each watched resource was last known current (list, event or bookmark). Growing = a stuck watch.',
    labelNames: ['resource'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const s of cache.staleness()) this.set({ resource: s.resource }, Number.isFinite(s.ageSeconds) ? s.ageSeconds : -1);
    },
  });
  // Counts kept by the cache and the actuator, exposed as Counters: copied at scrape time.
  new Counter({
    name: `${p}informer_relists_total`,
    help: 'Relists (410 Gone) per watched resource since start.',
    labelNames: ['resource'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const s of cache.informerStats()) this.inc({ resource: s.resource }, s.relists);
    },
  });
  new Counter({
    name: `${p}informer_watch_list_fallbacks_total`,
    help: 'Times a watched resource fell back from streaming lists (watch-list, sendInitialEvents) to paged lists: the server refused or ignored them (ADR 0121).',
    labelNames: ['resource'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const s of cache.informerStats()) if (s.watchListFallbacks) this.inc({ resource: s.resource }, s.watchListFallbacks);
    },
  });
  const kube = actuator as KubeActuator | undefined;
  if (kube && 'capiWrites' in kube) {
    new Counter({
      name: `${p}capi_writes_total`,
      help: 'Writes to CAPI objects since start, by operation (scale, annotate, create, delete, conflicts).',
      labelNames: ['op'] as const,
      registers: [registry],
      collect() {
        this.reset();
        for (const [op, n] of Object.entries(kube.capiWrites)) this.inc({ op }, n);
      },
    });
  }
  registerClusterStateMetrics(registry, cache, snapshots);
  const scaleUps = new Counter({
    name: `${p}scale_ups_total`,
    help: 'Scale-ups written, by node group.',
    labelNames: ['kind', 'namespace', 'name'] as const,
    registers: [registry],
  });
  const ineffectiveScaleUps = new Counter({
    name: `${p}scale_ups_ineffective_total`,
    help: 'Scale-ups whose new nodes came up Ready but could not take the pods that triggered them, by node group; each backs the group off.',
    labelNames: ['kind', 'namespace', 'name'] as const,
    registers: [registry],
  });
  const nodesCreated = new Counter({
    name: `${p}nodes_created_total`,
    help: 'Nodes Headroom asked for (replicas added, standalone Machines created), by NodePool and reason (provisioned: pending pods; predicted: buffers, bookings, forecasts).',
    labelNames: ['nodepool', 'reason'] as const,
    registers: [registry],
  });
  const nodesTerminated = new Counter({
    name: `${p}nodes_terminated_total`,
    help: 'Nodes Headroom removed, by NodePool and reason (empty, expired: disruption; failed, timeout: a Machine that never became a Ready node).',
    labelNames: ['nodepool', 'reason'] as const,
    registers: [registry],
  });
  const queueDepth = new Gauge({
    name: `${p}scheduler_queue_depth`,
    help: 'Pods waiting for capacity at the last provisioning cycle (pending and predicted).',
    registers: [registry],
  });
  const unschedulable = new Gauge({
    name: `${p}scheduler_unschedulable_pods_count`,
    help: 'Pods the last provisioning cycle found no node or node group for.',
    registers: [registry],
  });
  const cycles = new Counter({
    name: `${p}provisioning_cycles_total`,
    help: 'Provisioning cycles, by outcome.',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  const solveDuration = new Histogram({
    name: `${p}scheduler_scheduling_duration_seconds`,
    help: 'Time to solve one provisioning snapshot (the scheduling simulation), by controller.',
    labelNames: ['controller'] as const,
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  const podReady = new Histogram({
    name: `${p}pod_creation_to_node_ready_seconds`,
    help: 'From a pending pod\'s creation to the node it was bound to being Ready.',
    buckets: [0.25, 0.5, 1, 2, 3, 5, 10, 20, 30, 60, 120, 300, 600],
    registers: [registry],
  });
  const podStartup = new Histogram({
    name: `${p}pods_startup_duration_seconds`,
    help: 'From a pod\'s creation to Headroom seeing it Running (pods first seen Pending).',
    buckets: [0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300, 600, 1200],
    registers: [registry],
  });
  const decisions = new Counter({
    name: `${p}voluntary_disruption_decisions_total`,
    help: 'Disruption decisions carried out, by decision (delete: written; declined: the actuator declined, dry run or min size; failed) and reason (empty, expired).',
    labelNames: ['decision', 'reason'] as const,
    registers: [registry],
  });
  const eligible = new Gauge({
    name: `${p}voluntary_disruption_eligible_nodes`,
    help: 'Nodes the last disruption pass found eligible, by reason (empty, expired): those it removed and those it kept.',
    labelNames: ['reason'] as const,
    registers: [registry],
  });
  const blocked = new Gauge({
    name: `${p}voluntary_disruption_blocked_nodes`,
    help: 'Eligible nodes the last disruption pass kept, by reason and what kept them (min-size, unmanaged, budget, pdb, pod-without-controller, pods-cannot-move, changed).',
    labelNames: ['reason', 'blocked_by'] as const,
    registers: [registry],
  });
  const capiDuration = new Histogram({
    name: `${p}cloudprovider_duration_seconds`,
    help: 'Duration of calls to the CAPI port (the cloud provider), by method.',
    labelNames: ['method'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });
  const capiErrors = new Counter({
    name: `${p}cloudprovider_errors_total`,
    help: 'Failed calls to the CAPI port, by method and error class (Conflict, NotFound, Forbidden, TooManyRequests, ServerError, Fenced, ...).',
    labelNames: ['method', 'error'] as const,
    registers: [registry],
  });
  const leader = new Gauge({ name: `${p}leader`, help: '1 while this replica is the leader.', registers: [registry] });
  const provisioningRequests = new Counter({
    name: `${p}provisioning_requests_total`,
    help: 'ProvisioningRequest transitions written, by provisioning class and outcome (accepted, capacity-found, provisioned, capacity-not-found, failed, booking-expired).',
    labelNames: ['class', 'outcome'] as const,
    registers: [registry],
  });
  new Gauge({
    name: `${p}capacity_buffer_chunks`,
    help: 'Chunks each CapacityBuffer resolves to (after limits and quotas); 0 for buffers not served.',
    labelNames: ['namespace', 'name'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const b of resolveCapacityBuffers(cache.objects())) this.set({ namespace: b.namespace, name: b.name }, b.replicas);
    },
  });
  const forecastPods = new Gauge({
    name: `${p}prediction_forecast_pods`,
    help: `Pods forecast at the pool's quantile over the node-boot horizon, per workload (the ${MAX_WORKLOAD_SERIES} largest in prediction-enabled NodePools).`,
    labelNames: ['workload', 'method'] as const,
    registers: [registry],
  });
  const actualPods = new Gauge({
    name: `${p}prediction_actual_pods`,
    help: 'Pods of the workload now (what the forecast is judged against), same workloads as prediction_forecast_pods.',
    labelNames: ['workload'] as const,
    registers: [registry],
  });
  const pinball = new Gauge({
    name: `${p}prediction_pinball_loss`,
    help: 'Mean pinball loss of the last 64 forecasts judged at the end of their horizon against the peak pod count seen (0 = perfect), per workload.',
    labelNames: ['workload'] as const,
    registers: [registry],
  });
  const predictedPods = new Gauge({
    name: `${p}prediction_predicted_pods`,
    help: 'Predicted (virtual) pods held for forecasts, per NodePool.',
    labelNames: ['nodepool'] as const,
    registers: [registry],
  });
  const predictedNodes = new Gauge({
    name: `${p}prediction_predicted_nodes`,
    help: 'Node-equivalents held for predicted pods, per NodePool.',
    labelNames: ['nodepool'] as const,
    registers: [registry],
  });
  const predictedCost = new Gauge({
    name: `${p}prediction_predicted_cost_per_hour`,
    help: 'Price per hour of the node-equivalents held for predicted pods, per NodePool.',
    labelNames: ['nodepool'] as const,
    registers: [registry],
  });
  const boots = new Counter({ name: `${p}prediction_node_boots_observed_total`, help: 'Node boots timed (Machine created -> Node Ready).', registers: [registry] });
  const score = new ForecastScore();
  return {
    observeProvisioningRequest(className, outcome) {
      provisioningRequests.inc({ class: className, outcome });
    },
    observeCycle(r) {
      cycles.inc({ outcome: r.skipped ?? (r.scaleUps.some((u) => u.error) ? 'error' : 'ok') });
      queueDepth.set(r.pendingPods);
      unschedulable.set(r.unschedulable);
      if (!r.skipped) solveDuration.observe({ controller: 'provisioner' }, r.solveMs / 1000);
      for (const u of r.scaleUps) {
        if (!u.result?.written) continue;
        scaleUps.inc({ kind: u.kind, namespace: u.namespace, name: u.name });
        if (u.added) nodesCreated.inc({ nodepool: u.nodePool ?? '', reason: u.cause ?? 'provisioned' }, u.added);
      }
      for (const f of r.provisionFailures ?? []) if (!f.error) nodesTerminated.inc({ nodepool: f.nodePool ?? '', reason: f.kind });
      for (const x of r.ineffectiveScaleUps ?? []) {
        const [kind = '', namespace = '', name = ''] = x.group.split('/');
        ineffectiveScaleUps.inc({ kind, namespace, name });
      }
    },
    observeDisruption(r) {
      if (r.skipped) return;
      const eligibleBy = new Map<string, number>();
      const count = (reason: string) => eligibleBy.set(reason, (eligibleBy.get(reason) ?? 0) + 1);
      for (const x of r.removals) {
        const reason = x.reason.toLowerCase();
        count(reason);
        decisions.inc({ decision: x.error !== undefined ? 'failed' : x.result?.written ? 'delete' : 'declined', reason });
        if (x.result?.written) nodesTerminated.inc({ nodepool: x.group.nodePool ?? '', reason });
      }
      blocked.reset();
      for (const k of r.kept) {
        if (!k.reason) continue;
        const reason = k.reason.toLowerCase();
        count(reason);
        blocked.inc({ reason, blocked_by: k.blockedBy ?? 'other' });
      }
      eligible.reset();
      for (const [reason, n] of eligibleBy) eligible.set({ reason }, n);
    },
    observePodReady(seconds) {
      podReady.observe(seconds);
    },
    observePodStartup(seconds) {
      podStartup.observe(seconds);
    },
    observeCapiCall(method, seconds, error) {
      capiDuration.observe({ method }, seconds);
      if (error) capiErrors.inc({ method, error });
    },
    setLeader(leading) {
      leader.set(leading ? 1 : 0);
    },
    observePrediction(pass) {
      boots.inc(pass.boots);
      // Bounded label set: the workloads of enabled pools with the largest forecasts.
      const shown = pass.decisions.filter((d) => d.pool !== undefined)
        .sort((a, b) => b.forecast.upper - a.forecast.upper || (a.key < b.key ? -1 : 1))
        .slice(0, MAX_WORKLOAD_SERIES);
      const keep = new Set(shown.map((d) => d.key));
      score.retain(keep);
      forecastPods.reset();
      actualPods.reset();
      pinball.reset();
      for (const d of shown) {
        const actual = pass.actual.get(d.key) ?? 0;
        score.actual(d.key, pass.at, actual);
        score.forecast(d.key, pass.at, d.horizonMs, d.forecast.upper, pass.quantiles[d.pool!] ?? 0.9);
        forecastPods.set({ workload: d.key, method: d.forecast.method }, d.forecast.upper);
        actualPods.set({ workload: d.key }, actual);
        const loss = score.loss(d.key);
        if (loss !== undefined) pinball.set({ workload: d.key }, loss);
      }
      predictedPods.reset();
      predictedNodes.reset();
      predictedCost.reset();
      const byPool = new Map<string, { pods: number; nodes: number; cost: number }>();
      for (const d of pass.decisions) {
        if (d.pool === undefined) continue;
        const t = byPool.get(d.pool) ?? { pods: 0, nodes: 0, cost: 0 };
        t.pods += d.pods;
        t.nodes += d.nodes;
        t.cost += d.costPerHour;
        byPool.set(d.pool, t);
      }
      for (const [pool, t] of byPool) {
        predictedPods.set({ nodepool: pool }, t.pods);
        predictedNodes.set({ nodepool: pool }, t.nodes);
        predictedCost.set({ nodepool: pool }, t.cost);
      }
    },
  };
}

/** Workload series per prediction metric: a bounded label set whatever the cluster holds. */
export const MAX_WORKLOAD_SERIES = 50;
