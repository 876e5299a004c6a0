/**
 * `npm run bench:scale [-- --nodes 5000 --pods 50000 --groups 200 --burst 1000]`: the
 * scale benchmark of issue 17 (not part of `npm test`; docs/scale.md has the figures).
 *
 * On a private real control plane (etcd, kube-apiserver, kube-scheduler, kwok) with the
 * machine fixture playing Cluster API, it creates `--nodes` kwok Nodes carrying
 * `--pods` bound pods (the steady load; outside any node group), and `--groups`
 * MachineDeployments at 0 replicas whose nodes carry the label the burst pods select,
 * and waits until kwok has marked the steady pods Running (a settled cluster; kwok runs
 * with KWOK_POD_WORKERS pod workers, see there). Then `headroom controller` runs as a real process (from source, chart-like flags,
 * webhook and extender over TLS) and it measures, in order:
 *   1. admission and extender latency (autocannon) while the controller lists the whole
 *      cluster at its start;
 *   2. controller memory once synced: RSS, V8 heap in use (its /metrics) and, where a
 *      memory cgroup can be made (memory-cgroup.ts), the cgroup's peak under the chart's
 *      limit, which the controller runs in from its start, with OOM kills;
 *   3. a burst of `--burst` pending pods, from creation to Running, with Headroom's own
 *      share (pod created -> MachineDeployment scaled) apart from the environment's: a
 *      timeline of the first and last of each step (created, scaled up, Machines
 *      created by the fixture, Nodes Ready by kwok, pods bound by kube-scheduler, pods
 *      Running by kwok); RSS sampled throughout;
 *   4. the extender's latency at this node count (autocannon, NodeNames mode);
 *   5. kube-scheduler's throughput with the Headroom extender (the controller's own
 *      server, live state) against a do-nothing extender, same run, `--rounds` rounds
 *      in ABBA order, medians; both extenders are configured from the same entry of
 *      webhook-config/kube-scheduler-configuration.yaml (verbs, nodeCacheCapable,
 *      weight, ignorable, timeout, HTTPS), only the URL and CA differ;
 *   6. a forced `410 Gone` in the running controller: it is paused (SIGSTOP) while the
 *      cluster moves on and kube-apiserver restarts, so every watch resumes from a
 *      resourceVersion older than the new watch cache: time until its informers have
 *      relisted, and admission and extender latency meanwhile.
 * Objects are created 32 requests at a time over one keep-alive pool (create-many.ts).
 * Prints a table, and with --json one JSON object. Everything it starts, it stops.
 */
import { readdirSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { loadavg } from 'node:os';
import { connect } from 'node:net';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Watch, type KubeConfig, type V1Node, type V1Pod } from '@kubernetes/client-node';
import { parse as parseYaml } from 'yaml';
import { generateServingCert } from '../../src/server/serving-cert.js';
import { KubeClient } from '../../src/kube/kube-client.js';
import { type ControlPlane, startControlPlane } from '../harness/control-plane.js';
import { MachineFixture } from '../harness/machine-fixture.js';
import { freePort } from '../harness/ports.js';
import { ManagedProcess, makeTempDir, removeTempDir } from '../harness/process.js';
import { machineDeployment } from '../integration/controller-objects.js';
import { fmt, load, median, startChild, type ChildServer, type LoadResult } from '../load/load-kit.js';
import { createMany } from './create-many.js';
import { openMemoryCgroup, type MemoryCgroup } from './memory-cgroup.js';
import { cpuSeconds, rssMb, statCpuSeconds } from './proc-stats.js';

/**
 * kwok plays every kubelet in one process; its default 4 pod stage workers mark pods
 * Running one status PATCH at a time each, where a real cluster's kubelets work side by
 * side (one per node, each with its own API budget). So the scale run gives kwok
 * KWOK_POD_WORKERS (about what kube-apiserver here absorbs, not what this benchmark
 * needs: docs/scale.md), and as many node workers and pods-on-node sync workers as
 * kwok's ratio of defaults. --kwok-pod-workers 0 keeps kwok's defaults.
 */
const KWOK_POD_WORKERS = 32;
const kwokOptions = (podWorkers: number) =>
  podWorkers > 0 ? { podPlayStageParallelism: podWorkers, nodePlayStageParallelism: Math.max(4, podWorkers / 2), podsOnNodeSyncParallelism: Math.max(1, podWorkers / 2) } : true;

const { values } = parseArgs({
  options: {
    nodes: { type: 'string', default: '5000' },
    pods: { type: 'string', default: '50000' },
    groups: { type: 'string', default: '200' },
    burst: { type: 'string', default: '1000' },
    'sched-pods': { type: 'string', default: '500' },
    rounds: { type: 'string', default: '5' },
    'boot-delay': { type: 'string', default: '1000' },
    // Percent of each steady node's cpu and memory its pods request (default: 100m/128Mi a
    // pod, about 2% at the default size). How full nodes are decides the extender's scores.
    'steady-fill': { type: 'string' },
    'kwok-pod-workers': { type: 'string', default: String(KWOK_POD_WORKERS) },
    // The controller's solver threads: the chart's value unless given.
    'solver-threads': { type: 'string' },
    json: { type: 'boolean', default: false },
    // A CPU profile of the controller over the first scheduler round of each kind (Headroom
    // and do-nothing extender), written here (a diagnostic: profiling slows it, so that run's ratio is not one to quote).
    'profile-dir': { type: 'string' },
  },
});
const num = (k: keyof typeof values) => {
  const n = Number(values[k]);
  if (!Number.isInteger(n) || n < 0) {
    console.error(`bench:scale: --${k} takes a whole number, got "${String(values[k])}"`);
    process.exit(2);
  }
  return n;
};
const NODES = num('nodes');
const PODS = num('pods');
const GROUPS = Math.max(1, num('groups'));
const BURST = num('burst');
const SCHED_PODS = num('sched-pods');
const ROUNDS = Math.max(1, num('rounds'));
const BOOT_DELAY_MS = num('boot-delay');
/** kwok's pod stage workers (0: kwok's default, 4); see KWOK_POD_WORKERS. */
const KWOK_WORKERS = num('kwok-pod-workers');
/** The controller's --solver-threads: the chart's (controller.solverThreads) unless --solver-threads is given. */
const SOLVER_THREADS = values['solver-threads'] === undefined ? chartSolverThreads() : num('solver-threads');
/** The steady nodes' allocatable (kwok Nodes). */
const STEADY_ALLOCATABLE = { cpu: '64', memory: '256Gi', pods: '250' };
/** Each steady pod's requests: 100m/128Mi, or a share of its node for --steady-fill. */
const STEADY_REQUESTS = steadyRequests();
const LOAD_NS = 'scale-load';
const GROUP_NS = 'scale-groups';
const BURST_NS = 'scale-burst';
const POOL_LABEL = 'bench.headroom.dev/pool';
/** charts/headroom/values.yaml resources.limits.memory: the controller runs under it (memory-cgroup.ts). */
const CHART_MEMORY_LIMIT_MB = chartMemoryLimitMb();
const KARPENTER_BOUND_MB = 260; // Karpenter's performance suite, p95 at its 1,000-pod scale
const t0 = Date.now();
/** The machine's 1-minute load average when the run started (figures depend on it). */
const loadAtStart = loadavg()[0];
/** Seconds each phase took, in order (docs/scale.md says how long a full-size run's take). */
const phases: Record<string, number> = {};
let phaseStart = Date.now();
const endPhase = (name: string) => {
  phases[name] = (Date.now() - phaseStart) / 1000;
  phaseStart = Date.now();
};
const progress = (m: string) => console.error(`[scale ${((Date.now() - t0) / 1000).toFixed(0)}s] ${m}`);

