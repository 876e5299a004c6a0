import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { Registry } from 'prom-client';
import type { CapiActuator } from '../../../src/capi/actuator.js';
import { loadObjects } from '../../../src/cluster/load-objects.js';
import type { ClusterObjects } from '../../../src/cluster/objects.js';
import { SnapshotBuilder } from '../../../src/cluster/snapshot-builder.js';
import { registerControllerMetrics, registerSolverWorkerMetrics } from '../../../src/controller/metrics.js';
import type { DisruptionReport } from '../../../src/disruption/disruption-report.js';
import type { ClusterCache } from '../../../src/kube/cluster-cache.js';
import type { CycleReport } from '../../../src/provisioning/cycle-report.js';

const objects = loadObjects({ source: 'example-cluster.yaml', text: readFileSync(new URL('../../fixtures/example-cluster.yaml', import.meta.url), 'utf8') });

/** A cache over the example cluster, with counts an informer and an actuator keep. */
function setup(cluster: ClusterObjects = objects) {
  const cache = {
    objects: () => cluster,
    synced: () => true,
    staleness: () => [{ resource: 'pods', ageSeconds: 3, synced: true }],
    informerStats: () => [{ resource: 'pods', relists: 4, watchListFallbacks: 0 }, { resource: 'nodes', relists: 0, watchListFallbacks: 1 }],
  } as unknown as ClusterCache;
  const actuator = { capiWrites: { scale: 7, annotate: 1, create: 0, delete: 2, conflicts: 0 } } as unknown as CapiActuator;
  const registry = new Registry();
  const metrics = registerControllerMetrics(registry, cache, actuator);
  return { registry, metrics };
}

