/**
 * Where the controller's memory goes at a large cluster's size, in one process (no
 * control plane): each structure the controller holds is made in turn, and the heap
 * (and memory outside it: the serialized bytes kept for solver transfers) grows by
 * what it costs, measured after full collections:
 *
 *   node --expose-gc --import tsx test/bench/memory-breakdown.ts [--nodes 5000 --pods 50000]
 *
 *   - informer cache: kwok-shaped Nodes and pods (test/bench/kwok-objects.ts) through
 *     the informer transform, as the cache stores them;
 *   - snapshot: a SnapshotBuilder's build (each pod's scheduling view, memoized per
 *     pod object, and the node and group lists);
 *   - another builder's snapshot: the controller keeps several builders (loops,
 *     metrics, NodePool status, prediction); they share the per-pod views;
 *   - solver transfer, main thread: what SnapshotEncoder keeps per object after one
 *     transfer (ADR 0033), and the transient parts of one transfer;
 *   - solver transfer, worker: the decoded copy a solver worker keeps (DecodedObjects),
 *     decoded here in this thread to weigh it: each solver thread holds one.
 *   - a relist that hands out new objects for unchanged pods (what the informer did
 *     before ADR 0121): the new objects, then the snapshot, encodings and worker copy
 *     they cause beside the old ones (the worker keeps its last 3 solves' objects).
 * Prints one JSON line (MB). Run it in the old and the new worktree to compare.
 */
import { parseArgs } from 'node:util';
import type { KubernetesObject, V1Node, V1Pod } from '@kubernetes/client-node';
import { emptyClusterObjects, type ClusterObjects } from '../../src/cluster/objects.js';
import { SnapshotBuilder } from '../../src/cluster/snapshot-builder.js';
import { stripObject } from '../../src/kube/informer-transform.js';
import { DecodedObjects, SnapshotEncoder, type SnapshotPart } from '../../src/packing/snapshot-transfer.js';
import { base, nodeJson, podJson } from './kwok-objects.js';

const { values } = parseArgs({ options: { nodes: { type: 'string', default: '5000' }, pods: { type: 'string', default: '50000' } } });
const NODES = Number(values.nodes);
const PODS = Number(values.pods);
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) {
  console.error('memory-breakdown: run with node --expose-gc');
  process.exit(2);
}
const transforms = await import('../../src/kube/informer-transform.js') as Record<string, unknown>;
const strip = (name: string) => (transforms[name] as (<T extends KubernetesObject>(o: T) => T) | undefined) ?? stripObject;
const stripPod = strip('stripPod');
const stripNode = strip('stripNode');

const mb = (b: number) => Math.round(b / 2 ** 17) / 8;
function settled(): { heap: number; outside: number } {
  for (let i = 0; i < 3; i++) gc!();
  const m = process.memoryUsage();
  return { heap: m.heapUsed, outside: m.external };
}
const report: Record<string, unknown> = { nodes: NODES, pods: PODS };
let last = settled();
/** What the heap and outside memory grew by since the last step, under `name`. */
function step(name: string): void {
  const now = settled();
  report[name] = { heapMb: mb(now.heap - last.heap), outsideMb: mb(now.outside - last.outside) };
  last = now;
}

const objects: ClusterObjects = {
  ...emptyClusterObjects(),
  nodes: Array.from({ length: NODES }, (_, i) => stripNode(JSON.parse(JSON.stringify({ apiVersion: 'v1', kind: 'Node', ...nodeJson(i, base) })) as V1Node)),
  pods: Array.from({ length: PODS }, (_, i) => stripPod(JSON.parse(JSON.stringify({ apiVersion: 'v1', kind: 'Pod', ...podJson(i, i % NODES) })) as V1Pod)),
};
step('informerCache');

const builder = new SnapshotBuilder();
const snapshot = builder.build(objects, { strict: false });
step('snapshot');

const other = new SnapshotBuilder();
const otherSnapshot = other.build(objects, { strict: false });
step('anotherBuildersSnapshot');

const encoder = new SnapshotEncoder();
let parts: SnapshotPart[] = [...encoder.parts(snapshot)];
const partBytes = parts.reduce((n, p) => n + (p.bytes?.byteLength ?? 0) + (p.head?.byteLength ?? 0), 0);
const decoded = new DecodedObjects();
let assembler = decoded.assembler() as ReturnType<DecodedObjects['assembler']> | undefined;
let assembled: unknown;
for (const p of parts) assembled = assembler!.add(p) ?? assembled;
parts = [];
step('encoderAndWorkerCopy');
// The worker's copy alone: drop it and see what goes.
const withWorkerCopy = last;
assembled = undefined;
assembler = undefined;
(decoded as unknown as { byId: Map<number, unknown> }).byId.clear();
const withoutWorkerCopy = settled();
report.workerCopy = { heapMb: mb(withWorkerCopy.heap - withoutWorkerCopy.heap), outsideMb: mb(withWorkerCopy.outside - withoutWorkerCopy.outside) };
report.oneTransferPartsMb = mb(partBytes);
// A relist that hands out new objects for unchanged pods (before ADR 0121) makes every
// per-object memo miss: new scheduling views, new encodings, a new decoded copy in the
// worker, all beside the old ones until they are dropped. What that costs:
const relisted: ClusterObjects = { ...objects, pods: objects.pods.map((p) => structuredClone(p)) };
step('relistedPodObjects');
const relistSnapshot = new SnapshotBuilder().build(relisted, { strict: false });
const relistAssembler = decoded.assembler();
let relistAssembled: unknown;
for (const p of encoder.parts(relistSnapshot)) relistAssembled = relistAssembler.add(p) ?? relistAssembled;
step('relistedObjectsSnapshotEncoderWorker');
const total = process.memoryUsage();
report.totalHeapMb = mb(total.heapUsed);
report.totalOutsideMb = mb(total.external);
// Keep everything alive up to here.
report.kept = [objects.pods.length, snapshot.nodes.length, otherSnapshot.nodes.length, encoder ? 1 : 0, assembled === undefined ? 0 : 1, relisted.pods.length, relistSnapshot.nodes.length, relistAssembled ? 1 : 0].join(',');
process.stdout.write(`${JSON.stringify(report)}\n`);
