/**
 * Main-thread cost of the controller's own whole-cluster passes under a large
 * cluster's churn, in one process (no control plane):
 *
 *   node --expose-gc --import tsx test/bench/controller-churn.ts [--nodes 5000 --pods 50000 --rounds 5]
 *
 * On kwok-shaped objects (test/bench/kwok-objects.ts, through the informer transform
 * when the code has one) it times:
 *   - snapshotAfterHeartbeats: a SnapshotBuilder build after one second of Node
 *     heartbeats (nodes/30 Nodes replaced by copies with new condition times), as the
 *     provisioner, disruptor and metrics build every cycle;
 *   - podLatencyMsPerS: main-thread time spent in the PodLatencyTracker (its change
 *     callback and its whole passes) per second of churn: nodes/30 heartbeats and 50
 *     new pods a second.
 * Prints one JSON line of medians and every round. Run it in the old and the new
 * worktree, alternating, and compare.
 */
import { parseArgs } from 'node:util';
import type { KubernetesObject, V1Node, V1Pod } from '@kubernetes/client-node';
import { emptyClusterObjects, type ClusterObjects } from '../../src/cluster/objects.js';
import { SnapshotBuilder } from '../../src/cluster/snapshot-builder.js';
import type { ClusterStateSource, StateChange } from '../../src/cluster/state.js';
import { PodLatencyTracker } from '../../src/controller/pod-latency.js';
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
builder.build(objects, { strict: false });
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

process.stdout.write(`${JSON.stringify({
  nodes: NODES, pods: PODS, transform: transforms !== undefined, load: (await import('node:os')).loadavg()[0],
  snapshotAfterHeartbeatsMs: { median: median(snapshotMs), rounds: snapshotMs },
  podLatencyMsPerS: { median: median(trackerMs), rounds: trackerMs },
})}\n`);
process.exit(0);
