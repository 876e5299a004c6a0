/**
 * `npm run bench:fleet [-- --clusters 0,1,2,4 --nodes 20 ...]` (`--help`): issue 26's fleet
 * benchmark, not part of `npm test`; docs/scale.md has the figures.
 *
 * One management control plane (etcd, kube-apiserver; CAPI CRDs and Headroom's) and
 * max(N) workload control planes, each its own etcd, kube-apiserver and kwok, holding
 * `--nodes` kwok Nodes with `--pods-per-node` bound pods each (outside any node group:
 * the steady load every cluster's controller watches). In the management cluster, per
 * workload cluster `w<i>`: a v1beta2 Cluster labelled with its index, its
 * `w<i>-kubeconfig` Secret (key `value`, as CAPI writes it), a MachineDeployment at 0
 * replicas whose nodes carry the label the burst pods select, and a NodePool for it.
 *
 * Then for every N of `--clusters` (ascending, then descending in the next round), a
 * fresh `headroom controller --fleet` process (from source, the args the chart renders
 * for mode=fleet, its --fleet-selector picking the first N Clusters) and:
 *   1. the time from its start until it owns all N clusters with their controllers running;
 *   2. `--settle` seconds later, over `--window` seconds: RSS (VmRSS every second,
 *      median), the V8 heap in use (its /metrics every 2 s, median), CPU (user + system
 *      over the window, millicores), and at its end the heap left after two full
 *      collections (the process runs with --inspect; inspector-heap.ts);
 *   3. a burst under load: `--burst` pending pods (3 CPU, one 4-CPU node each) created in
 *      every owned cluster at the same time; per cluster, the time from its first pod
 *      to its MachineDeployment's first replicas write and to replicas = burst (a watch
 *      on the management cluster); CPU and the RSS peak meanwhile;
 * then the replica is stopped (SIGTERM), the burst pods deleted, the groups set back to
 * 0 and the prediction state removed, so every run starts alike.
 * Per-cluster costs are the slope of a least-squares line through every run's figure
 * against N (fleet-summary.ts). Prints tables, or with --json one JSON object.
 * Everything it starts, it stops.
 */
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { Watch, type KubeConfig, type V1Node, type V1Pod } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { KubeClient } from '../../src/kube/kube-client.js';
import { type ControlPlane, startControlPlane } from '../harness/control-plane.js';
import { freePort } from '../harness/ports.js';
import { ManagedProcess, makeTempDir, removeTempDir } from '../harness/process.js';
import { CHART_DIR, helm, KUBE_VERSION } from '../integration/helm-chart.js';
import { machineDeployment } from '../integration/controller-objects.js';
import { createMany } from './create-many.js';
import { fleetRun, type FleetRun, type FleetRunObservations, parseFleetBenchArgs, runOrder, summarizeFleet } from './fleet-summary.js';
import { liveHeapMb } from './inspector-heap.js';
import { cpuSeconds, rssMb } from './proc-stats.js';

