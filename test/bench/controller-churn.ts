/**
 * Main-thread cost of the controller's own whole-cluster passes under a large
 * cluster's churn, in one process (no control plane):
 *
 *   node --expose-gc --import tsx test/bench/controller-churn.ts [--nodes 5000 --pods 50000 --rounds 5]
 *
 * On kwok-shaped objects (test/bench/kwok-objects.ts, through the informer transform
 * when the code has one) it times:
 *   - firstBuildMs, relistBuildMs: a SnapshotBuilder's first build, then its build
 *     after every object was replaced by a copy (a relist), once each;
 *   - snapshotAfterHeartbeats: a SnapshotBuilder build after one second of Node
 *     heartbeats (nodes/30 Nodes replaced by copies with new condition times), as the
 *     provisioner, disruptor and metrics build every cycle;
 *   - podLatencyMsPerS: main-thread time spent in the PodLatencyTracker (its change
 *     callback and its whole passes) per second of churn: nodes/30 heartbeats and 50
 *     new pods a second.
 *   - disruptorTrackersMsPerS: main-thread time spent by a started Disruptor between
 *     its passes (its change callback and its empty/settled observations) per second of
 *     the same churn plus 50 pods deleted a second;
 *   - buildAfterPodChurnMs: a SnapshotBuilder build after one second of that churn
 *     (what the provisioner's and the disruptor's cycles cost while pods change);
 *   - scrapeAfterPodChurnMs: a Prometheus scrape of the cluster-state gauges right
 *     after that build (given the builder that built it: code that shares it builds
 *     nothing; older code ignores the argument and builds its own);
 *   - standalonePoolsMs: withStandalonePools on the whole snapshot with 10 NodePools,
 *     4 of them with a machineTemplate (each disruption and provisioning pass).
 * Prints one JSON line of medians and every round. Run it in the old and the new
 * worktree, alternating, and compare.
 */
import { parseArgs } from 'node:util';
import type { KubernetesObject, V1Node, V1Pod } from '@kubernetes/client-node';
import { emptyClusterObjects, type ClusterObjects } from '../../src/cluster/objects.js';
import { SnapshotBuilder } from '../../src/cluster/snapshot-builder.js';
import type { ClusterStateSource, StateChange } from '../../src/cluster/state.js';
import { PodLatencyTracker } from '../../src/controller/pod-latency.js';
import { Disruptor, type DisruptorDeps } from '../../src/disruption/disruptor.js';
import { withStandalonePools } from '../../src/provisioning/standalone.js';
import { registerClusterStateMetrics } from '../../src/controller/cluster-state-metrics.js';
import type { ClusterCache } from '../../src/kube/cluster-cache.js';
import { Registry } from 'prom-client';
import { base, nodeJson, podJson } from './kwok-objects.js';

const { values } = parseArgs({ options: { nodes: { type: 'string', default: '5000' }, pods: { type: 'string', default: '50000' }, rounds: { type: 'string', default: '5' } } });
const NODES = Number(values.nodes);
const PODS = Number(values.pods);
const ROUNDS = Number(values.rounds);
const HEARTBEATS_PER_S = Math.round(NODES / 30);
const POD_CHANGES_PER_S = 50;

const transforms = await import('../../src/kube/informer-transform.js').catch(() => undefined) as
  | { stripPod: <T extends KubernetesObject>(o: T) => T; stripNode: <T extends KubernetesObject>(o: T) => T } | undefined;
const asPod = (o: Record<string, unknown>) => {
  const p = JSON.parse(JSON.stringify({ apiVersion: 'v1', kind: 'Pod', ...o })) as V1Pod;
  if (transforms) return transforms.stripPod(p);
  delete p.metadata!.managedFields;
  return p;
};
const asNode = (o: Record<string, unknown>) => {
  const n = JSON.parse(JSON.stringify({ apiVersion: 'v1', kind: 'Node', ...o })) as V1Node;
  if (transforms) return transforms.stripNode(n);
  delete n.metadata!.managedFields;
  return n;
};
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const round1 = (x: number) => Math.round(x * 10) / 10;

let objects: ClusterObjects = { ...emptyClusterObjects(), nodes: Array.from({ length: NODES }, (_, i) => asNode(nodeJson(i, base))), pods: Array.from({ length: PODS }, (_, i) => asPod(podJson(i, i % NODES))) };
let at = base;
let hb = 0;
let nextPod = PODS;