/** The value of one series in the exposition text, or undefined. */
function value(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

const group = { id: 'MachineDeployment/ns/md', kind: 'MachineDeployment', namespace: 'ns', name: 'md', nodePool: 'general' };

describe('controller metrics', () => {
  it('exports the solver worker\'s heap, read at scrape time', async () => {
    const registry = new Registry();
    const heap = { usedBytes: 1, committedBytes: 2, maxCommittedBytes: 3 };
    registerSolverWorkerMetrics(registry, heap);
    heap.committedBytes = 20;
    const text = await registry.metrics();
    expect(value(text, 'headroom_solver_worker_heap_bytes{kind="used"}')).to.equal(1);
    expect(value(text, 'headroom_solver_worker_heap_bytes{kind="committed"}')).to.equal(20);
    expect(value(text, 'headroom_solver_worker_heap_bytes{kind="max_committed"}')).to.equal(3);
  });

  it('counts that only grow are Counters with _total, copied from the cache and the actuator at scrape time', async () => {
    const text = await setup().registry.metrics();
    expect(text).to.include('# TYPE headroom_informer_relists_total counter');
    expect(value(text, 'headroom_informer_relists_total{resource="pods"}')).to.equal(4);
    expect(text).to.include('# TYPE headroom_informer_watch_list_fallbacks_total counter');
    expect(value(text, 'headroom_informer_watch_list_fallbacks_total{resource="nodes"}')).to.equal(1);
    expect(value(text, 'headroom_informer_watch_list_fallbacks_total{resource="pods"}')).to.equal(undefined);
    expect(text).to.include('# TYPE headroom_capi_writes_total counter');
    expect(value(text, 'headroom_capi_writes_total{op="scale"}')).to.equal(7);
    // A second scrape does not add the count again.
    const { registry } = setup();
    await registry.metrics();
    expect(value(await registry.metrics(), 'headroom_capi_writes_total{op="delete"}')).to.equal(2);
  });

  it('nodes, NodePools and pods of the cluster, summed (no node or pod names)', async () => {
    const text = await setup().registry.metrics();
    // example-cluster.yaml: two Nodes, 1930m + 3920m cpu, 29 + 58 pods allocatable; in no NodePool.
    expect(value(text, 'headroom_cluster_state_node_count')).to.equal(2);
    expect(value(text, 'headroom_nodes_allocatable{nodepool="",resource_type="cpu"}')).to.be.closeTo(5.85, 1e-9);
    expect(value(text, 'headroom_nodes_allocatable{nodepool="",resource_type="pods"}')).to.equal(87);
    const requested = value(text, 'headroom_nodes_total_pod_requests{nodepool="",resource_type="cpu"}')!;
    expect(requested).to.be.greaterThan(0);
    expect(value(text, 'headroom_cluster_utilization_percent{resource_type="cpu"}')).to.be.closeTo((100 * requested) / 5.85, 1e-6);
    expect(value(text, 'headroom_pods_state{phase="Succeeded"}')).to.equal(1);
    expect(value(text, 'headroom_pods_state{phase="Pending"}')).to.be.at.least(3);
    expect(text).not.to.match(/ip-10-0-1-5|web-6c9f8/);
  });

  it('the cluster-state gauges read the snapshot of the builder the loops share: a scrape after their build builds nothing', async () => {
    let cluster = objects;
    const cache = { objects: () => cluster, synced: () => true, staleness: () => [], informerStats: () => [] } as unknown as ClusterCache;
    const shared = new SnapshotBuilder();
    // buildSnapshot maps nodes to groups once per real build.
    let builds = 0;
    const mapNodes = shared.mapNodes.bind(shared);
    shared.mapNodes = (...args) => { builds++; return mapNodes(...args); };
    const registry = new Registry();
    registerControllerMetrics(registry, cache, undefined, shared);
    shared.build(cluster, { strict: false }); // a loop's cycle
    const before = value(await registry.metrics(), 'headroom_cluster_state_node_count');
    expect(builds).to.equal(1);
    // A change: the scrape builds once, and the next cycle on the same objects reuses it.
    cluster = { ...cluster, nodes: cluster.nodes.slice(1) };
    expect(value(await registry.metrics(), 'headroom_cluster_state_node_count')).to.equal(before! - 1);
    expect(builds).to.equal(2);
    shared.build(cluster, { strict: false });
    expect(builds).to.equal(2);
  });

  it('pods by phase follow every change: replaced in place, deleted, added, relisted in another order', async () => {
    let cluster = objects;
    const cache = { objects: () => cluster, synced: () => true, staleness: () => [], informerStats: () => [] } as unknown as ClusterCache;
    const registry = new Registry();
    registerControllerMetrics(registry, cache);
    const phases = async () => {
      const text = await registry.metrics();
      const got: Record<string, number> = {};
      for (const phase of ['Pending', 'Running', 'Succeeded', 'Failed', 'Unknown']) {
        const v = value(text, `headroom_pods_state{phase="${phase}"}`);
        if (v !== undefined) got[phase] = v;
      }
      const want: Record<string, number> = {};
      for (const p of cluster.pods) want[p.status?.phase ?? 'Unknown'] = (want[p.status?.phase ?? 'Unknown'] ?? 0) + 1;
      expect(got).to.deep.equal(want);
    };
    await phases();
    const pending = cluster.pods.findIndex((p) => p.status?.phase === 'Pending');
    cluster = { ...cluster, pods: cluster.pods.with(pending, { ...cluster.pods[pending]!, status: { phase: 'Running' } }) };
    await phases();
    cluster = { ...cluster, pods: [...cluster.pods.slice(2), { ...cluster.pods[0]!, metadata: { ...cluster.pods[0]!.metadata, name: 'new' }, status: { phase: 'Failed' } }] };
    await phases();
    cluster = { ...cluster, pods: structuredClone(cluster.pods).reverse() };
    await phases();
  });

  it('a NodePool\'s usage against its limits, and its nodes summed under its name', async () => {
    // The `small` group (1 node, 1930m allocatable) joins NodePool general, limited to 20 cpu and 5 nodes.
    const pooled = {
      ...objects,
      nodeGroups: objects.nodeGroups.map((g) => (g.metadata?.name === 'small' ? { ...g, metadata: { ...g.metadata, labels: { pool: 'p' } } } : g)),
      nodePools: [{
        apiVersion: 'headroom.dev/v1alpha1', kind: 'NodePool', metadata: { name: 'general' },
        spec: { nodeGroupSelector: { matchLabels: { pool: 'p' } }, limits: { cpu: '20', nodes: 5 } },
      }],
    };
    const text = await setup(pooled).registry.metrics();
    expect(value(text, 'headroom_nodepools_limit{nodepool="general",resource_type="cpu"}')).to.equal(20);
    expect(value(text, 'headroom_nodepools_limit{nodepool="general",resource_type="nodes"}')).to.equal(5);
    expect(value(text, 'headroom_nodepools_limit{nodepool="general",resource_type="memory"}')).to.equal(undefined);
    expect(value(text, 'headroom_nodepools_usage{nodepool="general",resource_type="nodes"}')).to.equal(1);
    expect(value(text, 'headroom_nodepools_usage{nodepool="general",resource_type="cpu"}')).to.be.closeTo(1.93, 1e-9);
    expect(value(text, 'headroom_nodes_allocatable{nodepool="general",resource_type="cpu"}')).to.be.closeTo(1.93, 1e-9);
    expect(value(text, 'headroom_nodes_allocatable{nodepool="",resource_type="cpu"}')).to.be.closeTo(3.92, 1e-9);
  });

  it('a cycle: nodes created by NodePool and cause, queue, unschedulable pods, solve time, provision failures', async () => {
    const { registry, metrics } = setup();
    const cycle: CycleReport = {
      startedAt: 0, pendingPods: 12, solveMs: 40, unschedulable: 2, durationMs: 50,
      scaleUps: [
        { kind: 'MachineDeployment', namespace: 'ns', name: 'md', from: 1, to: 4, nodePool: 'general', cause: 'provisioned', added: 3, result: { replicas: 4, written: true } },
        { kind: 'MachineDeployment', namespace: 'ns', name: 'md2', from: 0, to: 1, cause: 'predicted', added: 1, result: { replicas: 1, written: true } },
        { kind: 'MachineDeployment', namespace: 'ns', name: 'md3', from: 0, to: 1, error: 'boom' },
      ],
      provisionFailures: [{ machine: 'ns/m1', group: 'MachineDeployment/ns/md', kind: 'timeout' }],
    };
    metrics.observeCycle(cycle);
    const text = await registry.metrics();
    expect(value(text, 'headroom_nodes_created_total{nodepool="general",reason="provisioned"}')).to.equal(3);
    expect(value(text, 'headroom_nodes_created_total{nodepool="",reason="predicted"}')).to.equal(1);
    expect(value(text, 'headroom_nodes_terminated_total{nodepool="",reason="timeout"}')).to.equal(1);
    expect(value(text, 'headroom_scheduler_queue_depth')).to.equal(12);
    expect(value(text, 'headroom_scheduler_unschedulable_pods_count')).to.equal(2);
    expect(value(text, 'headroom_scheduler_scheduling_duration_seconds_sum{controller="provisioner"}')).to.be.closeTo(0.04, 1e-9);
    expect(value(text, 'headroom_provisioning_cycles_total{outcome="error"}')).to.equal(1);
  });

  it('a disruption pass: decisions, terminated nodes, eligible and blocked nodes by reason', async () => {
    const { registry, metrics } = setup();
    const removal = (node: string, extra: object) => ({ node, group, reason: 'Empty', since: 0, podUids: [], groupId: group.id, ...extra });
    const report = {
      startedAt: 0, durationMs: 1,
      removals: [removal('n1', { result: { replicas: 2, written: true } }), removal('n2', { result: { replicas: 3, written: false } }), removal('n3', { error: 'x' })],
      kept: [
        { node: 'n4', why: 'budget allows 1', reason: 'Empty', blockedBy: 'budget' },
        { node: 'n5', why: 'fits nowhere', reason: 'Expired', blockedBy: 'pods-cannot-move' },
        { node: 'n6', why: 'budget allows 1', reason: 'Expired', blockedBy: 'budget' },
      ],
    } as unknown as DisruptionReport;
    metrics.observeDisruption(report);
    let text = await registry.metrics();
    expect(value(text, 'headroom_voluntary_disruption_decisions_total{decision="delete",reason="empty"}')).to.equal(1);
    expect(value(text, 'headroom_voluntary_disruption_decisions_total{decision="declined",reason="empty"}')).to.equal(1);
    expect(value(text, 'headroom_voluntary_disruption_decisions_total{decision="failed",reason="empty"}')).to.equal(1);
    expect(value(text, 'headroom_nodes_terminated_total{nodepool="general",reason="empty"}')).to.equal(1);
    expect(value(text, 'headroom_voluntary_disruption_eligible_nodes{reason="empty"}')).to.equal(4);
    expect(value(text, 'headroom_voluntary_disruption_eligible_nodes{reason="expired"}')).to.equal(2);
    expect(value(text, 'headroom_voluntary_disruption_blocked_nodes{reason="expired",blocked_by="budget"}')).to.equal(1);
    expect(value(text, 'headroom_voluntary_disruption_blocked_nodes{reason="expired",blocked_by="pods-cannot-move"}')).to.equal(1);
    // Gauges are of the last pass: an empty pass clears them.
    metrics.observeDisruption({ startedAt: 1, durationMs: 1, removals: [], kept: [] });
    text = await registry.metrics();
    expect(value(text, 'headroom_voluntary_disruption_eligible_nodes{reason="empty"}')).to.equal(undefined);
    expect(value(text, 'headroom_voluntary_disruption_blocked_nodes{reason="empty",blocked_by="budget"}')).to.equal(undefined);
  });
});
