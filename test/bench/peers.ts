/**
 * `npm run bench:peers -- --cluster-autoscaler PATH [--runs 5] [--scenario a,b] [--setup a,b]
 *   [--boot short|jittered|both] [--daemonset true|false|both] [--out DIR]`: Headroom beside
 * the real Cluster Autoscaler (issue 28; docs/comparison.md has the figures). Not part of
 * `npm test`.
 *
 * Every run has its own fresh control plane (etcd, kube-apiserver, kube-scheduler,
 * kube-controller-manager, kwok, the real Cluster API manager v1.14 with the kwok
 * provider as its cloud: test/harness), and one autoscaler: Headroom's controller (in
 * this process, as the integration tests start it) or Cluster Autoscaler 1.36.1 with
 * its clusterapi provider (PATH, built by test/harness/build-cluster-autoscaler.sh) in
 * one of the setups of peers-setups.ts. The scenario (peers-scenarios.ts) is played
 * against its node groups (MachineDeployments from 0, priced per cpu), with a 100m
 * kube-proxy-like DaemonSet on every node unless --daemonset false.
 *
 * What happened is read from watches (pods, nodes, MachineDeployments), not polling;
 * peers-metrics.ts turns it into time to Running, pending pod-seconds, nodes, cost over
 * the scenario's fixed window, steady-state $/h, evictions and time to scale down. Runs
 * are interleaved: round r plays every scenario x boot x setup (setups in an order
 * rotated each round) before round r+1. Each finished run is appended to
 * DIR/runs.jsonl at once (a run that crashes later loses nothing); at the end the
 * summary (medians, ranges) and every run are printed as Markdown tables.
 */
import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Watch, type KubeConfig, type V1Node, type V1Pod } from '@kubernetes/client-node';
import { Registry } from 'prom-client';
import { Controller } from '../../src/controller/controller.js';
import { KubeClient } from '../../src/kube/kube-client.js';
import {
  CPU_ANNOTATION, LABELS_ANNOTATION, MAX_PODS_ANNOTATION, MAX_SIZE_ANNOTATION, MEMORY_ANNOTATION, MIN_SIZE_ANNOTATION, PRICE_ANNOTATION, ZONE_LABEL,
} from '../../src/api/capacity-annotations.js';
import { startControlPlane, type ControlPlane } from '../harness/control-plane.js';
import { kubeRequest } from '../harness/kube-request.js';
import { INSTANCE_TYPE_LABEL, KWOK_BOOTSTRAP_SECRET, KWOK_INFRA_GROUP, KWOK_PROVIDER_VERSION, KwokProvider, kwokNodeSelector } from '../harness/kwok-provider.js';
import { freePort } from '../harness/ports.js';
import { ManagedProcess } from '../harness/process.js';
import { createMany } from './create-many.js';
import { runMetrics, runsTable, summarize, summaryTable, type NodeRecord, type PodRecord, type RunResult } from './peers-metrics.js';
import { BOOT_PROFILES, SCENARIOS, bootDelayMs, finalDelete, groupPrice, lastCreateAt, type BootProfile, type PeerGroup, type Scenario, type Step } from './peers-scenarios.js';
import { SETUPS, caArgs, type Setup } from './peers-setups.js';

const { values } = parseArgs({
  options: {
    'cluster-autoscaler': { type: 'string' },
    karpenter: { type: 'string' },
    runs: { type: 'string', default: '5' },
    scenario: { type: 'string' },
    setup: { type: 'string' },
    boot: { type: 'string', default: 'short' },
    daemonset: { type: 'string', default: 'true' },
    out: { type: 'string', default: 'bench-peers' },
  },
});

