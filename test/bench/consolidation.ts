/**
 * One consolidation benchmark measurement in a process of its own: a full
 * consolidation evaluation (candidates, multi-node binary search, then single-node
 * checks when multi-node took nothing) on a cluster of NODES existing nodes running
 * PODS pods, `runs` times after a warm-up; prints one JSON line with every run's ms.
 * Usage:
 *   node --import tsx test/bench/consolidation.ts --method headroom|karpenter --cluster loose|tight [--nodes 1000] [--pods 10000] [--runs 5]
 * - headroom: the Disruptor's defaults (cost-aware solver, Balanced score, multi-node deletes).
 * - karpenter: the simulator's Karpenter-like settings (FFD what-if, no score, least
 *   disruption first, multi-node replace, every single-node candidate).
 * - loose: nodes filled to 20-95% (there is something to consolidate); tight: 85-100%
 *   (nothing to take: every multi-node step and every single-node check runs, the worst case).
 */
import { parseArgs } from 'node:util';
import type { NodePoolDisruption } from '../../src/api/nodepool.js';
import type { ClusterSnapshot, NodeGroup, SnapshotNode } from '../../src/cluster/snapshot.js';
import { DEFAULT_DISRUPTION, DisruptionAllowance, type SettingsOf } from '../../src/disruption/allowance.js';
import { decideConsolidation, type ConsolidationOptions } from '../../src/disruption/consolidation.js';
import { DEFAULT_CONSOLIDATION } from '../../src/disruption/disruptor.js';
import { ffd } from '../../src/packing/ffd.js';
import { solve } from '../../src/packing/solve.js';
import { CPU, MEMORY, PODS } from '../../src/scheduling/resources.js';
import type { SchedulingPod } from '../../src/scheduling/scheduling-pod.js';
import { KARPENTER_CONSOLIDATION } from '../../src/sim/policies/reactive.js';
import { HOSTNAME, ZONE, rng } from './workload.js';

const { values } = parseArgs({ options: {
  method: { type: 'string', default: 'headroom' }, cluster: { type: 'string', default: 'loose' },
  nodes: { type: 'string', default: '1000' }, pods: { type: 'string', default: '10000' }, runs: { type: 'string', default: '5' },
} });
const GiB = 2 ** 30;
/** Pod cpu of Deployment d: CPUS[d % 5] millicores. */
const CPUS = [100, 250, 500, 1000, 2000];

/** Four node sizes (4-32 cpu, 4 GiB per cpu, price linear in size) in three zones. */
function groups(nodes: number): NodeGroup[] {
  return [4, 8, 16, 32].map((cpu) => ({
    id: `MachineDeployment/bench/size-${cpu}`, kind: 'MachineDeployment', namespace: 'bench', name: `size-${cpu}`, clusterName: 'bench',
    minSize: 0, maxSize: 100_000, replicas: nodes / 4,
    template: { allocatable: { [CPU]: cpu * 1000, [MEMORY]: cpu * 4 * GiB, [PODS]: 110 }, labels: { [ZONE]: 'zone-a' }, taints: [] },
    pricePerHour: 0.05 * cpu, capacityType: 'on-demand', daemonSetOverhead: {}, weight: 0, nodePool: 'bench',
  }));
}