/** Requests in flight while creating objects (KubeClient pools 32 connections). */
const CREATE_CONCURRENCY = 32;

/** Creates every item, CREATE_CONCURRENCY at a time, with progress lines; resolves with the seconds it took. */
const createAll = <T>(items: readonly T[], create: (t: T) => Promise<unknown>, what: string): Promise<number> =>
  createMany(items, create, { concurrency: CREATE_CONCURRENCY, every: 5000, onProgress: (done) => progress(`${what}: ${done}/${items.length}`) });

/** resources.limits.memory in charts/headroom/values.yaml, in MiB. */
function chartMemoryLimitMb(): number {
  const values = parseYaml(readFileSync('charts/headroom/values.yaml', 'utf8')) as { resources?: { limits?: { memory?: string } } };
  const m = /^(\d+)(Mi|Gi)$/.exec(values.resources?.limits?.memory ?? '');
  if (!m) throw new Error(`bench:scale: cannot read resources.limits.memory (Mi or Gi) from the chart: ${values.resources?.limits?.memory}`);
  return Number(m[1]) * (m[2] === 'Gi' ? 1024 : 1);
}

/** controller.solverThreads in charts/headroom/values.yaml: each solver thread holds its own copy of the snapshot, so memory is measured with the chart's count. */
/** --steady-fill P: the steady pods (PODS / NODES a node) together request P% of their node's cpu and memory. */
function steadyRequests(): { cpu: string; memory: string } {
  if (values['steady-fill'] === undefined) return { cpu: '100m', memory: '128Mi' };
  const fill = num('steady-fill');
  if (fill > 95) {
    console.error(`bench:scale: --steady-fill takes a percent up to 95, got ${fill}`);
    process.exit(2);
  }
  const perNode = Math.max(1, Math.ceil(PODS / Math.max(1, NODES)));
  const share = fill / 100 / perNode;
  return { cpu: `${Math.max(1, Math.floor(Number(STEADY_ALLOCATABLE.cpu) * 1000 * share))}m`, memory: `${Math.max(1, Math.floor(Number.parseInt(STEADY_ALLOCATABLE.memory, 10) * 1024 * share))}Mi` };
}

function chartSolverThreads(): number {
  const values = parseYaml(readFileSync('charts/headroom/values.yaml', 'utf8')) as { controller?: { solverThreads?: unknown } };
  const n = values.controller?.solverThreads;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 0) throw new Error(`bench:scale: cannot read controller.solverThreads (a whole number) from the chart: ${String(n)}`);
  return n;
}

/** The controller's V8 heap in use (live objects and not yet collected garbage), MB, from its /metrics. */
const heapFromMetrics = (text: string): number => {
  const m = /^headroom_nodejs_heap_size_used_bytes (\S+)/m.exec(text);
  return m ? Number(m[1]) / 2 ** 20 : NaN;
};
/**
 * Where the controller's RSS is, MB, from its /metrics: the main thread's V8 heap
 * (used, committed), memory outside it (Buffers, ArrayBuffers), and the most a solver
 * worker's heap committed (workers are not in the process metrics).
 */
const memoryParts = (metricsPort: number): Promise<Record<string, number>> =>
  fetch(`http://127.0.0.1:${metricsPort}/metrics`).then((r) => r.text()).then((text) => {
    const get = (series: string) => {
      const m = new RegExp(`^${series.replace(/[{}]/g, '\\$&')} (\\S+)`, 'm').exec(text);
      return m ? Math.round(Number(m[1]) / 2 ** 20) : NaN;
    };
    return {
      rssMb: get('headroom_process_resident_memory_bytes'), heapUsedMb: get('headroom_nodejs_heap_size_used_bytes'),
      heapCommittedMb: get('headroom_nodejs_heap_size_total_bytes'), externalMb: get('headroom_nodejs_external_memory_bytes'),
      solverWorkerHeapMaxMb: get('headroom_solver_worker_heap_bytes{kind="max_committed"}'),
    };
  }, () => ({}));
const heapMb = (metricsPort: number): Promise<number> =>
  fetch(`http://127.0.0.1:${metricsPort}/metrics`).then((r) => r.text()).then(heapFromMetrics, () => NaN);

/** The cgroup's peak against its limit, and whether the controller survived (read before stopping it). */
function cgroupSummary(cgroup: MemoryCgroup, controller: ManagedProcess) {
  const r = cgroup.read();
  return { peakMb: r.peakBytes / 2 ** 20, limitHits: r.limitHits, oomKills: r.oomKills, controllerAlive: controller.running };
}

/** Whether something accepts TCP connections on 127.0.0.1:port. */
const listening = (port: number): Promise<boolean> => new Promise((resolve) => {
  const socket = connect(port, '127.0.0.1', () => {
    socket.destroy();
    resolve(true);
  });
  socket.on('error', () => resolve(false));
});

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN;
};