const parsed = parseFleetBenchArgs(process.argv.slice(2));
if ('help' in parsed) {
  process.stdout.write(parsed.help);
  process.exit(0);
}
if ('error' in parsed) {
  console.error(parsed.error);
  process.exit(2);
}
const O = parsed.options;
const MAX_CLUSTERS = O.clusters.at(-1)!;
const FLEET_NS = 'fleet';
const SYSTEM_NS = 'headroom-system';
const LOAD_NS = 'load';
const BURST_NS = 'burst';
const POOL_LABEL = 'bench.headroom.dev/pool';
const INDEX_LABEL = 'bench.headroom.dev/index';
const CAPI = '/apis/cluster.x-k8s.io/v1beta2';
const NODE_ALLOCATABLE = { cpu: '16', memory: '64Gi', pods: '110' };
/** How long a burst may take before its run is reported as missed. */
const BURST_TIMEOUT_MS = 90_000;
const t0 = Date.now();
const progress = (m: string) => console.error(`[fleet ${((Date.now() - t0) / 1000).toFixed(0)}s] ${m}`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The controller's args as the chart renders them in mode=fleet (helm template), for this namespace and metrics port. */
async function chartArgs(metricsPort: number, selector: string): Promise<string[]> {
  const r = await helm(['template', 'bench', CHART_DIR, '--namespace', SYSTEM_NS, '--kube-version', KUBE_VERSION,
    '--set', 'mode=fleet', '--set', `fleet.namespace=${FLEET_NS}`, '--set-string', `fleet.selector=${selector.replace(/,/g, '\\,')}`, '--show-only', 'templates/deployment.yaml']);
  if (r.code !== 0) throw new Error(`helm template: ${r.stderr.trim()}`);
  const dep = parseAllDocuments(r.stdout).map((d) => d.toJS() as { kind?: string; spec?: { template: { spec: { containers: Array<{ args: string[] }> } } } }).find((d) => d?.kind === 'Deployment');
  const args = dep?.spec?.template.spec.containers[0]?.args;
  if (!args) throw new Error('helm template: no Deployment args in mode=fleet');
  return args.map((a) => a.replace('$(POD_NAMESPACE)', SYSTEM_NS).replace(/^--metrics-address=.*/, `--metrics-address=127.0.0.1:${metricsPort}`));
}

const metric = (text: string, series: string): number => {
  const m = new RegExp(`^${series.replace(/[{}"]/g, '\\$&')} (\\S+)`, 'm').exec(text);
  return m ? Number(m[1]) : NaN;
};
const scrape = (port: number): Promise<string> => fetch(`http://127.0.0.1:${port}/metrics`).then((r) => r.text(), () => '');

async function waitUntilRunning(client: KubeClient, namespace: string, count: number): Promise<void> {
  const deadline = Date.now() + 300_000;
  for (;;) {
    const pods = (await client.get<{ items: V1Pod[] }>(`/api/v1/namespaces/${namespace}/pods`)).items;
    if (pods.length === count && pods.every((p) => p.status?.phase === 'Running')) return;
    if (Date.now() > deadline) throw new Error(`bench:fleet: ${namespace} pods not all Running after 300 s`);
    await sleep(1000);
  }
}

/** A workload cluster with its steady load: M kwok Nodes, P bound pods each. */
async function fillWorkload(cp: ControlPlane): Promise<void> {
  const client = new KubeClient(cp.kubeConfig());
  try {
    for (const ns of [LOAD_NS, BURST_NS]) await client.request('POST', '/api/v1/namespaces', { body: { metadata: { name: ns } } });
    const nodes: V1Node[] = Array.from({ length: O.nodes }, (_, i) => ({
      metadata: { name: `load-${i}`, labels: { 'kubernetes.io/hostname': `load-${i}`, type: 'kwok', 'topology.kubernetes.io/zone': `zone-${i % 3}` }, annotations: { 'kwok.x-k8s.io/node': 'fake' } },
      status: { allocatable: NODE_ALLOCATABLE, capacity: NODE_ALLOCATABLE },
    }));
    await createMany(nodes, (body) => client.request('POST', '/api/v1/nodes', { body }), { concurrency: 16 });
    const pods = Array.from({ length: O.nodes * O.podsPerNode }, (_, i): V1Pod => ({
      metadata: { name: `load-${i}`, namespace: LOAD_NS, labels: { app: `app-${i % 50}` } },
      spec: { nodeName: `load-${i % O.nodes}`, containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.10', resources: { requests: { cpu: '100m', memory: '128Mi' } } }] },
    }));
    await createMany(pods, (body) => client.request('POST', `/api/v1/namespaces/${LOAD_NS}/pods`, { body }), { concurrency: 16 });
    await waitUntilRunning(client, LOAD_NS, pods.length);
  } finally {
    client.close();
  }
}

/** The management cluster's objects for workload cluster `w<i>`. */
async function registerCluster(mgmt: KubeClient, i: number, cp: ControlPlane): Promise<void> {
  const name = `w${i}`;
  await mgmt.request('POST', `/api/v1/namespaces/${FLEET_NS}/secrets`, {
    body: { apiVersion: 'v1', kind: 'Secret', metadata: { name: `${name}-kubeconfig`, namespace: FLEET_NS }, data: { value: Buffer.from(readFileSync(cp.kubeconfigPath)).toString('base64') } },
  });
  await mgmt.request('POST', `${CAPI}/namespaces/${FLEET_NS}/machinedeployments`, {
    body: machineDeployment({
      namespace: FLEET_NS, name: `${name}-md`, clusterName: name, replicas: 0, min: 0, max: 100, cpu: '4', memory: '16Gi',
      annotations: { 'capacity.cluster-autoscaler.kubernetes.io/labels': `${POOL_LABEL}=burst` },
    }),
  });
  await mgmt.request('POST', '/apis/headroom.dev/v1alpha1/nodepools', {
    body: {
      apiVersion: 'headroom.dev/v1alpha1', kind: 'NodePool', metadata: { name },
      spec: { clusterRef: { namespace: FLEET_NS, name }, nodeGroupSelector: { matchLabels: { 'cluster.x-k8s.io/cluster-name': name } } },
    },
  });
  await mgmt.request('POST', `${CAPI}/namespaces/${FLEET_NS}/clusters`, {
    body: { apiVersion: 'cluster.x-k8s.io/v1beta2', kind: 'Cluster', metadata: { name, namespace: FLEET_NS, labels: { [INDEX_LABEL]: String(i) } }, spec: { paused: false } },
  });
}

async function watch<T>(kc: KubeConfig, path: string, on: (obj: T) => void): Promise<() => void> {
  let stopped = false;
  let current: AbortController | undefined;
  const start = async (): Promise<void> => {
    if (stopped) return;
    current = await new Watch(kc).watch(path, {}, (_type: string, obj: T) => on(obj), () => {
      if (!stopped) setTimeout(() => void start().catch(() => undefined), 200);
    });
  };
  await start();
  return () => {
    stopped = true;
    current?.abort();
  };
}

const burstPod = (i: number): V1Pod => ({
  metadata: { name: `burst-${i}`, namespace: BURST_NS, labels: { app: 'burst' } },
  spec: { nodeSelector: { [POOL_LABEL]: 'burst' }, containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.10', resources: { requests: { cpu: '3', memory: '1Gi' } } }] },
});

async function oneRun(dir: string, mgmtCp: ControlPlane, mgmt: KubeClient, workloads: KubeClient[], clusters: number, round: number): Promise<FleetRun> {
  const selector = clusters === 0 ? `${INDEX_LABEL}=none` : `${INDEX_LABEL} in (${Array.from({ length: clusters }, (_, i) => i).join(',')})`;
  const port = await freePort();
  const inspectPort = await freePort();
  const args = await chartArgs(port, selector);
  const proc = ManagedProcess.start('headroom-fleet', process.execPath, [
    `--inspect=127.0.0.1:${inspectPort}`,
    '--import', 'tsx', join(process.cwd(), 'test', 'integration', 'controller-cli-entry.ts'),
    ...args, '--kubeconfig', mgmtCp.kubeconfigPath,
  ], { logFile: join(dir, `fleet-${clusters}-r${round}.log`) });
  try {
    const started = Date.now();
    // 1. Every cluster owned, none held (owned means the runner's first sync is done: its controller runs).
    for (;;) {
      if (!proc.running) throw new Error(`bench:fleet: the replica exited:\n${proc.logTail(20)}`);
      const text = await scrape(port);
      if (metric(text, 'headroom_fleet_clusters{state="owned"}') === clusters && metric(text, 'headroom_fleet_clusters{state="held"}') === 0
        && metric(text, 'headroom_fleet_clusters{state="selected"}') === clusters) break;
      if (Date.now() - started > 180_000) throw new Error(`bench:fleet: ${clusters} clusters not owned after 180 s:\n${proc.logTail(20)}`);
      await sleep(250);
    }
    const ownedAfterMs = Date.now() - started;
    progress(`N=${clusters} round ${round}: all owned after ${(ownedAfterMs / 1000).toFixed(1)} s`);
    await sleep(O.settleS * 1000);

    // 2. The quiet window.
    const rss: number[] = [];
    const heap: number[] = [];
    const w0 = Date.now();
    const cpu0 = cpuSeconds(proc.pid);
    const rssTimer = setInterval(() => rss.push(rssMb(proc.pid)), 1000);
    const heapTimer = setInterval(() => void scrape(port).then((t) => heap.push(metric(t, 'headroom_nodejs_heap_size_used_bytes') / 2 ** 20)), 2000);
    await sleep(O.windowS * 1000);
    clearInterval(rssTimer);
    clearInterval(heapTimer);
    const cpu1 = cpuSeconds(proc.pid);
    const windowMs = Date.now() - w0;
    const heapLiveMb = await liveHeapMb(inspectPort);

    // 3. The burst, in every owned cluster at once.
    const firstWrite = new Map<string, number>();
    const allWritten = new Map<string, number>();
    const stopWatch = await watch(mgmtCp.kubeConfig(), `${CAPI}/namespaces/${FLEET_NS}/machinedeployments`, (md: { metadata: { name: string }; spec: { replicas?: number } }) => {
      const r = md.spec.replicas ?? 0;
      const now = Date.now();
      if (r > 0 && !firstWrite.has(md.metadata.name)) firstWrite.set(md.metadata.name, now);
      if (r >= O.burst && !allWritten.has(md.metadata.name)) allWritten.set(md.metadata.name, now);
    });
    const peak: number[] = [];
    const peakTimer = setInterval(() => peak.push(rssMb(proc.pid)), 500);
    const b0 = Date.now();
    const bcpu0 = cpuSeconds(proc.pid);
    const firstPod = new Map<string, number>();
    await Promise.all(Array.from({ length: clusters }, async (_, i) => {
      firstPod.set(`w${i}-md`, Date.now());
      for (let p = 0; p < O.burst; p++) await workloads[i]!.request('POST', `/api/v1/namespaces/${BURST_NS}/pods`, { body: burstPod(p) });
    }));
    const deadline = Date.now() + BURST_TIMEOUT_MS;
    while (allWritten.size < clusters && Date.now() < deadline) await sleep(100);
    const bcpu1 = cpuSeconds(proc.pid);
    const burstWallMs = Date.now() - b0;
    clearInterval(peakTimer);
    stopWatch();
    const obs: FleetRunObservations = {
      clusters, round, ownedAfterMs, rssSamplesMb: rss, heapSamplesMb: heap, heapLiveMb, windowCpuS: [cpu0, cpu1], windowMs,
      burst: [...firstPod].map(([md, firstPodMs]) => ({
        cluster: md.replace(/-md$/, ''), firstPodMs,
        ...(firstWrite.has(md) ? { firstWriteMs: firstWrite.get(md)! } : {}), ...(allWritten.has(md) ? { allWrittenMs: allWritten.get(md)! } : {}),
      })),
      burstCpuS: [bcpu0, bcpu1], burstWallMs, burstRssPeakMb: Math.max(...peak, rss.at(-1) ?? NaN),
    };
    return fleetRun(obs);
  } finally {
    await proc.stop(10_000);
    // Every run starts alike: no burst pods, groups at 0, no prediction state learnt from the last burst.
    await Promise.all(workloads.slice(0, clusters).map((w) => w.request('DELETE', `/api/v1/namespaces/${BURST_NS}/pods`, { query: { gracePeriodSeconds: 0 } })));
    for (let i = 0; i < clusters; i++) {
      await mgmt.request('PATCH', `${CAPI}/namespaces/${FLEET_NS}/machinedeployments/w${i}-md`, { body: { spec: { replicas: 0 } }, contentType: 'application/merge-patch+json' });
    }
    await mgmt.request('DELETE', `/api/v1/namespaces/${SYSTEM_NS}/configmaps`, { query: { labelSelector: 'cluster.x-k8s.io/cluster-name' } });
    for (const w of workloads.slice(0, clusters)) {
      while ((await w.get<{ items: unknown[] }>(`/api/v1/namespaces/${BURST_NS}/pods`)).items.length > 0) await sleep(200);
    }
  }
}

async function main(): Promise<void> {
  const dir = makeTempDir('headroom-bench-fleet-');
  const planes: ControlPlane[] = [];
  const clients: KubeClient[] = [];
  const runs: FleetRun[] = [];
  const loadStart = loadavg()[0]!;
  let setupS = 0;
  try {
    // Two control planes at a time: five apiservers starting together on 2 cores miss their start timeout.
    const mgmtCp = await startControlPlane({ ownCrds: true });
    planes.push(mgmtCp);
    const workloadPlanes: ControlPlane[] = [];
    for (let i = 0; i < MAX_CLUSTERS; i += 2) {
      const batch = await Promise.all(Array.from({ length: Math.min(2, MAX_CLUSTERS - i) }, () => startControlPlane({ crds: false, ownCrds: false, kwok: true })));
      planes.push(...batch);
      workloadPlanes.push(...batch);
      progress(`${workloadPlanes.length}/${MAX_CLUSTERS} workload control planes up`);
    }
    const mgmt = new KubeClient(mgmtCp.kubeConfig());
    clients.push(mgmt);
    for (const ns of [SYSTEM_NS, FLEET_NS]) await mgmt.request('POST', '/api/v1/namespaces', { body: { metadata: { name: ns } } });
    for (const [i, cp] of workloadPlanes.entries()) {
      await fillWorkload(cp);
      await registerCluster(mgmt, i, cp);
      progress(`workload cluster w${i}: ${O.nodes} nodes, ${O.nodes * O.podsPerNode} pods Running`);
    }
    const workloads = workloadPlanes.map((cp) => new KubeClient(cp.kubeConfig()));
    clients.push(...workloads);
    setupS = (Date.now() - t0) / 1000;
    for (const { round, clusters } of runOrder(O.clusters, O.rounds)) {
      const run = await oneRun(dir, mgmtCp, mgmt, workloads, clusters, round);
      runs.push(run);
      progress(`N=${clusters} round ${round}: RSS ${run.rssMb} MB, heap ${run.heapUsedMb} (live ${run.heapLiveMb}) MB, CPU ${run.cpuMillicores} m; scale-up first ${run.scaleUpFirstS.join('/')} s, all ${run.scaleUpAllS.join('/')} s`);
    }
  } finally {
    for (const c of clients) c.close();
    await Promise.all(planes.map((p) => p.stop()));
    removeTempDir(dir);
  }
  const report = {
    config: O, setupSeconds: setupS, totalSeconds: (Date.now() - t0) / 1000, loadAverage: { start: loadStart, end: loadavg()[0] },
    runs, summary: summarizeFleet(runs),
  };
  if (O.json) console.log(JSON.stringify(report));
  else print(report);
}

function print(r: { config: typeof O; setupSeconds: number; totalSeconds: number; loadAverage: { start: number; end: number | undefined }; runs: FleetRun[]; summary: ReturnType<typeof summarizeFleet> }): void {
  const f = (x: number, d = 1) => (Number.isFinite(x) ? x.toFixed(d) : String(x));
  console.log(`bench:fleet: N = ${r.config.clusters.join(', ')} clusters of ${r.config.nodes} nodes, ${r.config.podsPerNode} pods each; burst ${r.config.burst} per cluster; ${r.config.rounds} round(s)`);
  console.log(`setup ${f(r.setupSeconds, 0)} s, total ${f(r.totalSeconds, 0)} s, load average ${f(r.loadAverage.start, 2)} -> ${f(r.loadAverage.end ?? NaN, 2)}`);
  console.log('\n| N | round | owned after (s) | RSS (MB) | heap used / live (MB) | CPU (m) | scale-up first / all per cluster (s) | burst CPU (m) | burst RSS peak (MB) |');
  console.log('|---|---|---|---|---|---|---|---|---|');
  for (const x of r.runs) {
    console.log(`| ${x.clusters} | ${x.round} | ${f(x.ownedAfterS)} | ${f(x.rssMb)} | ${f(x.heapUsedMb)} / ${f(x.heapLiveMb)} | ${f(x.cpuMillicores)} | ${x.scaleUpFirstS.map((s) => f(s, 2)).join(', ')} / ${x.scaleUpAllS.map((s) => f(s, 2)).join(', ')} | ${f(x.burstCpuMillicores)} | ${f(x.burstRssPeakMb)} |`);
  }
  console.log('\nmedians per N:\n| N | runs | RSS (MB) | heap used / live (MB) | CPU (m) | scale-up first p50 / max (s) | all p50 / max (s) |');
  console.log('|---|---|---|---|---|---|---|');
  for (const b of r.summary.byClusters) {
    console.log(`| ${b.clusters} | ${b.runs} | ${f(b.rssMb)} | ${f(b.heapUsedMb)} / ${f(b.heapLiveMb)} | ${f(b.cpuMillicores)} | ${f(b.scaleUpFirstP50S, 2)} / ${f(b.scaleUpFirstMaxS, 2)} | ${f(b.scaleUpAllP50S, 2)} / ${f(b.scaleUpAllMaxS, 2)} |`);
  }
  const pc = r.summary.perCluster;
  console.log(`\nper cluster (slope; intercept = no cluster; r2): RSS ${f(pc.rssMb.slope)} MB (${f(pc.rssMb.intercept)}; ${f(pc.rssMb.r2, 2)}), heap used ${f(pc.heapUsedMb.slope)} MB (${f(pc.heapUsedMb.intercept)}; ${f(pc.heapUsedMb.r2, 2)}), heap live ${f(pc.heapLiveMb.slope)} MB (${f(pc.heapLiveMb.intercept)}; ${f(pc.heapLiveMb.r2, 2)}), CPU ${f(pc.cpuMillicores.slope)} m (${f(pc.cpuMillicores.intercept)}; ${f(pc.cpuMillicores.r2, 2)}), burst RSS peak ${f(pc.burstRssPeakMb.slope)} MB (${f(pc.burstRssPeakMb.intercept)})`);
  if (r.summary.missedScaleUps > 0) console.log(`MISSED: ${r.summary.missedScaleUps} cluster burst(s) not scaled to ${r.config.burst} within ${BURST_TIMEOUT_MS / 1000} s`);
}

await main();
