/**
 * What the solver pool costs in memory at a large cluster's size, with the chart's
 * solver threads, in one process (no control plane):
 *
 *   node --import tsx test/bench/solver-memory.ts [--nodes 5000 --pods 50000 --pending 1000 --threads 2 --rounds 4 --idle-s 20 --limit-mb 1024]
 *
 * It builds a kwok-shaped snapshot (test/bench/kwok-objects.ts: bound pods on every
 * node, plus unbound pods as a burst's demand, and node groups to scale), then runs
 * `rounds` of what the controller's loops do at once during a burst: two scale-up
 * solves side by side (the provisioner, the disruptor's look at pending pods) and a
 * consolidation what-if (a node's pods moved to pending). RSS is sampled every 50 ms
 * throughout, then for `idle-s` seconds with no solves. With --limit-mb (default the
 * chart's 1 GiB) it runs itself inside a memory cgroup at that limit, as bench:scale
 * runs the controller (memory-cgroup.ts), and reports the cgroup's peak; 0 runs it
 * without one. Prints one JSON line (MB). Run it in the old and the new worktree.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import { emptyClusterObjects, type ClusterObjects } from '../../src/cluster/objects.js';
import type { ClusterSnapshot, NodeGroup } from '../../src/cluster/snapshot.js';
import { SnapshotBuilder } from '../../src/cluster/snapshot-builder.js';
import { withoutNodes } from '../../src/disruption/what-if.js';
import { stripNode, stripPod } from '../../src/kube/informer-transform.js';
import { SolverPool } from '../../src/packing/solver-pool.js';
import { openMemoryCgroup } from './memory-cgroup.js';
import { base, nodeJson, podJson } from './kwok-objects.js';

const { values } = parseArgs({
  options: {
    nodes: { type: 'string', default: '5000' }, pods: { type: 'string', default: '50000' }, pending: { type: 'string', default: '1000' },
    groups: { type: 'string', default: '200' }, threads: { type: 'string', default: '2' }, rounds: { type: 'string', default: '4' },
    'idle-s': { type: 'string', default: '20' }, 'limit-mb': { type: 'string', default: '1024' }, child: { type: 'boolean', default: false },
  },
});
const mb = (b: number) => Math.round(b / 2 ** 17) / 8;

if (!values.child && Number(values['limit-mb']) > 0) {
  // The parent: the same script inside a memory cgroup, as the pod has it.
  const cg = openMemoryCgroup('headroom-solver-memory', Number(values['limit-mb']) * 2 ** 20);
  const args = [...process.execArgv, fileURLToPath(import.meta.url), ...process.argv.slice(2), '--child'];
  const cmd = 'unavailable' in cg ? { binary: process.execPath, args } : cg.wrap(process.execPath, args);
  const r = spawnSync(cmd.binary, cmd.args, { stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' });
  const out = JSON.parse(r.stdout.trim().split('\n').pop() ?? '{}') as Record<string, unknown>;
  if ('unavailable' in cg) out.cgroup = cg.unavailable;
  else {
    const c = cg.read();
    out.cgroup = { limitMb: mb(c.limitBytes), peakMb: mb(c.peakBytes), limitHits: c.limitHits, oomKills: c.oomKills };
    cg.remove();
  }
  process.stdout.write(`${JSON.stringify(out)}\n`);
  process.exit(r.status ?? 1);
}

const NODES = Number(values.nodes);
const PODS = Number(values.pods);
const PENDING = Number(values.pending);
const GROUPS = Number(values.groups);

const objects: ClusterObjects = {
  ...emptyClusterObjects(),
  nodes: Array.from({ length: NODES }, (_, i) => stripNode(JSON.parse(JSON.stringify({ apiVersion: 'v1', kind: 'Node', ...nodeJson(i, base) })) as V1Node)),
  pods: [
    ...Array.from({ length: PODS }, (_, i) => stripPod(JSON.parse(JSON.stringify({ apiVersion: 'v1', kind: 'Pod', ...podJson(i, i % NODES) })) as V1Pod)),
    // The burst: unbound pods, as created.
    ...Array.from({ length: PENDING }, (_, i) => {
      const p = JSON.parse(JSON.stringify({ apiVersion: 'v1', kind: 'Pod', ...podJson(PODS + i, 0) })) as V1Pod;
      delete p.spec!.nodeName;
      p.metadata!.labels = { app: `burst-${i % 20}` };
      p.spec!.containers[0]!.resources = { requests: { cpu: '2', memory: '4Gi' } };
      p.status = { phase: 'Pending' };
      return stripPod(p);
    }),
  ],
};
const built = new SnapshotBuilder().build(objects, { strict: false });
const groups: NodeGroup[] = Array.from({ length: GROUPS }, (_, i) => ({
  id: `MachineDeployment/default/md-${i}`, kind: 'MachineDeployment', namespace: 'default', name: `md-${i}`, clusterName: 'bench',
  minSize: 0, maxSize: 1000, replicas: 0, pricePerHour: 1 + (i % 7) * 0.1, capacityType: 'on-demand', weight: 0, daemonSetOverhead: {},
  template: {
    allocatable: { cpu: 8000 * (1 + (i % 4)), memory: 32 * 2 ** 30 * (1 + (i % 4)), pods: 110 },
    labels: { 'topology.kubernetes.io/zone': `zone-${i % 3}`, 'node.kubernetes.io/instance-type': `t${i}` }, taints: [],
  },
}));
const snapshot: ClusterSnapshot = { ...built, groups };

const samples: number[] = [];
let peak = 0;
const sample = () => {
  const r = process.memoryUsage.rss();
  samples.push(r);
  if (r > peak) peak = r;
};
const timer = setInterval(sample, 50);
sample();
const synced = process.memoryUsage.rss();
const syncedMem = process.memoryUsage();

const pool = new SolverPool().start(Number(values.threads));
const t0 = performance.now();
const planned: number[] = [];
const names = snapshot.nodes.map((n) => n.name);
for (let round = 0; round < Number(values.rounds); round++) {
  const plans = await Promise.all([pool.solve(snapshot), pool.solve(snapshot)]);
  for (const p of plans) planned.push(p.placements.length);
  const what = withoutNodes(snapshot, new Set([names[(round * 997) % names.length]!]));
  planned.push((await pool.solve(what.snapshot)).placements.length);
}
const solvesS = (performance.now() - t0) / 1000;
const burstPeak = peak;
const afterSolves = process.memoryUsage.rss();
await new Promise((r) => setTimeout(r, Number(values['idle-s']) * 1000));
const afterIdle = process.memoryUsage.rss();
clearInterval(timer);
const heap = process.memoryUsage();
process.stdout.write(`${JSON.stringify({
  nodes: NODES, pods: PODS, pending: PENDING, threads: Number(values.threads), rounds: Number(values.rounds),
  solvesS: Math.round(solvesS * 10) / 10, placements: [...new Set(planned)],
  rssMb: { synced: mb(synced), solvesPeak: mb(burstPeak), afterSolves: mb(afterSolves), afterIdle: mb(afterIdle) },
  mainHeapMb: {
    synced: { used: mb(syncedMem.heapUsed), committed: mb(syncedMem.heapTotal), outside: mb(syncedMem.external) },
    afterIdle: { used: mb(heap.heapUsed), committed: mb(heap.heapTotal), outside: mb(heap.external) },
  },
  workerHeapMb: { lastUsed: mb(pool.workerHeap.usedBytes), lastCommitted: mb(pool.workerHeap.committedBytes), lastYoung: mb(pool.workerHeap.youngCommittedBytes ?? 0), maxCommitted: mb(pool.workerHeap.maxCommittedBytes) },
})}\n`);
await pool.destroy();