const fail = (m: string): never => {
  console.error(`bench:peers: ${m}`);
  process.exit(2);
};
if (values.karpenter !== undefined) {
  fail('--karpenter: Karpenter has no Cluster API provider to run on this harness (its kwok provider makes Nodes itself, not MachineDeployments); docs/comparison.md says more');
}
const RUNS = Number(values.runs);
if (!Number.isInteger(RUNS) || RUNS < 1) fail(`--runs takes a whole number from 1, got "${values.runs}"`);
const pick = <T extends { name: string }>(all: readonly T[], list: string | undefined, flag: string): T[] => {
  if (list === undefined) return [...all];
  const names = list.split(',').map((s) => s.trim()).filter(Boolean);
  for (const n of names) if (!all.some((x) => x.name === n)) fail(`--${flag}: no ${flag} "${n}" (one of ${all.map((x) => x.name).join(', ')})`);
  return all.filter((x) => names.includes(x.name));
};
const scenarios = pick(SCENARIOS, values.scenario, 'scenario');
const setups = pick(SETUPS, values.setup, 'setup');
const boots = values.boot === 'both' ? [...BOOT_PROFILES] : pick(BOOT_PROFILES, values.boot, 'boot');
const daemonsets = values.daemonset === 'both' ? [true, false] : values.daemonset === 'true' ? [true] : values.daemonset === 'false' ? [false] : fail(`--daemonset takes true, false or both, got "${values.daemonset}"`);
const CA_PATH = values['cluster-autoscaler'];
if (setups.some((s) => s.caFlags) && !CA_PATH) fail('--cluster-autoscaler PATH is required (test/harness/build-cluster-autoscaler.sh prints it), or --setup headroom');
const OUT = values.out!;
mkdirSync(OUT, { recursive: true });