async function main(): Promise<void> {
  const dir = makeTempDir('headroom-scale-');
  let cp: ControlPlane | undefined;
  let fixture: MachineFixture | undefined;
  let controller: ManagedProcess | undefined;
  let floor: ChildServer | undefined;
  let cgroup: MemoryCgroup | undefined;
  const report: Record<string, unknown> = { config: { nodes: NODES, pods: PODS, groups: GROUPS, burst: BURST, schedPods: SCHED_PODS, rounds: ROUNDS, bootDelayMs: BOOT_DELAY_MS, solverThreads: SOLVER_THREADS, steadyPodRequests: STEADY_REQUESTS } };
  try {
    cp = await startControlPlane({ scheduler: true, kwok: kwokOptions(KWOK_WORKERS), apiServerArgs: ['--max-requests-inflight=800', '--max-mutating-requests-inflight=400', `--etcd-compaction-interval=${COMPACTION_S}s`] });
    const kc = cp.kubeConfig();
    const client = new KubeClient(kc);
    const createPod = (namespace: string) => (body: V1Pod) => client.request('POST', `/api/v1/namespaces/${namespace}/pods`, { body });
    endPhase('control plane');
    progress('control plane up');
    for (const ns of [LOAD_NS, GROUP_NS, BURST_NS]) await client.request('POST', '/api/v1/namespaces', { body: { metadata: { name: ns } } });

    // The steady cluster: NODES kwok nodes, PODS pods bound to them round-robin.
    const allocatable = STEADY_ALLOCATABLE;
    const nodes: V1Node[] = Array.from({ length: NODES }, (_, i) => ({
      metadata: { name: `load-${i}`, labels: { 'kubernetes.io/hostname': `load-${i}`, type: 'kwok', 'topology.kubernetes.io/zone': `zone-${i % 3}` }, annotations: { 'kwok.x-k8s.io/node': 'fake' } },
      status: { allocatable, capacity: allocatable },
    }));
    const nodeSeconds = await createAll(nodes, (body) => client.request('POST', '/api/v1/nodes', { body }), 'nodes');
    const pods = Array.from({ length: PODS }, (_, i): V1Pod => ({
      metadata: { name: `load-${i}`, namespace: LOAD_NS, labels: { app: `app-${i % 500}` } },
      spec: {
        nodeName: `load-${i % Math.max(1, NODES)}`,
        containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.10', resources: { requests: STEADY_REQUESTS } }],
      },
    }));
    const podSeconds = NODES > 0 ? await createAll(pods, createPod(LOAD_NS), 'pods') : 0;
    progress(`${NODES} nodes in ${nodeSeconds.toFixed(0)} s, ${PODS} pods in ${podSeconds.toFixed(0)} s`);
    // A steady cluster is settled: its pods Running. Else kwok is still marking them when
    // Headroom starts and when the burst comes, and the burst waits behind that backlog.
    const settleSeconds = await waitUntilRunning(client, LOAD_NS);
    report.setup = { nodeSeconds, podSeconds, settleSeconds, kwokPodWorkers: KWOK_WORKERS || 4 };
    progress(`steady pods all Running ${settleSeconds.toFixed(0)} s after the last was created`);

    // GROUPS node groups, 0 replicas, shapes varied so the solver has a real choice.
    const shapes = [{ cpu: '4', memory: '16Gi' }, { cpu: '8', memory: '32Gi' }, { cpu: '16', memory: '64Gi' }, { cpu: '32', memory: '128Gi' }];
    const groups = Array.from({ length: GROUPS }, (_, i) => {
      const shape = shapes[i % shapes.length]!;
      return machineDeployment({
        namespace: GROUP_NS, name: `ng-${i}`, replicas: 0, min: 0, max: 50, ...shape,
        annotations: { 'capacity.cluster-autoscaler.kubernetes.io/labels': `${POOL_LABEL}=burst,topology.kubernetes.io/zone=zone-${i % 3}` },
      });
    });
    await createAll(groups, (body) => client.request('POST', `/apis/cluster.x-k8s.io/v1beta2/namespaces/${GROUP_NS}/machinedeployments`, { body }), 'groups');
    fixture = await MachineFixture.start({ kubeConfig: kc, namespace: GROUP_NS, bootDelayMs: BOOT_DELAY_MS, intervalMs: 250 });

    endPhase('create objects');
    // The controller, as the chart runs it (one replica, no leader election needed).
    const tlsDir = join(dir, 'tls');
    mkdirSync(tlsDir);
    const tls = generateServingCert({ service: 'headroom', namespace: 'headroom-system' });
    writeFileSync(join(tlsDir, 'tls.crt'), tls.certPem);
    writeFileSync(join(tlsDir, 'tls.key'), tls.keyPem);
    const [metricsPort, webhookPort] = [await freePort(), await freePort()];
    const webhookUrl = `https://127.0.0.1:${webhookPort}`;
    // Under the chart's memory limit, as in the pod (Node sizes its heap from it).
    const opened = openMemoryCgroup('headroom-scale', CHART_MEMORY_LIMIT_MB * 2 ** 20);
    if ('unavailable' in opened) progress(`controller runs WITHOUT a memory limit: ${opened.unavailable}`);
    else cgroup = opened;
    report.memoryLimit = cgroup ? { cgroup: `v${cgroup.version} ${cgroup.path}`, limitMb: CHART_MEMORY_LIMIT_MB } : { cgroup: `none: ${(opened as { unavailable: string }).unavailable}` };
    const command = (cgroup?.wrap ?? ((binary: string, args: string[]) => ({ binary, args })))(process.execPath, [
      '--import', 'tsx', join(process.cwd(), 'test', 'integration', 'controller-cli-entry.ts'), 'controller',
      '--kubeconfig', cp.kubeconfigPath, '--namespace', GROUP_NS, '--cluster-name', 'test',
      '--metrics-address', `127.0.0.1:${metricsPort}`, '--webhook-address', `127.0.0.1:${webhookPort}`, '--tls-dir', tlsDir,
      '--solver-threads', String(SOLVER_THREADS), '--log-level', 'warn', ...(values['profile-dir'] ? ['--profiling'] : []),
    ]);
    controller = ManagedProcess.start('headroom-controller', command.binary, command.args, { logFile: join(dir, 'controller.log') });
    const pid = controller.pid;
    const started = Date.now();

    // 1. Latency while the controller lists everything: as soon as the webhook port answers.
    // The webhook's port opens a moment after the metrics port: requests before it would
    // count as errors of the full list, which has only begun.
    while (!(await fetch(`http://127.0.0.1:${metricsPort}/healthz`).then(() => true, () => false)) || !(await listening(webhookPort))) await sleep(50);
    const samplePod = { metadata: { name: 'p', namespace: BURST_NS }, spec: { containers: [{ name: 'c', resources: { requests: { cpu: '1', memory: '1Gi' } } }], nodeSelector: { [POOL_LABEL]: 'burst' } } };
    const names = nodes.slice(0, 500).map((n) => n.metadata!.name!);
    const filterBody = JSON.stringify({ Pod: samplePod, NodeNames: names });
    const reviewBody = JSON.stringify({
      apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview',
      request: { uid: '00000000-0000-0000-0000-000000000001', kind: { group: '', version: 'v1', kind: 'Pod' }, resource: { group: '', version: 'v1', resource: 'pods' }, operation: 'CREATE', namespace: BURST_NS, object: { ...samplePod, metadata: { generateName: 'p-', namespace: BURST_NS } } },
    });
    let synced = 0;
    const readyWatch = (async () => {
      while ((await fetch(`http://127.0.0.1:${metricsPort}/readyz`).then((r) => r.status, () => 0)) !== 200) await sleep(100);
      synced = (Date.now() - started) / 1000;
    })();
    const duringSync = await Promise.all([
      load({ url: `${webhookUrl}/mutate/pods`, caPem: tls.caPem, connections: 2, durationSec: 15, overallRate: 50, bodies: [reviewBody] }),
      load({ url: `${webhookUrl}/scheduler/filter`, caPem: tls.caPem, connections: 2, durationSec: 15, overallRate: 50, bodies: [filterBody] }),
    ]);
    await readyWatch;
    report.duringFullList = { syncSeconds: synced, webhook: duringSync[0], extender: duringSync[1] };
    progress(`controller synced in ${synced.toFixed(1)} s`);
    endPhase('full list');

    // 2. RSS once synced.
    await sleep(5000);
    const rssSynced = rssMb(pid);
    const heapSynced = await heapMb(metricsPort);
    const rssSamples: number[] = [];
    const heapSamples: number[] = [];
    const rssTimer = setInterval(() => rssSamples.push(rssMb(pid)), 1000);
    // Live heap every 5 s (a /metrics scrape; Prometheus' rate, not more).
    const heapTimer = setInterval(() => void heapMb(metricsPort).then((h) => heapSamples.push(h)), 5000);

    // 3. The burst.
    const created = new Map<string, number>();
    const running = new Map<string, number>();
    const bound = new Map<string, number>();
    const scaleWrites: number[] = [];
    const stopPods = await watch(kc, `/api/v1/namespaces/${BURST_NS}/pods`, (pod: V1Pod) => {
      const name = pod.metadata!.name!;
      if (pod.spec?.nodeName && !bound.has(name)) bound.set(name, Date.now());
      if (pod.status?.phase === 'Running' && !running.has(name)) running.set(name, Date.now());
    });
    // The environment's share: Machines made by the fixture, their Nodes Ready (kwok).
    const machinesSeen = new Map<string, { seen: number; created: number }>();
    const stopMachines = await watch(kc, `/apis/cluster.x-k8s.io/v1beta2/namespaces/${GROUP_NS}/machines`, (m: { metadata: { name: string; creationTimestamp?: string } }) => {
      if (!machinesSeen.has(m.metadata.name)) machinesSeen.set(m.metadata.name, { seen: Date.now(), created: Date.parse(m.metadata.creationTimestamp ?? '') });
    });
    const nodesReady = new Map<string, number>();
    const stopNodes = await watch(kc, `/api/v1/nodes?labelSelector=${encodeURIComponent(`fixture.headroom.dev/namespace=${GROUP_NS}`)}`, (n: V1Node) => {
      const ready = n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
      if (ready && !nodesReady.has(n.metadata!.name!)) nodesReady.set(n.metadata!.name!, Date.now());
    });
    let replicasSeen = 0;
    const replicasByGroup = new Map<string, number>();
    const stopGroups = await watch(kc, `/apis/cluster.x-k8s.io/v1beta2/namespaces/${GROUP_NS}/machinedeployments`, (md: { metadata: { name: string }; spec: { replicas?: number } }) => {
      const before = replicasByGroup.get(md.metadata.name) ?? 0;
      const now = md.spec.replicas ?? 0;
      replicasByGroup.set(md.metadata.name, now);
      if (now > before) scaleWrites.push(Date.now());
      replicasSeen = [...replicasByGroup.values()].reduce((a, b) => a + b, 0);
    });
    const burstPods = Array.from({ length: BURST }, (_, i): V1Pod => ({
      metadata: { name: `burst-${i}`, namespace: BURST_NS, labels: { app: 'burst' } },
      spec: { nodeSelector: { [POOL_LABEL]: 'burst' }, containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.10', resources: { requests: { cpu: '1', memory: '1Gi' } } }] },
    }));
    const burstStart = Date.now();
    await createAll(burstPods, async (body) => {
      await createPod(BURST_NS)(body);
      created.set(body.metadata!.name!, Date.now());
    }, 'burst pods');
    const burstCreated = Date.now();
    const deadline = Date.now() + 600_000;
    let reported = -1;
    while (running.size < BURST && Date.now() < deadline) {
      await sleep(500);
      if (Math.floor(running.size / 100) !== reported) {
        reported = Math.floor(running.size / 100);
        progress(`burst: ${running.size}/${BURST} Running, ${replicasSeen} replicas`);
      }
    }
    stopPods();
    stopGroups();
    stopMachines();
    stopNodes();
    clearInterval(rssTimer);
    clearInterval(heapTimer);
    const lat = [...running.entries()].map(([n, at]) => (at - created.get(n)!) / 1000);
    report.burst = {
      pods: BURST,
      running: running.size,
      createSeconds: (burstCreated - burstStart) / 1000,
      firstCreateToLastRunningSeconds: running.size ? (Math.max(...running.values()) - burstStart) / 1000 : NaN,
      podToRunningP50: median(lat),
      podToRunningP99: pct(lat, 99),
      podToRunningMax: Math.max(...lat),
      // Headroom's share: its decisions (MachineDeployment replicas raised) after the pods appeared.
      firstScaleAfterFirstPodSeconds: scaleWrites.length ? (Math.min(...scaleWrites) - burstStart) / 1000 : NaN,
      lastScaleAfterLastPodSeconds: scaleWrites.length ? (Math.max(...scaleWrites) - burstCreated) / 1000 : NaN,
      scaleWrites: scaleWrites.length,
      replicas: replicasSeen,
      groupsUsed: [...replicasByGroup.values()].filter((r) => r > 0).length,
      fixtureBootDelaySeconds: BOOT_DELAY_MS / 1000,
      // Each step's first and last, in seconds after the first pod's creation.
      timeline: {
        created: span(created.values(), burstStart),
        scaledUp: span(scaleWrites, burstStart),
        // Not those made before the burst (creationTimestamp has whole seconds).
        machinesCreated: span([...machinesSeen.values()].filter((m) => !(m.created < Math.floor(burstStart / 1000) * 1000)).map((m) => m.seen), burstStart),
        nodesReady: span(nodesReady.values(), burstStart),
        podsBound: span(bound.values(), burstStart),
        podsRunning: span(running.values(), burstStart),
      },
      podToBoundP50: median([...bound.entries()].map(([n, at]) => (at - created.get(n)!) / 1000)),
      boundToRunningP50: median([...running.entries()].filter(([n]) => bound.has(n)).map(([n, at]) => (at - bound.get(n)!) / 1000)),
    };
    report.rss = {
      syncedMb: rssSynced, burstPeakMb: Math.max(rssSynced, ...rssSamples), chartLimitMb: CHART_MEMORY_LIMIT_MB, karpenterBoundMb: KARPENTER_BOUND_MB,
      heapSyncedMb: heapSynced, heapBurstPeakMb: Math.max(heapSynced, ...heapSamples), afterBurst: await memoryParts(metricsPort),
    };
    progress(`burst: ${running.size}/${BURST} Running`);
    endPhase('burst');

    // 4. Extender latency at this node count (kube-scheduler sends one call at a time; also 4 connections).
    const extender1 = await load({ url: `${webhookUrl}/scheduler/filter`, caPem: tls.caPem, connections: 1, durationSec: 10, bodies: [filterBody] });
    const prioritize1 = await load({ url: `${webhookUrl}/scheduler/prioritize`, caPem: tls.caPem, connections: 1, durationSec: 10, bodies: [filterBody] });
    const allNames = JSON.stringify({ Pod: samplePod, NodeNames: nodes.map((n) => n.metadata!.name!) });
    const extenderAll = await load({ url: `${webhookUrl}/scheduler/filter`, caPem: tls.caPem, connections: 1, durationSec: 10, bodies: [allNames] });
    const extender4 = await load({ url: `${webhookUrl}/scheduler/filter`, caPem: tls.caPem, connections: 4, durationSec: 10, bodies: [filterBody] });
    endPhase('extender latency');
    report.extender = { filter500Names1Conn: extender1, prioritize500Names1Conn: prioritize1, filterAllNames1Conn: extenderAll, filter500Names4Conn: extender4 };

    // 5. kube-scheduler throughput: Headroom's extender vs a do-nothing one, alternating.
    floor = await startChild('extender-floor');
    const rates: Record<'headroom' | 'floor', number[]> = { headroom: [], floor: [] };
    // Where the difference comes from: per round, the controller's and kube-scheduler's
    // CPU per pod and the controller's event-loop delay (what an extender call waits).
    const costs: Record<'headroom' | 'floor', RoundCost[]> = { headroom: [], floor: [] };
    if (SCHED_PODS > 1) {
      for (let r = 0; r < ROUNDS; r++) {
        // ABBA: which goes first alternates, so a drift over the phase (GC, the cluster
        // growing by these pods) does not favour either.
        for (const kind of r % 2 === 0 ? (['headroom', 'floor'] as const) : (['floor', 'headroom'] as const)) {
          const ext = kind === 'headroom' ? { url: webhookUrl, caPem: tls.caPem } : floor;
          const profileDir = r === 0 ? values['profile-dir'] : undefined;
          const profile = profileDir ? fetch(`http://127.0.0.1:${metricsPort}/debug/profile/cpu?seconds=${PROFILE_SECONDS}`).then((res) => res.text()) : undefined;
          const before = await controllerSample(pid, metricsPort);
          const floorBefore = kind === 'floor' ? Number(await floor.command('cpu')) : NaN;
          const run = await schedulerRun(cp, kc, createPod(LOAD_NS), `${kind}-${r}`, ext, SCHED_PODS);
          const after = await controllerSample(pid, metricsPort);
          // The do-nothing extender's own process: what its answers cost, beside what Headroom's cost in the controller.
          const floorCpuMsPerPod = kind === 'floor' ? (1000 * (Number(await floor.command('cpu')) - floorBefore)) / SCHED_PODS : undefined;
          rates[kind].push(run.podsPerSecond);
          const perPod = (k: keyof ThreadCpu) => (1000 * (after.threads[k] - before.threads[k])) / SCHED_PODS;
          costs[kind].push({ controllerCpuMsPerPod: (1000 * (after.cpuSeconds - before.cpuSeconds)) / SCHED_PODS, controllerThreadsCpuMsPerPod: { main: perPod('main'), workers: perPod('workers'), v8: perPod('v8'), other: perPod('other') }, schedulerCpuMsPerPod: run.schedulerCpuMsPerPod, loopDelayMeanMs: after.loopDelayMeanMs, loopDelayP99Ms: after.loopDelayP99Ms, loopDelayMaxMs: after.loopDelayMaxMs, ...(floorCpuMsPerPod !== undefined ? { floorProcessCpuMsPerPod: floorCpuMsPerPod } : {}) });
          if (profile && profileDir) writeFileSync(join(profileDir, `controller-scheduler-${kind}-${Date.now()}.cpuprofile`), await profile);
          progress(`scheduler ${kind}-${r}: ${fmt(rates[kind].at(-1)!, 1)} pods/s`);
        }
      }
    }
    endPhase('scheduler throughput');
    report.scheduler = { podsPerRun: SCHED_PODS, headroom: rates.headroom, floor: rates.floor, ratio: median(rates.headroom) / median(rates.floor), costs };
    report.rss = { ...(report.rss as object), endMb: rssMb(pid) };

    // 6. A forced 410 Gone in the running controller.
    report.relist410 = await forcedRelist(cp, client, pid, metricsPort, [
      { url: `${webhookUrl}/mutate/pods`, caPem: tls.caPem, connections: 2, durationSec: RELIST_LOAD_SECONDS, overallRate: 50, bodies: [reviewBody] },
      { url: `${webhookUrl}/scheduler/filter`, caPem: tls.caPem, connections: 2, durationSec: RELIST_LOAD_SECONDS, overallRate: 50, bodies: [filterBody] },
    ]);
    endPhase('410 relist');
    progress(`410 relist: every informer relisted ${fmt((report.relist410 as { allRelistedSeconds: number }).allRelistedSeconds, 1)} s after the controller resumed`);
    client.close();
  } finally {
    if (controller && cgroup) {
      report.memoryLimit = { ...(report.memoryLimit as object), ...cgroupSummary(cgroup, controller) };
      progress(`memory limit: ${JSON.stringify(report.memoryLimit)}`);
    }
    await controller?.stop(5000).catch(() => undefined);
    cgroup?.remove();
    await floor?.stop();
    await fixture?.stop({ keepNodes: true }).catch(() => undefined);
    await cp?.stop();
    removeTempDir(dir);
  }
  report.totalSeconds = (Date.now() - t0) / 1000;
  report.loadAverage = { start: loadAtStart, end: loadavg()[0] };
  report.phaseSeconds = phases;
  if (values.json) console.log(JSON.stringify(report));
  else print(report);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** First and last of some instants, in seconds after `from` (NaN when there are none). */
function span(instants: Iterable<number>, from: number): { first: number; last: number; count: number } {
  const xs = [...instants];
  return xs.length === 0 ? { first: NaN, last: NaN, count: 0 } : { first: (Math.min(...xs) - from) / 1000, last: (Math.max(...xs) - from) / 1000, count: xs.length };
}

/** How long the benchmark waits for the steady pods to be Running before it goes on regardless (and says so). */
const SETTLE_WAIT_MS = 1_800_000;

/**
 * Waits until no pod in `namespace` is other than Running (one small LIST every 2 s);
 * resolves with the seconds it took, or NaN after SETTLE_WAIT_MS (the run goes on, the
 * report shows it did not settle).
 */
async function waitUntilRunning(client: KubeClient, namespace: string): Promise<number> {
  const started = Date.now();
  const path = `/api/v1/namespaces/${namespace}/pods?limit=1&fieldSelector=${encodeURIComponent('status.phase!=Running')}`;
  for (let polls = 0; ; polls++) {
    const list = (await client.request('GET', path)) as { items: unknown[] };
    if (list.items.length === 0) return (Date.now() - started) / 1000;
    if (Date.now() - started > SETTLE_WAIT_MS) {
      progress(`steady pods: NOT all Running after ${SETTLE_WAIT_MS / 1000} s; going on`);
      return NaN;
    }
    if (polls % 15 === 0) progress(`steady pods: waiting for kwok to mark them Running (${((Date.now() - started) / 1000).toFixed(0)} s)`);
    await sleep(2000);
  }
}

/** Watches `path`, calling `on` for every object event; re-lists on close. Returns a stop function. */
async function watch<T>(kc: KubeConfig, path: string, on: (obj: T) => void): Promise<() => void> {
  let stopped = false;
  let current: AbortController | undefined;
  const start = async (): Promise<void> => {
    if (stopped) return;
    current = await new Watch(kc).watch(path, { allowWatchBookmarks: true }, (_type: string, obj: T) => on(obj), () => {
      if (!stopped) setTimeout(() => void start().catch(() => undefined), 200);
    });
  };
  await start();
  return () => {
    stopped = true;
    current?.abort();
  };
}

/** Pods created while their scheduler is down; then start it and time first to last binding. */
async function schedulerRun(cp: ControlPlane, kc: KubeConfig, createPod: (body: V1Pod) => Promise<unknown>, schedulerName: string, ext: { url: string; caPem: string }, count: number): Promise<{ podsPerSecond: number; schedulerCpuMsPerPod: number }> {
  const pods = Array.from({ length: count }, (_, i): V1Pod => ({
    metadata: { name: `${schedulerName}-${i}`, namespace: LOAD_NS },
    spec: { schedulerName, containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.10', resources: { requests: { cpu: '100m', memory: '128Mi' } } }] },
  }));
  await createAll(pods, createPod, schedulerName);
  const bound = new Map<string, number>();
  const stop = await watch(kc, `/api/v1/namespaces/${LOAD_NS}/pods?fieldSelector=${encodeURIComponent(`spec.schedulerName=${schedulerName}`)}`, (pod: V1Pod) => {
    if (pod.spec?.nodeName && !bound.has(pod.metadata!.name!)) bound.set(pod.metadata!.name!, performance.now());
  });
  const example = parseYaml(readFileSync('webhook-config/kube-scheduler-configuration.yaml', 'utf8')) as { extenders: Record<string, unknown>[] };
  const config = {
    clientConnection: { qps: 500, burst: 1000 },
    extenders: [{ ...example.extenders[0], urlPrefix: `${ext.url}/scheduler`, tlsConfig: { caData: Buffer.from(ext.caPem).toString('base64') } }],
  };
  const scheduler = await cp.startScheduler({ schedulerName, config });
  try {
    const cpuBefore = cpuSeconds(scheduler.pid);
    const deadline = Date.now() + 300_000;
    while (bound.size < count && Date.now() < deadline) await sleep(100);
    const times = [...bound.values()];
    return {
      podsPerSecond: bound.size < 2 ? NaN : (bound.size - 1) / ((Math.max(...times) - Math.min(...times)) / 1000),
      schedulerCpuMsPerPod: (1000 * (cpuSeconds(scheduler.pid) - cpuBefore)) / Math.max(1, bound.size),
    };
  } finally {
    stop();
    await scheduler.stop();
  }
}

interface RoundCost { controllerCpuMsPerPod: number; controllerThreadsCpuMsPerPod: ThreadCpu; floorProcessCpuMsPerPod?: number; schedulerCpuMsPerPod: number; loopDelayMeanMs: number; loopDelayP99Ms: number; loopDelayMaxMs: number }

/**
 * The controller's CPU so far, and its event-loop delay since the last scrape of its
 * /metrics (prom-client resets that histogram on every scrape, so a scrape before a
 * round and one after give the round's).
 */
async function controllerSample(pid: number, metricsPort: number): Promise<{ cpuSeconds: number; threads: ThreadCpu; loopDelayMeanMs: number; loopDelayP99Ms: number; loopDelayMaxMs: number }> {
  const text = await fetch(`http://127.0.0.1:${metricsPort}/metrics`).then((r) => r.text(), () => '');
  const ms = (name: string) => 1000 * Number(new RegExp(`^headroom_nodejs_eventloop_lag_${name}_seconds (\\S+)`, 'm').exec(text)?.[1] ?? NaN);
  return { cpuSeconds: cpuSeconds(pid), threads: threadCpuSeconds(pid), loopDelayMeanMs: ms('mean'), loopDelayP99Ms: ms('p99'), loopDelayMaxMs: ms('max') };
}

/** A process's CPU seconds by thread kind: its main thread, its worker threads (the solver pool), V8's helpers (GC), the rest. */
interface ThreadCpu { main: number; workers: number; v8: number; other: number }

/** Per-thread CPU from /proc/<pid>/task/<tid>/stat, grouped by the thread's name (Node names its threads). */
function threadCpuSeconds(pid: number): ThreadCpu {
  const out: ThreadCpu = { main: 0, workers: 0, v8: 0, other: 0 };
  let tids: string[] = [];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const tid of tids) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const seconds = statCpuSeconds(stat);
      const kind: keyof ThreadCpu = tid === String(pid) ? 'main' : name === 'WorkerThread' ? 'workers' : name.startsWith('V8') ? 'v8' : 'other';
      out[kind] += seconds;
    } catch {
      // the thread ended between the listing and the read
    }
  }
  return out;
}

