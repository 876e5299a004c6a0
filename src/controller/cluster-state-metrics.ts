import type { V1Pod } from '@kubernetes/client-node';
import { Gauge, type Registry } from 'prom-client';
import { SnapshotBuilder } from '../cluster/snapshot-builder.js';
import { lastInputMemo } from '../cluster/input-memo.js';
import type { ClusterSnapshot, PoolLimits } from '../cluster/snapshot.js';
import type { ClusterCache } from '../kube/cluster-cache.js';
import { addInto, CPU, type Resources } from '../scheduling/resources.js';
import type { SchedulingPod } from '../scheduling/scheduling-pod.js';
import { forEachListChange } from '../cluster/list-changes.js';
import { METRIC_PREFIX } from '../server/metrics.js';

/** Per NodePool ('' for nodes in no pool), per resource: what nodes offer and what their pods request. */
interface NodeTotals {
  allocatable: Map<string, Resources>;
  requests: Map<string, Resources>;
  nodes: number;
}

/** cpu is kept in millicores inside Headroom; metrics give cores, as Kubernetes quantities do. */
function metricValue(resource: string, v: number): number {
  return resource === CPU ? v / 1000 : v;
}

function addTo(totals: Map<string, Resources>, pool: string, add: Resources): void {
  let t = totals.get(pool);
  if (!t) totals.set(pool, (t = {}));
  for (const k in add) t[k] = (t[k] ?? 0) + add[k]!;
}

/**
 * The summed requests of a node's pods, per pod list: successive snapshots share the
 * lists of the nodes whose pods did not change (pod-placement.ts), so a scrape sums only
 * the changed ones.
 */
const podRequestSums = new WeakMap<readonly SchedulingPod[], Resources>();
function requestsOf(pods: readonly SchedulingPod[]): Resources {
  let sum = podRequestSums.get(pods);
  if (!sum) {
    sum = {};
    for (const p of pods) addInto(sum, p.requests);
    podRequestSums.set(pods, sum);
  }
  return sum;
}

/** Registered Nodes only (in-flight placeholders have no allocatable yet), by their group's NodePool. */
function nodeTotals(snapshot: ClusterSnapshot): NodeTotals {
  const poolOf = new Map(snapshot.groups.map((g) => [g.id, g.nodePool ?? '']));
  const out: NodeTotals = { allocatable: new Map(), requests: new Map(), nodes: 0 };
  for (const n of snapshot.nodes) {
    if (n.inFlight) continue;
    out.nodes++;
    const pool = (n.groupId && poolOf.get(n.groupId)) || '';
    addTo(out.allocatable, pool, n.allocatable);
    addTo(out.requests, pool, requestsOf(n.pods));
  }
  return out;
}

/** The limits a NodePool sets (an absent one is no limit, and no series). */
function limitsOf(l: PoolLimits): Resources {
  const out: Resources = {};
  for (const k of ['cpu', 'memory', 'nodes'] as const) if (l[k] !== undefined) out[k] = l[k];
  return out;
}

/** Pods by phase, kept from the changes between the pod lists of successive scrapes (list-changes.ts). */
class PodPhases {
  private readonly counts = new Map<string, number>();
  private last: readonly V1Pod[] = [];

  of(pods: readonly V1Pod[]): ReadonlyMap<string, number> {
    forEachListChange(this.last, pods, (p) => `${p.metadata?.namespace}/${p.metadata?.name}`, (p) => this.add(p, -1), (p, replaced) => {
      if (replaced) this.add(replaced, -1);
      this.add(p, 1);
    });
    if (this.last !== pods) this.last = pods.slice();
    return this.counts;
  }

  private add(p: V1Pod, n: number): void {
    const phase = p.status?.phase ?? 'Unknown';
    const c = (this.counts.get(phase) ?? 0) + n;
    if (c === 0) this.counts.delete(phase);
    else this.counts.set(phase, c);
  }
}

/**
 * Gauges of the cluster's state, named like Karpenter's nodes_*, nodepools_*,
 * cluster_* and pods_state, computed at scrape time from the cache, so they never lag
 * it. Labels are NodePool, resource and phase: bounded whatever the cluster holds (no
 * node or pod names, unlike Karpenter's per-node and per-pod series). The snapshot
 * comes from `builder`, the controller's, shared with its loops: a scrape after a
 * cycle on the same objects builds nothing. The sums are made once per snapshot
 * however many gauges read them.
 */
export function registerClusterStateMetrics(registry: Registry, cache: ClusterCache, builder = new SnapshotBuilder()): void {
  const p = METRIC_PREFIX;
  const snapshot = (): ClusterSnapshot => builder.build(cache.objects(), { strict: false });
  const totals = lastInputMemo(nodeTotals);
  const phases = new PodPhases();
  /** A gauge of resources per NodePool, read from the snapshot. */
  const perPool = (name: string, help: string, of: (s: ClusterSnapshot) => Iterable<[string, Resources]>) => new Gauge({
    name: `${p}${name}`,
    help,
    labelNames: ['nodepool', 'resource_type'] as const,
    registers: [registry],
    collect() {
      if (!cache.synced()) return;
      this.reset();
      for (const [nodepool, r] of of(snapshot())) for (const k in r) this.set({ nodepool, resource_type: k }, metricValue(k, r[k]!));
    },
  });
  perPool('nodes_allocatable',
    'Allocatable resources of the registered Nodes, summed by NodePool (empty for nodes in none) and resource type (cpu in cores, memory in bytes).',
    (s) => totals(s).allocatable);
  perPool('nodes_total_pod_requests',
    'Requests of the pods bound to registered Nodes (DaemonSet pods included), summed by NodePool and resource type.',
    (s) => totals(s).requests);
  new Gauge({
    name: `${p}cluster_utilization_percent`,
    help: 'Pod requests as a percentage of allocatable, over all registered Nodes, by resource type.',
    labelNames: ['resource_type'] as const,
    registers: [registry],
    collect() {
      this.reset();
      if (!cache.synced()) return;
      const t = totals(snapshot());
      const alloc: Resources = {};
      const req: Resources = {};
      for (const r of t.allocatable.values()) for (const k in r) alloc[k] = (alloc[k] ?? 0) + r[k]!;
      for (const r of t.requests.values()) for (const k in r) req[k] = (req[k] ?? 0) + r[k]!;
      for (const k in alloc) if (alloc[k]! > 0) this.set({ resource_type: k }, (100 * (req[k] ?? 0)) / alloc[k]!);
    },
  });
  new Gauge({
    name: `${p}cluster_state_node_count`,
    help: 'Registered Nodes in Headroom\'s view of the cluster.',
    registers: [registry],
    collect() {
      if (cache.synced()) this.set(totals(snapshot()).nodes);
    },
  });
  perPool('nodepools_usage',
    'What each NodePool\'s nodes use against its limits (existing and in flight), by resource type (cpu in cores, memory in bytes, nodes).',
    (s) => Object.entries(s.limits).map(([pool, l]) => [pool, l.used]));
  perPool('nodepools_limit',
    'Each NodePool\'s spec.limits, by resource type (cpu in cores, memory in bytes, nodes); no series for a resource without a limit.',
    (s) => Object.entries(s.limits).map(([pool, l]) => [pool, limitsOf(l)]));
  new Gauge({
    name: `${p}pods_state`,
    help: 'Pods in the watched scope, by phase (Pending, Running, Succeeded, Failed, Unknown): counts, not one series per pod.',
    labelNames: ['phase'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const [phase, n] of phases.of(cache.objects().pods as V1Pod[])) this.set({ phase }, n);
    },
  });
}