const NS = 'peers';
const CLUSTER = 'bench';
const SET_LABEL = 'bench.headroom.dev/set';
const CAPI = 'cluster.x-k8s.io/v1beta2';
const INFRA = `${KWOK_INFRA_GROUP}/${KWOK_PROVIDER_VERSION}`;
/** Both autoscalers get this long after they are up before the scenario starts. */
const WARM_UP_MS = 15_000;
const t0 = Date.now();
const progress = (m: string) => console.error(`[peers ${((Date.now() - t0) / 1000).toFixed(0)}s] ${m}`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Watches `path` from now on (ADDED for what exists first), calling `on` with receipt times; reconnects until stopped. */
async function watch<T>(kc: KubeConfig, path: string, on: (type: string, obj: T, atMs: number) => void): Promise<() => void> {
  let stopped = false;
  let current: { abort(): void } | undefined;
  const start = async (): Promise<void> => {
    if (stopped) return;
    current = await new Watch(kc).watch(path, { allowWatchBookmarks: true }, (type: string, obj: T) => on(type, obj, Date.now()), () => {
      if (!stopped) setTimeout(() => void start().catch(() => undefined), 200);
    });
  };
  await start();
  return () => {
    stopped = true;
    current?.abort();
  };
}

interface PodState {
  name: string;
  set: string;
  owner: 'bare' | 'deployment' | 'job';
  createdMs: number;
  runningMs?: number;
  goneMs?: number;
  evicted?: boolean;
}

/** What the watches saw in one run. */
class Recorder {
  readonly pods = new Map<string, PodState>();
  readonly nodes = new Map<string, { name: string; group: string; createdMs: number; goneMs?: number }>();
  /** Sets (pod sets, Deployments, CronJobs) the scenario has deleted. */
  readonly deleted = new Set<string>();
  /** A Deployment's desired replicas as the HPA-like writer last set them. */
  readonly desired = new Map<string, number>();
  private readonly mdReplicas = new Map<string, number>();
  firstScaleUpMs: number | undefined;
  startMs = Infinity;

  onPod(type: string, p: V1Pod, at: number): void {
    const name = p.metadata?.name;
    if (!name) return;
    const ownerKind = p.metadata?.ownerReferences?.[0]?.kind;
    if (ownerKind === 'DaemonSet') return;
    let s = this.pods.get(name);
    if (!s) {
      if (type === 'DELETED') return;
      const set = p.metadata?.labels?.[SET_LABEL] ?? '?';
      s = { name, set, owner: ownerKind === 'ReplicaSet' ? 'deployment' : ownerKind === 'Job' ? 'job' : 'bare', createdMs: at };
      this.pods.set(name, s);
    }
    const phase = p.status?.phase;
    if (s.runningMs === undefined && (phase === 'Running' || phase === 'Succeeded')) s.runningMs = at;
    if (s.goneMs === undefined && (type === 'DELETED' || p.metadata?.deletionTimestamp)) {
      s.goneMs = at;
      s.evicted = this.isEviction(s, phase);
    }
  }

  /** A pod going away that the scenario did not ask for. */
  private isEviction(s: PodState, phase: string | undefined): boolean {
    if (this.deleted.has(s.set)) return false;
    if (s.owner === 'bare') return true;
    if (s.owner === 'job') return phase !== 'Succeeded' && phase !== 'Failed';
    // A Deployment's pod: evicted when, counting it, the Deployment did not have more live pods than it wanted.
    const live = [...this.pods.values()].filter((x) => x.set === s.set && (x.goneMs === undefined || x === s)).length;
    return live <= (this.desired.get(s.set) ?? 0);
  }

  onNode(type: string, n: V1Node, at: number): void {
    const name = n.metadata?.name;
    if (!name) return;
    let s = this.nodes.get(name);
    if (!s) {
      if (type === 'DELETED') return;
      s = { name, group: n.metadata?.labels?.[INSTANCE_TYPE_LABEL] ?? '?', createdMs: at };
      this.nodes.set(name, s);
    }
    if (s.goneMs === undefined && (type === 'DELETED' || n.metadata?.deletionTimestamp)) s.goneMs = at;
  }

  onMachineDeployment(_type: string, md: { metadata?: { name?: string }; spec?: { replicas?: number } }, at: number): void {
    const name = md.metadata?.name ?? '';
    const replicas = md.spec?.replicas ?? 0;
    const before = this.mdReplicas.get(name);
    if (before !== undefined && replicas > before && at >= this.startMs && this.firstScaleUpMs === undefined) this.firstScaleUpMs = at;
    this.mdReplicas.set(name, replicas);
  }

  workloadPods(): PodState[] {
    return [...this.pods.values()];
  }
  nodesUp(): number {
    return [...this.nodes.values()].filter((n) => n.goneMs === undefined).length;
  }
}

const template = (g: PeerGroup) => ({
  apiVersion: INFRA, kind: 'KwokMachineTemplate', metadata: { name: g.name, namespace: NS },
  spec: { template: { spec: { capacity: { cpu: String(g.cpu), memory: `${g.memoryGi}Gi`, pods: '110' } } } },
});

/** A node group: a MachineDeployment from 0 with the capacity annotations both autoscalers read, and Headroom's price. */
const machineDeployment = (g: PeerGroup) => ({
  apiVersion: CAPI, kind: 'MachineDeployment',
  metadata: {
    name: g.name, namespace: NS,
    annotations: {
      [MIN_SIZE_ANNOTATION]: '0', [MAX_SIZE_ANNOTATION]: String(g.maxSize),
      [CPU_ANNOTATION]: String(g.cpu), [MEMORY_ANNOTATION]: `${g.memoryGi}Gi`, [MAX_PODS_ANNOTATION]: '110',
      [PRICE_ANNOTATION]: groupPrice(g).toFixed(4),
      ...(g.zone ? { [LABELS_ANNOTATION]: `${ZONE_LABEL}=${g.zone}` } : {}),
    },
  },
  spec: {
    clusterName: CLUSTER, replicas: 0,
    selector: { matchLabels: { 'cluster.x-k8s.io/deployment-name': g.name } },
    template: {
      metadata: { labels: { 'cluster.x-k8s.io/deployment-name': g.name } },
      spec: {
        clusterName: CLUSTER,
        bootstrap: { dataSecretName: KWOK_BOOTSTRAP_SECRET },
        infrastructureRef: { apiGroup: KWOK_INFRA_GROUP, kind: 'KwokMachineTemplate', name: g.name },
        ...(g.zone ? { failureDomain: g.zone } : {}),
      },
    },
  },
});

/** A kube-proxy-like DaemonSet: one 100m/64Mi pod on every node. */
const kubeProxy = {
  apiVersion: 'apps/v1', kind: 'DaemonSet', metadata: { name: 'kube-proxy', namespace: NS },
  spec: {
    selector: { matchLabels: { app: 'kube-proxy' } },
    template: {
      metadata: { labels: { app: 'kube-proxy' } },
      spec: {
        tolerations: [{ operator: 'Exists' }],
        priorityClassName: 'system-node-critical',
        containers: [{ name: 'kube-proxy', image: 'registry.k8s.io/pause:3.10', resources: { requests: { cpu: '100m', memory: '64Mi' } } }],
      },
    },
  },
};

const podSpec = (cpu: string, memory: string) => ({
  containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.10', resources: { requests: { cpu, memory } } }],
  terminationGracePeriodSeconds: 0,
});

/** Plays one step. */
async function play(step: Step, kc: KubeConfig, client: KubeClient, rec: Recorder): Promise<void> {
  switch (step.kind) {
    case 'pods': {
      const spread = step.spreadZones
        ? { topologySpreadConstraints: [{ maxSkew: 1, topologyKey: ZONE_LABEL, whenUnsatisfiable: 'DoNotSchedule', labelSelector: { matchLabels: { [SET_LABEL]: step.name } } }] }
        : {};
      const pods = Array.from({ length: step.count }, (_, i) => ({
        apiVersion: 'v1', kind: 'Pod', metadata: { name: `${step.name}-${i}`, namespace: NS, labels: { [SET_LABEL]: step.name } },
        spec: { ...podSpec(step.cpu, step.memory), ...spread },
      }));
      await createMany(pods, (body) => client.request('POST', `/api/v1/namespaces/${NS}/pods`, { body }), { concurrency: 16 });
      return;
    }
    case 'delete': {
      rec.deleted.add(step.name);
      const sel = encodeURIComponent(`${SET_LABEL}=${step.name}`);
      await Promise.all([
        kubeRequest(kc, 'DELETE', `/apis/apps/v1/namespaces/${NS}/deployments/${step.name}`).catch(() => undefined),
        kubeRequest(kc, 'DELETE', `/apis/batch/v1/namespaces/${NS}/cronjobs/${step.name}`).catch(() => undefined),
      ]);
      await kubeRequest(kc, 'DELETE', `/api/v1/namespaces/${NS}/pods?labelSelector=${sel}`);
      return;
    }
    case 'replicas': {
      const had = rec.desired.has(step.name);
      rec.desired.set(step.name, step.replicas);
      if (had) {
        await kubeRequest(kc, 'PATCH', `/apis/apps/v1/namespaces/${NS}/deployments/${step.name}`, { spec: { replicas: step.replicas } });
        return;
      }
      await kubeRequest(kc, 'POST', `/apis/apps/v1/namespaces/${NS}/deployments`, {
        apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: step.name, namespace: NS },
        spec: {
          replicas: step.replicas,
          selector: { matchLabels: { [SET_LABEL]: step.name } },
          template: { metadata: { labels: { [SET_LABEL]: step.name } }, spec: podSpec(step.cpu, step.memory) },
        },
      });
      return;
    }
    case 'cronjob': {
      await kubeRequest(kc, 'POST', `/apis/batch/v1/namespaces/${NS}/cronjobs`, {
        apiVersion: 'batch/v1', kind: 'CronJob', metadata: { name: step.name, namespace: NS },
        spec: {
          schedule: step.schedule,
          jobTemplate: {
            spec: {
              parallelism: step.parallelism, completions: step.parallelism,
              template: { metadata: { labels: { [SET_LABEL]: step.name } }, spec: { ...podSpec(step.cpu, step.memory), restartPolicy: 'Never' } },
            },
          },
        },
      });
    }
  }
}