/** One second of heartbeats: new Node objects, same content but condition times. */
function heartbeats(emit?: (kind: keyof ClusterObjects, c: StateChange) => void): void {
  at += 1000;
  const nodes = [...objects.nodes];
  for (let k = 0; k < HEARTBEATS_PER_S; k++) {
    const i = hb++ % NODES;
    nodes[i] = asNode(nodeJson(i, at));
    emit?.('nodes', { type: 'MODIFIED', object: nodes[i] });
  }
  objects = { ...objects, nodes };
}

// 1. SnapshotBuilder after a second of heartbeats.
const builder = new SnapshotBuilder();
let firstAt = performance.now();
builder.build(objects, { strict: false });
const firstBuildMs = round1(performance.now() - firstAt);
// A relist: every object new (same content), as after a 410; the per-object memos cannot help.
objects = { ...objects, nodes: objects.nodes.map((n) => structuredClone(n)), pods: objects.pods.map((p) => structuredClone(p)) };
firstAt = performance.now();
builder.build(objects, { strict: false });
const relistBuildMs = round1(performance.now() - firstAt);
const snapshotMs: number[] = [];
for (let r = 0; r < ROUNDS; r++) {
  heartbeats();
  const t = performance.now();
  builder.build(objects, { strict: false });
  snapshotMs.push(round1(performance.now() - t));
}

// 2. PodLatencyTracker CPU per second of churn.
class Source implements ClusterStateSource {
  listeners: Array<(kind: keyof ClusterObjects, change?: StateChange) => void> = [];
  objects(): ClusterObjects {
    return objects;
  }
  synced(): boolean {
    return true;
  }
  onChange(fn: (kind: keyof ClusterObjects, change?: StateChange) => void): () => void {
    this.listeners.push(fn);
    return () => (this.listeners = this.listeners.filter((l) => l !== fn));
  }
  /** Time spent in the listeners (the tracker's change callback). */
  spentMs = 0;
  emit = (kind: keyof ClusterObjects, change: StateChange) => {
    const t = performance.now();
    for (const l of this.listeners) l(kind, change);
    this.spentMs += performance.now() - t;
  };
}

