/**
 * Benchmark of the capacity model: buildSnapshot on a synthetic cluster (2k nodes
 * with Machines in 10 MachineDeployments, 5 DaemonSets, N bound + M pending pods in
 * 100 ReplicaSets, a fifth with zone spread), and loadObjects on the same objects as
 * one JSON List. Reports wall and CPU medians of 7 runs.
 *
 *   node --import tsx test/bench/build-snapshot.ts [bound=10000] [pending=10000] [--json]
 */
import { buildSnapshot } from '../../src/cluster/build-snapshot.js';
import { loadObjects } from '../../src/cluster/load-objects.js';
import { emptyClusterObjects } from '../../src/cluster/objects.js';
import type { UnstructuredObject } from '../../src/api/unstructured-object.js';

const args = process.argv.slice(2).filter((a) => a !== '--json');
const json = process.argv.includes('--json');
const BOUND = Number(args[0] ?? 10000);
const PENDING = Number(args[1] ?? 10000);
const NODES = 2000;
const V = 'cluster.x-k8s.io/v1beta2';

const o = emptyClusterObjects();
for (let g = 0; g < 10; g++) {
  o.nodeGroups.push({
    apiVersion: V, kind: 'MachineDeployment',
    metadata: { name: `md${g}`, namespace: 'default', annotations: { 'cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size': '1000', 'capacity.cluster-autoscaler.kubernetes.io/cpu': '8', 'capacity.cluster-autoscaler.kubernetes.io/memory': '32Gi' } },
    spec: { clusterName: 'c', replicas: 200, template: { spec: { failureDomain: `z${g % 3}` } } },
  } as UnstructuredObject);
}
for (let i = 0; i < NODES; i++) {
  o.machines.push({
    apiVersion: V, kind: 'Machine', metadata: { name: `m${i}`, namespace: 'default', labels: { 'cluster.x-k8s.io/deployment-name': `md${i % 10}` } },
    spec: { clusterName: 'c', providerID: `aws:///z/i-${i}` }, status: { nodeRef: { name: `n${i}` } },
  } as UnstructuredObject);
  o.nodes.push({
    apiVersion: 'v1', kind: 'Node', metadata: { name: `n${i}`, labels: { 'kubernetes.io/hostname': `n${i}`, 'topology.kubernetes.io/zone': `z${i % 3}` } },
    spec: { providerID: `aws:///z/i-${i}` }, status: { allocatable: { cpu: '7910m', memory: '31Gi', pods: '110' }, conditions: [{ type: 'Ready', status: 'True' }] },
  });
}
for (let d = 0; d < 5; d++) {
  o.daemonSets.push({
    apiVersion: 'apps/v1', kind: 'DaemonSet', metadata: { name: `ds${d}`, namespace: 'kube-system' },
    spec: { selector: {}, template: { metadata: { labels: { app: `ds${d}` } }, spec: { tolerations: [{ operator: 'Exists' }], containers: [{ name: 'c', image: 'x', resources: { requests: { cpu: '50m', memory: '64Mi' } } }] } } },
  });
}
function pod(i: number, nodeName?: string) {
  return {
    apiVersion: 'v1', kind: 'Pod',
    metadata: { name: `p${i}`, namespace: `ns${i % 20}`, uid: `u${i}`, labels: { app: `a${i % 100}` }, ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: `rs${i % 100}`, uid: 'x', controller: true }] },
    spec: {
      ...(nodeName ? { nodeName } : {}),
      containers: [{ name: 'c', image: 'x', resources: { requests: { cpu: `${100 + (i % 100) * 14}m`, memory: `${100 + (i % 100) * 40}Mi` } } }],
      tolerations: [{ key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 }],
      ...(i % 5 === 1 ? { topologySpreadConstraints: [{ maxSkew: 1, topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'DoNotSchedule', labelSelector: { matchLabels: { app: `a${i % 100}` } } }] } : {}),
    },
    status: { phase: nodeName ? 'Running' : 'Pending' },
  };
}
for (let i = 0; i < BOUND; i++) o.pods.push(pod(i, `n${i % NODES}`));
for (let i = 0; i < PENDING; i++) o.pods.push(pod(BOUND + i));

function measure(fn: () => void): { wallMs: number; cpuMs: number } {
  const wall: number[] = [];
  const cpu: number[] = [];
  for (let r = 0; r < 7; r++) {
    const c = process.cpuUsage();
    const t = performance.now();
    fn();
    wall.push(performance.now() - t);
    const d = process.cpuUsage(c);
    cpu.push((d.user + d.system) / 1000);
  }
  const median = (xs: number[]) => xs.sort((a, b) => a - b)[3]!;
  return { wallMs: Math.round(median(wall)), cpuMs: Math.round(median(cpu)) };
}

const snapshot = buildSnapshot(o);
const build = measure(() => buildSnapshot(o));
const text = JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [...o.nodes, ...o.pods, ...o.machines, ...o.nodeGroups, ...o.daemonSets] });
const load = measure(() => loadObjects(text));
const result = {
  pods: BOUND + PENDING, boundPods: BOUND, pendingPods: snapshot.pendingPods.length, nodes: NODES,
  classes: new Set(snapshot.pendingPods.map((p) => p.equivalenceKey)).size,
  buildSnapshot: build, loadObjectsJson: { ...load, megabytes: Math.round(text.length / 1e5) / 10 },
};
if (json) console.log(JSON.stringify(result));
else {
  console.log(`buildSnapshot: ${result.pods} pods (${BOUND} bound), ${NODES} nodes, ${result.classes} pending classes: median ${build.wallMs} ms wall, ${build.cpuMs} ms CPU`);
  console.log(`loadObjects: ${result.loadObjectsJson.megabytes} MB JSON: median ${load.wallMs} ms wall, ${load.cpuMs} ms CPU`);
}