/** The --profile-dir CPU profile's length: a scheduler round's pod creation and binding. */
const PROFILE_SECONDS = 20;
/** How long the webhook and extender are loaded after the controller resumes (covers the relist). */
const RELIST_LOAD_SECONDS = 30;
/**
 * kube-apiserver's etcd compaction period in this benchmark (default 5 min). The forced
 * 410 needs etcd's history to start after what the paused controller holds: without a
 * compaction a restarted apiserver whose watch cache is not yet ready can serve the old
 * resourceVersion from etcd, and that informer never sees 410 (seen for pods).
 */
const COMPACTION_S = 5;
/** How long the 410 phase waits for every informer to relist before reporting what it saw. */
const RELIST_WAIT_MS = 180_000;

/** `headroom_informer_relists_total` by resource, from the controller's /metrics. */
async function relistCounts(metricsPort: number, heap: number[] = []): Promise<Map<string, number>> {
  const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
  heap.push(heapFromMetrics(text));
  const out = new Map<string, number>();
  for (const m of text.matchAll(/^headroom_informer_relists_total\{resource="([^"]+)"\} (\d+)/gm)) out.set(m[1]!, Number(m[2]));
  return out;
}

/**
 * Forces `410 Gone` on every watch of the running controller, the way it happens in a
 * cluster: the controller is paused (SIGSTOP) while the cluster moves on (a pod is
 * created, kwok updates nodes) and kube-apiserver restarts, so the new apiserver's watch
 * cache starts after every resourceVersion the controller holds. Resumed (SIGCONT), its
 * watches come back from those, get 410, and its informers relist: the list-and-replace
 * path with the whole cluster. Measures the time until the pod and node informers, then
 * all of them, have relisted (from the relist counter), with autocannon on the webhook
 * and the extender from the moment it resumes, and the controller's RSS meanwhile.
 */
async function forcedRelist(cp: ControlPlane, client: KubeClient, pid: number, metricsPort: number, loads: Parameters<typeof load>[0][]) {
  const before = await relistCounts(metricsPort);
  process.kill(pid, 'SIGSTOP');
  let restart: { downMs: number; readyAfterMs: number };
  const pausedAt = Date.now();
  try {
    await client.request('POST', `/api/v1/namespaces/${LOAD_NS}/pods`, {
      body: { metadata: { name: 'relist-marker', namespace: LOAD_NS }, spec: { nodeName: 'load-0', containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.10' }] } },
    });
    // Two compaction periods: etcd's history now starts after everything the controller saw.
    await sleep(2.5 * COMPACTION_S * 1000);
    restart = await cp.restartCore('kube-apiserver', { downMs: 1000 });
  } finally {
    process.kill(pid, 'SIGCONT');
  }
  const resumed = Date.now();
  const rss: number[] = [];
  const heap: number[] = [];
  const rssTimer = setInterval(() => rss.push(rssMb(pid)), 1000);
  const during = Promise.all(loads.map((l) => load(l)));
  const relisted = (now: Map<string, number>, r: string) => (now.get(r) ?? 0) > (before.get(r) ?? 0);
  let podsAndNodes = NaN;
  let all = NaN;
  let counts = before;
  while (Date.now() - resumed < RELIST_WAIT_MS) {
    counts = await relistCounts(metricsPort, heap).catch(() => counts);
    const t = (Date.now() - resumed) / 1000;
    if (Number.isNaN(podsAndNodes) && relisted(counts, 'pods') && relisted(counts, 'nodes')) podsAndNodes = t;
    if ([...counts.keys()].every((r) => relisted(counts, r))) {
      all = t;
      break;
    }
    await sleep(200);
  }
  const [webhook, extender] = await during;
  clearInterval(rssTimer);
  return {
    pausedSeconds: (resumed - pausedAt) / 1000,
    apiReadyAfterKillSeconds: restart.readyAfterMs / 1000,
    podsAndNodesRelistedSeconds: podsAndNodes,
    allRelistedSeconds: all,
    informersRelisted: [...counts.keys()].filter((r) => relisted(counts, r)).length,
    informers: counts.size,
    webhook: webhook!,
    extender: extender!,
    rssPeakMb: Math.max(...rss),
    heapPeakMb: Math.max(...heap.filter((h) => !Number.isNaN(h))),
    after: await memoryParts(metricsPort),
  };
}

function print(r: Record<string, unknown>): void {
  const line = (label: string, l: LoadResult) =>
    `  ${label.padEnd(44)} ${String(l.requests).padStart(6)} req  p50 ${fmt(l.p50)} ms  p99 ${fmt(l.p99)} ms  max ${fmt(l.max)} ms  errors ${l.errors}  non-2xx ${l.non2xx}`;
  const c = r.config as Record<string, number>;
  const la = r.loadAverage as { start: number; end: number };
  console.log(`\nHeadroom scale benchmark: ${c.nodes} nodes, ${c.pods} pods, ${c.groups} node groups, burst ${c.burst} (total ${fmt(r.totalSeconds as number, 0)} s; load average ${fmt(la.start, 1)} -> ${fmt(la.end, 1)})`);
  console.log(`  phases: ${Object.entries(r.phaseSeconds as Record<string, number>).map(([k, v]) => `${k} ${fmt(v, 0)} s`).join(', ')}`);
  const s = r.setup as { nodeSeconds: number; podSeconds: number; settleSeconds: number; kwokPodWorkers: number };
  console.log(`  setup: nodes ${fmt(s.nodeSeconds, 0)} s, pods ${fmt(s.podSeconds, 0)} s, ${Number.isNaN(s.settleSeconds) ? `NOT all pods Running ${SETTLE_WAIT_MS / 1000} s later` : `then all pods Running ${fmt(s.settleSeconds, 0)} s later`} (kwok pod workers ${s.kwokPodWorkers})`);
  const f = r.duringFullList as { syncSeconds: number; webhook: LoadResult; extender: LoadResult };
  console.log(`  full list at start: controller ready after ${fmt(f.syncSeconds, 1)} s; meanwhile (50 req/s each):`);
  console.log(line('webhook /mutate/pods', f.webhook));
  console.log(line('extender /scheduler/filter (500 names)', f.extender));
  const b = r.burst as Record<string, number> & { running: number; pods: number; firstCreateToLastRunningSeconds: number; createSeconds: number; podToRunningP50: number; podToRunningP99: number; podToRunningMax: number; firstScaleAfterFirstPodSeconds: number; lastScaleAfterLastPodSeconds: number; fixtureBootDelaySeconds: number; podToBoundP50: number; boundToRunningP50: number };
  console.log(`  burst: ${b.running}/${b.pods} Running; first create -> last Running ${fmt(b.firstCreateToLastRunningSeconds, 1)} s (creating took ${fmt(b.createSeconds, 1)} s)`);
  console.log(`    per pod create -> Running: p50 ${fmt(b.podToRunningP50, 1)} s, p99 ${fmt(b.podToRunningP99, 1)} s, max ${fmt(b.podToRunningMax, 1)} s`);
  const tl = b.timeline as unknown as Record<string, { first: number; last: number; count: number }>;
  const step = (label: string, x: { first: number; last: number; count: number }) => `${label} ${fmt(x.first, 1)}-${fmt(x.last, 1)} s (${x.count})`;
  console.log(`    timeline after the first create, first-last (count): ${step('created', tl.created!)}; ${step('Headroom scaled up', tl.scaledUp!)}; ${step('Machines created', tl.machinesCreated!)}; ${step('Nodes Ready', tl.nodesReady!)}; ${step('pods bound', tl.podsBound!)}; ${step('pods Running', tl.podsRunning!)}`);
  console.log(`    per pod: create -> bound p50 ${fmt(b.podToBoundP50, 1)} s, bound -> Running p50 ${fmt(b.boundToRunningP50, 1)} s`);
  console.log(`    Headroom's share: first scale-up ${fmt(b.firstScaleAfterFirstPodSeconds, 1)} s after the first pod, last ${fmt(b.lastScaleAfterLastPodSeconds, 1)} s after the last pod (${b.scaleWrites} raises, ${b.replicas} replicas in ${b.groupsUsed} groups); fixture boot delay ${fmt(b.fixtureBootDelaySeconds, 1)} s`);
  const m = r.rss as { syncedMb: number; burstPeakMb: number; endMb: number; chartLimitMb: number; karpenterBoundMb: number; heapSyncedMb: number; heapBurstPeakMb: number; afterBurst: Record<string, number> };
  console.log(`  controller RSS: ${fmt(m.syncedMb, 0)} MB synced, ${fmt(m.burstPeakMb, 0)} MB peak in the burst, ${fmt(m.endMb, 0)} MB at the end; chart limit ${m.chartLimitMb} MB; Karpenter's bound ${m.karpenterBoundMb} MB (at 1,000 pods)`);
  console.log(`  controller V8 heap in use: ${fmt(m.heapSyncedMb, 0)} MB synced, ${fmt(m.heapBurstPeakMb, 0)} MB peak in the burst (sampled every 5 s)`);
  console.log(`  after the burst, MB: ${Object.entries(m.afterBurst).map(([k, v]) => `${k} ${v}`).join(', ')}`);
  const ml = r.memoryLimit as { cgroup: string; limitMb?: number; peakMb?: number; limitHits?: number; oomKills?: number; controllerAlive?: boolean };
  console.log(ml.peakMb === undefined
    ? `  memory limit: ${ml.cgroup}`
    : `  memory limit (${ml.cgroup}): peak ${fmt(ml.peakMb, 0)} MB of ${ml.limitMb} MB (${fmt((100 * ml.peakMb) / ml.limitMb!, 0)}%), limit hit ${ml.limitHits} times, OOM kills ${ml.oomKills}, controller ${ml.controllerAlive ? 'alive at the end' : 'DIED'}`);
  const e = r.extender as Record<string, LoadResult>;
  console.log(line('extender filter, 500 names, 1 connection', e.filter500Names1Conn!));
  console.log(line('extender prioritize, 500 names, 1 connection', e.prioritize500Names1Conn!));
  console.log(line(`extender filter, all ${c.nodes} names, 1 connection`, e.filterAllNames1Conn!));
  console.log(line('extender filter, 500 names, 4 connections', e.filter500Names4Conn!));
  const k = r.scheduler as { podsPerRun: number; headroom: number[]; floor: number[]; ratio: number; costs: Record<'headroom' | 'floor', RoundCost[]> };
  console.log(`  kube-scheduler, ${k.podsPerRun} pods per run: Headroom extender ${fmt(median(k.headroom), 1)} pods/s (${k.headroom.map((x) => fmt(x, 1)).join(', ')}), do-nothing extender ${fmt(median(k.floor), 1)} pods/s (${k.floor.map((x) => fmt(x, 1)).join(', ')}), ratio ${fmt(k.ratio, 2)}`);
  for (const kind of ['headroom', 'floor'] as const) {
    const c = k.costs[kind];
    const m = (f: (x: RoundCost) => number, d = 2) => fmt(median(c.map(f)), d);
    console.log(`    ${kind === 'headroom' ? 'Headroom rounds  ' : 'do-nothing rounds'} (medians): controller ${m((x) => x.controllerCpuMsPerPod)} CPU-ms/pod (main thread ${m((x) => x.controllerThreadsCpuMsPerPod.main)}, solver workers ${m((x) => x.controllerThreadsCpuMsPerPod.workers)}, V8 helpers ${m((x) => x.controllerThreadsCpuMsPerPod.v8)})${kind === 'floor' ? `, the do-nothing extender's process ${m((x) => x.floorProcessCpuMsPerPod ?? NaN)}` : ''}, kube-scheduler ${m((x) => x.schedulerCpuMsPerPod)} CPU-ms/pod; controller event-loop delay mean ${m((x) => x.loopDelayMeanMs)} ms, p99 ${m((x) => x.loopDelayP99Ms)} ms, max ${m((x) => x.loopDelayMaxMs, 0)} ms`);
  }
  const g = r.relist410 as { pausedSeconds: number; apiReadyAfterKillSeconds: number; podsAndNodesRelistedSeconds: number; allRelistedSeconds: number; informersRelisted: number; informers: number; webhook: LoadResult; extender: LoadResult; rssPeakMb: number; heapPeakMb: number; after: Record<string, number> };
  console.log(`  forced 410 Gone: controller paused ${fmt(g.pausedSeconds, 1)} s (kube-apiserver restarted, ready ${fmt(g.apiReadyAfterKillSeconds, 1)} s after the kill); after it resumed, pods and nodes relisted in ${fmt(g.podsAndNodesRelistedSeconds, 1)} s, all ${g.informersRelisted}/${g.informers} informers in ${fmt(g.allRelistedSeconds, 1)} s; RSS peak ${fmt(g.rssPeakMb, 0)} MB, heap peak ${fmt(g.heapPeakMb, 0)} MB; after it, MB: ${Object.entries(g.after).map(([k, v]) => `${k} ${v}`).join(', ')}; meanwhile (50 req/s each, ${RELIST_LOAD_SECONDS} s):`);
  console.log(line('webhook /mutate/pods', g.webhook));
  console.log(line('extender /scheduler/filter (500 names)', g.extender));
}

await main();