interface Autoscaler {
  stop(): Promise<void>;
  /** Why it is not running any more, if it exited. */
  exited(): string | undefined;
}

async function startAutoscaler(setup: Setup, cp: ControlPlane, kc: KubeConfig, logDir: string, bootHorizonMs: number): Promise<Autoscaler> {
  if (!setup.caFlags) {
    const lines: string[] = [];
    const c = new Controller({
      workload: kc,
      discovery: [{ namespace: NS, labels: {} }],
      workloadScope: { namespace: NS, nodeLabelSelector: kwokNodeSelector({ namespace: NS }) },
      registry: new Registry(),
      log: (m) => lines.push(`${new Date().toISOString()} ${m}`),
      // Scoped to a namespace the disruption loop is off unless given: its defaults, as the CLI's.
      disruption: {},
      prediction: { defaultBootHorizonMs: bootHorizonMs },
    });
    await c.start();
    return {
      stop: async () => {
        await c.stop();
        writeFileSync(join(logDir, 'headroom.log'), lines.join('\n') + '\n');
      },
      exited: () => undefined,
    };
  }
  const metricsPort = await freePort();
  const args = caArgs({ kubeconfig: cp.kubeconfigPath, namespace: NS, metricsPort }, setup);
  const p = ManagedProcess.start('cluster-autoscaler', CA_PATH!, args, { logFile: join(logDir, 'cluster-autoscaler.log') });
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (!p.running) throw new Error(`cluster-autoscaler exited at start; see ${join(logDir, 'cluster-autoscaler.log')}`);
    const ok = await fetch(`http://127.0.0.1:${metricsPort}/health-check`).then((r) => r.status === 200, () => false);
    if (ok) break;
    if (Date.now() > deadline) throw new Error('cluster-autoscaler: /health-check not 200 after 60 s');
    await sleep(500);
  }
  return { stop: () => p.stop(), exited: () => (p.running ? undefined : 'cluster-autoscaler exited during the run') };
}