/** Main-thread ms per second the tracker spends over `seconds` of churn delivered in 100 ms ticks. */
async function trackerMsPerS(seconds: number): Promise<number> {
  const source = new Source();
  const tracker = new PodLatencyTracker(source, () => {}, 500, () => {});
  let scanMs = 0;
  const scan = tracker.scan.bind(tracker);
  tracker.scan = () => {
    const t = performance.now();
    scan();
    scanMs += performance.now() - t;
  };
  tracker.start();
  source.emit('pods', { type: 'RELIST' }); // the start's whole pass
  await new Promise((r) => setTimeout(r, 700));
  source.spentMs = 0;
  scanMs = 0;
  for (let s = 0; s < seconds * 10; s++) {
    if (s % 10 === 0) heartbeats(source.emit);
    const pods = [...objects.pods];
    for (let k = 0; k < POD_CHANGES_PER_S / 10; k++) {
      const p = asPod(podJson(nextPod, nextPod % NODES));
      nextPod++;
      pods.push(p);
      objects = { ...objects, pods };
      source.emit('pods', { type: 'ADDED', object: p });
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  await new Promise((r) => setTimeout(r, 600)); // a pass the last changes scheduled
  tracker.stop();
  return (source.spentMs + scanMs) / seconds;
}

const trackerMs: number[] = [];
for (let r = 0; r < ROUNDS; r++) trackerMs.push(round1(await trackerMsPerS(3)));

/** Pods created and deleted in one tick of churn (emitting their changes). */
let oldest = 0;
function podChurn(emit: (kind: keyof ClusterObjects, c: StateChange) => void, adds: number, deletes: number): void {
  let pods = [...objects.pods];
  for (let k = 0; k < adds; k++) {
    const p = asPod(podJson(nextPod, nextPod % NODES));
    nextPod++;
    pods.push(p);
    objects = { ...objects, pods };
    emit('pods', { type: 'ADDED', object: p });
  }
  for (let k = 0; k < deletes; k++) {
    const gone = pods[oldest % pods.length]!;
    pods = pods.filter((p) => p !== gone);
    oldest++;
    objects = { ...objects, pods };
    emit('pods', { type: 'DELETED', object: gone });
  }
}

// 3. A started Disruptor's work between passes, per second of churn.
async function disruptorMsPerS(seconds: number): Promise<number> {
  const source = new Source();
  const clock = { now: () => Date.now(), setTimer: (ms: number, fn: () => void) => { const t = setTimeout(fn, ms); return () => clearTimeout(t); } };
  const unused = new Proxy({}, { get: () => () => { throw new Error('not in this benchmark'); } });
  const disruptor = new Disruptor({ state: source, clock, actuator: unused, nodes: unused, solve: unused } as unknown as DisruptorDeps, { intervalMs: 3_600_000 });
  let observeMs = 0;
  const observe = disruptor.observe.bind(disruptor);
  disruptor.observe = () => {
    const t = performance.now();
    observe();
    observeMs += performance.now() - t;
  };
  disruptor.start(); // the first, whole observation
  source.spentMs = 0;
  observeMs = 0;
  for (let s = 0; s < seconds * 10; s++) {
    if (s % 10 === 0) heartbeats(source.emit);
    podChurn(source.emit, POD_CHANGES_PER_S / 10, POD_CHANGES_PER_S / 10);
    await new Promise((r) => setTimeout(r, 100));
  }
  await new Promise((r) => setTimeout(r, 1100)); // the observation the last changes scheduled
  await disruptor.stop();
  return (source.spentMs + observeMs) / seconds;
}
const disruptorMs: number[] = [];
for (let r = 0; r < ROUNDS; r++) disruptorMs.push(round1(await disruptorMsPerS(3)));

// 4. A build after a second of pod churn, and a metrics scrape after it.
const shared = new SnapshotBuilder();
const registry = new Registry();
const cache = { objects: () => objects, synced: () => true } as unknown as ClusterCache;
// The shared builder as a third argument (ignored by code whose metrics build their own).
(registerClusterStateMetrics as (r: Registry, c: ClusterCache, s?: SnapshotBuilder) => void)(registry, cache, shared);
shared.build(objects, { strict: false });
await registry.metrics();
const buildMs: number[] = [];
const scrapeMs: number[] = [];
const noEmit = () => {};
for (let r = 0; r < ROUNDS; r++) {
  heartbeats();
  podChurn(noEmit, POD_CHANGES_PER_S, POD_CHANGES_PER_S);
  let t = performance.now();
  shared.build(objects, { strict: false });
  buildMs.push(round1(performance.now() - t));
  t = performance.now();
  await registry.metrics();
  scrapeMs.push(round1(performance.now() - t));
}

// 5. withStandalonePools with 10 NodePools, 4 with a machineTemplate.
const nodePool = (i: number) => ({
  apiVersion: 'headroom.dev/v1alpha1', kind: 'NodePool', metadata: { name: `pool-${i}`, resourceVersion: String(i + 1) },
  spec: {
    weight: i, limits: { cpu: '100000', nodes: 2000 },
    disruption: { consolidationPolicy: 'WhenEmptyOrUnderutilized', consolidateAfter: '30s', budgets: [{ nodes: '10%' }] },
    template: { metadata: { labels: { pool: `pool-${i}` } } },
    ...(i % 3 === 0 ? { machineTemplate: {
      namespace: 'capi', clusterName: 'c1',
      bootstrapConfigTemplateRef: { apiVersion: 'b.x/v1', kind: 'BT', name: 'b' },
      infrastructureTemplateRef: { apiVersion: 'i.x/v1', kind: 'IT', name: 'i' },
      capacity: { cpu: '8', memory: '32Gi' }, labels: { role: `pool-${i}` },
    } } : {}),
  },
});
objects = { ...objects, nodePools: Array.from({ length: 10 }, (_, i) => nodePool(i)) };
const poolSnapshot = new SnapshotBuilder().build(objects, { strict: false });
withStandalonePools(poolSnapshot, objects);
const standaloneMs: number[] = [];
for (let r = 0; r < ROUNDS; r++) {
  const t = performance.now();
  for (let k = 0; k < 10; k++) withStandalonePools(poolSnapshot, objects);
  standaloneMs.push(round1((performance.now() - t) / 10));
}

process.stdout.write(`${JSON.stringify({
  nodes: NODES, pods: PODS, transform: transforms !== undefined, load: (await import('node:os')).loadavg()[0],
  firstBuildMs, relistBuildMs,
  snapshotAfterHeartbeatsMs: { median: median(snapshotMs), rounds: snapshotMs },
  podLatencyMsPerS: { median: median(trackerMs), rounds: trackerMs },
  disruptorTrackersMsPerS: { median: median(disruptorMs), rounds: disruptorMs },
  buildAfterPodChurnMs: { median: median(buildMs), rounds: buildMs },
  scrapeAfterPodChurnMs: { median: median(scrapeMs), rounds: scrapeMs },
  standalonePoolsMs: { median: median(standaloneMs), rounds: standaloneMs },
})}\n`);
process.exit(0);