/** `nodes` nodes, each filled to a random share in [lo, hi] of its cpu with pods of 40 Deployments, `pods` pods in all. */
export function consolidationSnapshot(nodeCount: number, podCount: number, lo: number, hi: number, seed = 1): ClusterSnapshot {
  const random = rng(seed);
  const gs = groups(nodeCount);
  const nodes: SnapshotNode[] = [];
  let totalCap = 0;
  for (let i = 0; i < nodeCount; i++) totalCap += gs[i % gs.length]!.template.allocatable[CPU]!;
  let capSoFar = 0;
  let made = 0;
  for (let i = 0; i < nodeCount; i++) {
    const g = gs[i % gs.length]!;
    const name = `node-${i}`;
    const capacity = g.template.allocatable[CPU]!;
    const target = capacity * (lo + (hi - lo) * random());
    // Pods in proportion to node size, so every node can reach its target share.
    capSoFar += capacity;
    const want = Math.round((podCount * capSoFar) / totalCap) - made;
    const pods: SchedulingPod[] = [];
    let used = 0;
    for (let k = 0; k < want; k++) {
      // A random Deployment whose pod size is at most twice the node's remaining even share (else the smallest),
      // so the node ends near its target; pods of one Deployment are identical, as in a real cluster.
      const share = (target - used) / Math.max(1, want - k);
      let d = Math.floor(random() * 40);
      for (let tries = 0; tries < 8 && CPUS[d % CPUS.length]! > 2 * share; tries++) d = Math.floor(random() * 40);
      const cpu = CPUS[d % CPUS.length]! > 2 * share ? CPUS[0]! : CPUS[d % CPUS.length]!;
      used += cpu;
      pods.push({
        key: `bench/p-${made + k}`, namespace: 'bench', name: `p-${made + k}`, uid: `u-${made + k}`, labels: { app: `d${d}` },
        equivalenceKey: `ReplicaSet/bench/d${d}#${cpu}`, owner: `ReplicaSet/bench/d${d}`, requests: { [CPU]: cpu, [MEMORY]: cpu * 2 * 2 ** 20, [PODS]: 1 },
        priority: 0, nodeSelector: {}, tolerations: [], topologySpreadConstraints: [], hostPorts: [], claims: [], nodeName: name,
      });
    }
    made += want;
    nodes.push({
      name, groupId: g.id, labels: { ...g.template.labels, [HOSTNAME]: name }, taints: [], allocatable: { ...g.template.allocatable },
      pods, inFlight: false, unschedulable: false, machine: { namespace: 'bench', name: `m-${name}`, leaving: false },
    });
  }
  return {
    groups: gs, nodes, pendingPods: [], volumes: { persistentVolumes: {}, claims: {}, storageClasses: {} }, namespaceLabels: { bench: {} },
    limits: {}, disruption: {}, templates: {},
  };
}

const nodes = Number(values.nodes);
const podCount = Number(values.pods);
const runs = Number(values.runs);
const [lo, hi] = values.cluster === 'tight' ? [0.85, 1] : [0.2, 0.95];
const karpenter = values.method === 'karpenter';
// headroom: the Disruptor's default (Balanced score, multi-node replace; ADR 0150).
const options: ConsolidationOptions = karpenter ? KARPENTER_CONSOLIDATION : DEFAULT_CONSOLIDATION;
const solver = karpenter ? ffd : solve;
const pool: NodePoolDisruption = { ...DEFAULT_DISRUPTION, consolidationPolicy: 'WhenEmptyOrUnderutilized', consolidateAfterMs: 0, budgets: [{ nodes: '10%' }] };
const settingsOf: SettingsOf = () => pool;

async function once(snapshot: ClusterSnapshot) {
  let solves = 0;
  const t0 = performance.now();
  const r = await decideConsolidation({
    snapshot, settingsOf, settledSince: new Map(snapshot.nodes.map((n) => [n.name, 0])), now: 1, allowance: new DisruptionAllowance(snapshot, settingsOf),
    solve: (s) => {
      solves++;
      return solver(s);
    },
    ...options,
  });
  const ms = performance.now() - t0;
  const removed = r.remove.length;
  const saved = r.remove.reduce((a, x) => a + x.group.pricePerHour, 0) - (r.remove[0]?.replacement?.pricePerHour ?? 0);
  return { ms, solves, removed, replaced: r.remove[0]?.replacement !== undefined, savedPerHour: Math.round(saved * 1000) / 1000 };
}

await once(consolidationSnapshot(100, 1000, lo, hi, 7)); // JIT warm-up on a small, different input
const snapshot = consolidationSnapshot(nodes, podCount, lo, hi);
const all = [];
for (let i = 0; i < runs; i++) all.push(await once(snapshot));
const ms = all.map((r) => r.ms).sort((a, b) => a - b);
process.stdout.write(`${JSON.stringify({ method: values.method, cluster: values.cluster, nodes, pods: podCount, runsMs: all.map((r) => Math.round(r.ms)), medianMs: ms[Math.floor(ms.length / 2)], ...all[0], ms: undefined })}\n`);