/** One run: a fresh control plane, one autoscaler, one scenario. */
async function runOne(scenario: Scenario, setup: Setup, boot: BootProfile, daemonset: boolean, round: number): Promise<RunResult> {
  const label = `${scenario.name}/${boot.name}${daemonset ? '' : '/no-ds'}/${setup.name} round ${round}`;
  const runDir = join(OUT, 'logs', `${round}-${scenario.name}-${boot.name}${daemonset ? '' : '-nods'}-${setup.name}`);
  mkdirSync(runDir, { recursive: true });
  progress(`${label}: control plane`);
  const cp = await startControlPlane({ scheduler: true, controllerManager: true, kwok: true, clusterApi: true });
  const kc = cp.kubeConfig();
  const client = new KubeClient(kc);
  const stops: Array<() => void | Promise<void>> = [];
  let autoscaler: Autoscaler | undefined;
  let note: string | undefined;
  const rec = new Recorder();
  try {
    await kubeRequest(kc, 'POST', '/api/v1/namespaces', { metadata: { name: NS } });
    const seed = round * 7919 + scenario.name.length;
    const provider = await KwokProvider.start({
      kubeConfig: kc, namespace: NS, intervalMs: 200, workloadKubeconfig: readFileSync(cp.kubeconfigPath, 'utf8'),
      bootDelayMs: boot.name === 'short' ? boot.ms : boot.minMs,
      bootDelayFor: (machine) => bootDelayMs(boot, machine, seed),
    });
    stops.push(() => provider.stop());
    await provider.createCluster(CLUSTER);
    for (const g of scenario.groups) {
      await kubeRequest(kc, 'POST', `/apis/${INFRA}/namespaces/${NS}/kwokmachinetemplates`, template(g));
      await kubeRequest(kc, 'POST', `/apis/cluster.x-k8s.io/v1beta2/namespaces/${NS}/machinedeployments`, machineDeployment(g));
    }
    if (daemonset) await kubeRequest(kc, 'POST', `/apis/apps/v1/namespaces/${NS}/daemonsets`, kubeProxy);
    stops.push(await watch<V1Pod>(kc, `/api/v1/namespaces/${NS}/pods`, (t, o, at) => rec.onPod(t, o, at)));
    stops.push(await watch<V1Node>(kc, `/api/v1/nodes?labelSelector=${encodeURIComponent(kwokNodeSelector({ namespace: NS }))}`, (t, o, at) => rec.onNode(t, o, at)));
    stops.push(await watch<{ metadata?: { name?: string }; spec?: { replicas?: number } }>(kc, `/apis/cluster.x-k8s.io/v1beta2/namespaces/${NS}/machinedeployments`, (t, o, at) => rec.onMachineDeployment(t, o, at)));
    progress(`${label}: starting ${setup.name}`);
    const horizon = boot.name === 'short' ? boot.ms : (boot.minMs + boot.maxMs) / 2;
    autoscaler = await startAutoscaler(setup, cp, kc, runDir, horizon);
    await sleep(WARM_UP_MS);

    // The scenario: steps at their times; a delete step also waits for its pods to have run.
    const startMs = Date.now();
    rec.startMs = startMs;
    let demandGoneMs: number | undefined;
    const last = finalDelete(scenario);
    const settleDeadline = startMs + (lastCreateAt(scenario) + scenario.settleS) * 1000;
    const allRan = () => rec.workloadPods().length > 0 && rec.workloadPods().every((p) => p.runningMs !== undefined || p.goneMs !== undefined);
    for (const step of scenario.steps) {
      const due = startMs + step.at * 1000;
      while (Date.now() < due) await sleep(Math.min(1000, due - Date.now()));
      if (step.kind === 'delete') {
        while (!rec.workloadPods().filter((p) => p.set === step.name).every((p) => p.runningMs !== undefined) && Date.now() < settleDeadline) await sleep(500);
      }
      await play(step, kc, client, rec);
      if (step === last) demandGoneMs = Date.now();
      progress(`${label}: ${step.kind} ${step.name} at ${((Date.now() - startMs) / 1000).toFixed(0)} s`);
    }
    // Then: every pod has run (or the settle cap), the window and the scenario's duration are over, and after demand went away the nodes are gone (or the cap).
    const windowEnd = startMs + scenario.windowS * 1000;
    const durationEnd = startMs + (scenario.durationS ?? 0) * 1000;
    const scaleDownEnd = demandGoneMs === undefined ? 0 : demandGoneMs + (scenario.scaleDownS ?? 0) * 1000;
    let lastLog = 0;
    for (;;) {
      const now = Date.now();
      const ran = demandGoneMs !== undefined || allRan() || now > settleDeadline;
      const down = demandGoneMs === undefined || rec.nodesUp() === 0 || now > scaleDownEnd;
      if (ran && down && now >= windowEnd && now >= durationEnd) break;
      const why = autoscaler.exited();
      if (why) {
        note = why;
        break;
      }
      if (now - lastLog > 30_000) {
        lastLog = now;
        const pods = rec.workloadPods();
        progress(`${label}: ${((now - startMs) / 1000).toFixed(0)} s, ${pods.filter((p) => p.runningMs !== undefined).length}/${pods.length} pods ran, ${rec.nodesUp()} nodes up`);
      }
      await sleep(500);
    }
    const endMs = Date.now();
    const pods: PodRecord[] = rec.workloadPods().map((p) => ({ name: p.name, createdMs: p.createdMs, ...(p.runningMs !== undefined ? { runningMs: p.runningMs } : {}), ...(p.goneMs !== undefined ? { goneMs: p.goneMs } : {}), ...(p.evicted ? { evicted: true } : {}) }));
    const nodes: NodeRecord[] = [...rec.nodes.values()].map((n) => ({ ...n }));
    const prices = Object.fromEntries(scenario.groups.map((g) => [g.name, groupPrice(g)]));
    const metrics = runMetrics({
      startMs, endMs, windowS: scenario.windowS, prices, pods, nodes,
      ...(rec.firstScaleUpMs !== undefined ? { firstScaleUpMs: rec.firstScaleUpMs } : {}),
      ...(demandGoneMs !== undefined ? { demandGoneMs } : {}),
      continuous: scenario.durationS !== undefined,
    });
    if (!note && metrics.podsRan < metrics.pods && demandGoneMs === undefined && scenario.durationS === undefined) note = `${metrics.pods - metrics.podsRan} pods never Running within ${scenario.settleS} s`;
    if (!note && demandGoneMs !== undefined && metrics.nodesLeft > 0) note = `${metrics.nodesLeft} nodes still up ${scenario.scaleDownS} s after demand went away`;
    writeFileSync(join(runDir, 'observations.json'), JSON.stringify({ startMs, endMs, demandGoneMs, firstScaleUpMs: rec.firstScaleUpMs, pods, nodes }, null, 1));
    return { scenario: scenario.name, setup: setup.name, boot: `${boot.name}${daemonset ? '' : ', no DaemonSet'}`, round, metrics, ...(note ? { note } : {}) };
  } finally {
    for (const s of stops.reverse()) await Promise.resolve(s()).catch(() => undefined);
    await autoscaler?.stop().catch(() => undefined);
    client.close();
    await cp.stop();
  }
}

async function main(): Promise<void> {
  const results: RunResult[] = [];
  const jsonl = join(OUT, 'runs.jsonl');
  progress(`${RUNS} rounds x ${scenarios.length} scenarios x ${boots.length} boots x ${daemonsets.length} DaemonSet settings x ${setups.length} setups; runs appended to ${jsonl}`);
  for (let round = 1; round <= RUNS; round++) {
    for (const scenario of scenarios) {
      for (const boot of boots) {
        for (const ds of daemonsets) {
          // Rotate the setup order each round: no setup always runs first (or last) on a machine whose load drifts.
          const order = setups.map((_, i) => setups[(i + round - 1) % setups.length]!);
          for (const setup of order) {
            let r: RunResult;
            try {
              r = await runOne(scenario, setup, boot, ds, round);
            } catch (err) {
              progress(`${scenario.name}/${setup.name} round ${round} FAILED: ${(err as Error).stack ?? String(err)}`);
              appendFileSync(jsonl, `${JSON.stringify({ scenario: scenario.name, setup: setup.name, boot: boot.name, daemonset: ds, round, error: (err as Error).message })}\n`);
              continue;
            }
            results.push(r);
            appendFileSync(jsonl, `${JSON.stringify({ ...r, daemonset: ds, at: new Date().toISOString() })}\n`);
            const m = r.metrics;
            progress(`${scenario.name}/${r.boot}/${setup.name} round ${round}: ${m.podsRan}/${m.pods} ran, p50 ${m.toRunningP50S.toFixed(1)} s, last ${m.toRunningLastS.toFixed(1)} s, ${m.nodesCreated} nodes, $${m.costWindow.toFixed(3)}, scale-down ${m.scaleDownS.toFixed(0)} s${r.note ? ` (${r.note})` : ''}`);
          }
        }
      }
    }
  }
  const out = `## Summary (median (min–max) over runs)\n\n${summaryTable(summarize(results))}\n\n## Every run\n\n${runsTable(results)}\n`;
  writeFileSync(join(OUT, 'tables.md'), out);
  console.log(out);
}

await main();
