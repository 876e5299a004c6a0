/**
 * `npm run bench:peers -- [--cluster-autoscaler PATH] [--runs 1] [--scenario a,b] [--setup a,b]
 *   [--boot short|jittered|both] [--daemonset true|false|both] [--lanes 3] [--jobs N] [--out DIR]`
 * (`--help`: peers-cli.ts): Headroom beside the real Cluster Autoscaler (issue 28;
 * docs/comparison.md has the figures). Not part of `npm test`.
 *
 * A run is one scenario with one autoscaler: Headroom's controller (as the integration
 * tests start it) or Cluster Autoscaler 1.36.1 with its clusterapi provider (PATH, built
 * by test/harness/build-cluster-autoscaler.sh) in one of the setups of peers-setups.ts,
 * against a real control plane (etcd, kube-apiserver, kube-scheduler,
 * kube-controller-manager, kwok, the real Cluster API manager v1.14 with the kwok
 * provider as its cloud: test/harness). The scenario (peers-scenarios.ts) is played
 * against its node groups (MachineDeployments from 0, priced per cpu), with a 100m
 * kube-proxy-like DaemonSet on every node unless --daemonset false.
 *
 * Lanes: the scenarios are split into --lanes groups of about equal length
 * (peers-scenarios.ts lanes()). A lane is a worker process (this file, forked) with one
 * control plane, playing its scenarios one after another, each in a namespace of its
 * own with a freshly started autoscaler, and the namespace emptied (workload gone,
 * Machines gone) before the next. Every setup plays the same lanes, side by side: a
 * round is setups x lanes workers, at most --jobs at once, so no setup always runs
 * first or last on a machine whose load drifts. Each worker has its own event loop:
 * Headroom's solver never delays the watches that time another run.
 *
 * What happened is read from watches (pods, nodes, MachineDeployments), not polling;
 * peers-metrics.ts turns it into time to Running, pending pod-seconds, nodes, cost over
 * the scenario's fixed window, steady-state $/h, evictions and time to scale down. Each
 * finished run is appended to DIR/runs.jsonl at once (a run that crashes later loses
 * nothing); at the end the summary (medians, ranges) and every run are printed as
 * Markdown tables, with the wall time.
 */
import { fork } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Watch, type KubeConfig, type V1Node, type V1Pod } from '@kubernetes/client-node';
import { Registry } from 'prom-client';
import { Controller } from '../../src/controller/controller.js';
import { KubeClient } from '../../src/kube/kube-client.js';
import {
  CPU_ANNOTATION, GPU_COUNT_ANNOTATION, GPU_TYPE_ANNOTATION, LABELS_ANNOTATION, MAX_PODS_ANNOTATION, MAX_SIZE_ANNOTATION, MEMORY_ANNOTATION, MIN_SIZE_ANNOTATION, PRICE_ANNOTATION, ZONE_LABEL,
} from '../../src/api/capacity-annotations.js';
import { startControlPlane, type ControlPlane } from '../harness/control-plane.js';
import { kubeRequest } from '../harness/kube-request.js';
import { INSTANCE_TYPE_LABEL, KWOK_BOOTSTRAP_SECRET, KWOK_INFRA_GROUP, KWOK_PROVIDER_VERSION, KwokProvider, kwokNodeSelector } from '../harness/kwok-provider.js';
import { freePort } from '../harness/ports.js';
import { ManagedProcess } from '../harness/process.js';
import { createMany } from './create-many.js';
import { runMetrics, runsTable, summarize, summaryTable, type NodeRecord, type PodRecord, type RunResult } from './peers-metrics.js';
import { parsePeersArgs, USAGE } from './peers-cli.js';
import { BOOT_PROFILES, GPU_RESOURCE, SCENARIOS, podResources, WARM_UP_S, bootDelayMs, finalDelete, groupPrice, lanes, lastCreateAt, runCapS, type BootProfile, type PeerGroup, type Scenario, type Step } from './peers-scenarios.js';
import { SETUPS, caArgs, type Setup } from './peers-setups.js';

const CLUSTER = 'bench';
const SET_LABEL = 'bench.headroom.dev/set';
const CAPI = 'cluster.x-k8s.io/v1beta2';
const INFRA = `${KWOK_INFRA_GROUP}/${KWOK_PROVIDER_VERSION}`;
/** Both autoscalers get this long after they are up before the scenario starts. */
const WARM_UP_MS = WARM_UP_S * 1000;
/** A worker's lane, given in this environment variable (JSON LaneSpec). */
const LANE_ENV = 'HEADROOM_BENCH_PEERS_LANE';
const t0 = Date.now();
let who = 'peers';
const progress = (m: string) => console.error(`[${who} ${((Date.now() - t0) / 1000).toFixed(0)}s] ${m}`);
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
  preempted?: boolean;
}

/** kube-scheduler marks a pod it preempts DisruptionTarget (reason PreemptionByScheduler) before it deletes it. */
const preemptedByScheduler = (p: V1Pod) => (p.status?.conditions ?? []).some((c) => c.type === 'DisruptionTarget' && c.status === 'True' && c.reason === 'PreemptionByScheduler');

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
    // The condition may come with the deletion or just before it (a MODIFIED event).
    if (s.goneMs !== undefined && !s.preempted && preemptedByScheduler(p) && !this.deleted.has(s.set)) {
      s.preempted = true;
      s.evicted = false;
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

const template = (g: PeerGroup, ns: string) => ({
  apiVersion: INFRA, kind: 'KwokMachineTemplate', metadata: { name: g.name, namespace: ns },
  spec: { template: { spec: { capacity: { cpu: String(g.cpu), memory: `${g.memoryGi}Gi`, pods: '110', ...(g.gpus ? { [GPU_RESOURCE]: String(g.gpus) } : {}) } } } },
});

/** A node group: a MachineDeployment from 0 with the capacity annotations both autoscalers read, and Headroom's price. */
const machineDeployment = (g: PeerGroup, ns: string) => ({
  apiVersion: CAPI, kind: 'MachineDeployment',
  metadata: {
    name: g.name, namespace: ns,
    annotations: {
      [MIN_SIZE_ANNOTATION]: '0', [MAX_SIZE_ANNOTATION]: String(g.maxSize),
      [CPU_ANNOTATION]: String(g.cpu), [MEMORY_ANNOTATION]: `${g.memoryGi}Gi`, [MAX_PODS_ANNOTATION]: '110',
      [PRICE_ANNOTATION]: groupPrice(g).toFixed(4),
      ...(g.zone ? { [LABELS_ANNOTATION]: `${ZONE_LABEL}=${g.zone}` } : {}),
      ...(g.gpus ? { [GPU_TYPE_ANNOTATION]: GPU_RESOURCE, [GPU_COUNT_ANNOTATION]: String(g.gpus) } : {}),
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
const kubeProxy = (ns: string) => ({
  apiVersion: 'apps/v1', kind: 'DaemonSet', metadata: { name: 'kube-proxy', namespace: ns },
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
});

const podSpec = (cpu: string, memory: string, gpus = 0) => ({
  containers: [{
    name: 'c', image: 'registry.k8s.io/pause:3.10', resources: podResources(cpu, memory, gpus),
  }],
  terminationGracePeriodSeconds: 0,
});

/** Plays one step. */
async function play(step: Step, kc: KubeConfig, client: KubeClient, rec: Recorder, NS: string): Promise<void> {
  switch (step.kind) {
    case 'pods': {
      const spread = step.spreadZones
        ? { topologySpreadConstraints: [{ maxSkew: 1, topologyKey: ZONE_LABEL, whenUnsatisfiable: 'DoNotSchedule', labelSelector: { matchLabels: { [SET_LABEL]: step.name } } }] }
        : {};
      const pods = Array.from({ length: step.count }, (_, i) => ({
        apiVersion: 'v1', kind: 'Pod', metadata: { name: `${step.name}-${i}`, namespace: NS, labels: { [SET_LABEL]: step.name } },
        spec: { ...podSpec(step.cpu, step.memory, step.gpus), ...spread },
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

async function startAutoscaler(setup: Setup, caPath: string | undefined, cp: ControlPlane, kc: KubeConfig, NS: string, logDir: string, bootHorizonMs: number): Promise<Autoscaler> {
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
  const p = ManagedProcess.start('cluster-autoscaler', caPath!, args, { logFile: join(logDir, 'cluster-autoscaler.log') });
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

/** A run of a lane: one scenario, boot profile and DaemonSet setting. */
interface LaneItem {
  readonly scenario: string;
  readonly boot: BootProfile['name'];
  readonly daemonset: boolean;
}
/** What a worker is given: one setup playing one lane of one round. */
interface LaneSpec {
  readonly round: number;
  readonly lane: number;
  readonly setup: Setup['name'];
  readonly items: readonly LaneItem[];
  readonly out: string;
  readonly clusterAutoscaler?: string;
}
/** What a worker sends back: a message per run, and a request to start a control plane. */
type LaneMessage = { readonly result: RunResult; readonly daemonset: boolean } | { readonly failed: LaneItem; readonly error: string } | { readonly startRequest: true } | { readonly startDone: true };
/**
 * Control planes starting at once. Twelve starting together on 2 cores took over 3
 * minutes each, and two Cluster API managers took the same "free" port (ports.ts's
 * race): starts are queued, the runs themselves are not.
 */
const START_SLOTS = 2;
/** Attempts at starting a worker's control plane. */
const START_ATTEMPTS = 3;

const itemLabel = (i: LaneItem) => `${i.scenario}/${i.boot}${i.daemonset ? '' : '/no-ds'}`;

/**
 * One run on `cp`, in the fresh namespace `ns`: its node groups and Cluster, the
 * autoscaler started for it alone, the scenario, then everything of it removed again
 * (autoscaler stopped, workload deleted, groups at 0, their Machines and Nodes gone) so
 * the next run of the lane starts from an empty cluster. Throws if that cleanup fails
 * (the worker then starts a fresh control plane).
 */
async function runOne(cp: ControlPlane, ns: string, scenario: Scenario, setup: Setup, caPath: string | undefined, boot: BootProfile, daemonset: boolean, round: number, out: string): Promise<RunResult> {
  const label = `${scenario.name}/${boot.name}${daemonset ? '' : '/no-ds'}/${setup.name} round ${round}`;
  const runDir = join(out, 'logs', `${round}-${scenario.name}-${boot.name}${daemonset ? '' : '-nods'}-${setup.name}`);
  mkdirSync(runDir, { recursive: true });
  const kc = cp.kubeConfig();
  const client = new KubeClient(kc);
  const stops: Array<() => void | Promise<void>> = [];
  let provider: KwokProvider | undefined;
  let autoscaler: Autoscaler | undefined;
  let note: string | undefined;
  const rec = new Recorder();
  let result: RunResult | undefined;
  try {
    await kubeRequest(kc, 'POST', '/api/v1/namespaces', { metadata: { name: ns } });
    const seed = round * 7919 + scenario.name.length;
    provider = await KwokProvider.start({
      kubeConfig: kc, namespace: ns, intervalMs: 200, workloadKubeconfig: readFileSync(cp.kubeconfigPath, 'utf8'),
      bootDelayMs: boot.name === 'short' ? boot.ms : boot.minMs,
      bootDelayFor: (machine) => bootDelayMs(boot, machine, seed),
    });
    await provider.createCluster(CLUSTER);
    for (const g of scenario.groups) {
      await kubeRequest(kc, 'POST', `/apis/${INFRA}/namespaces/${ns}/kwokmachinetemplates`, template(g, ns));
      await kubeRequest(kc, 'POST', `/apis/cluster.x-k8s.io/v1beta2/namespaces/${ns}/machinedeployments`, machineDeployment(g, ns));
    }
    if (daemonset) await kubeRequest(kc, 'POST', `/apis/apps/v1/namespaces/${ns}/daemonsets`, kubeProxy(ns));
    stops.push(await watch<V1Pod>(kc, `/api/v1/namespaces/${ns}/pods`, (t, o, at) => rec.onPod(t, o, at)));
    stops.push(await watch<V1Node>(kc, `/api/v1/nodes?labelSelector=${encodeURIComponent(kwokNodeSelector({ namespace: ns }))}`, (t, o, at) => rec.onNode(t, o, at)));
    stops.push(await watch<{ metadata?: { name?: string }; spec?: { replicas?: number } }>(kc, `/apis/cluster.x-k8s.io/v1beta2/namespaces/${ns}/machinedeployments`, (t, o, at) => rec.onMachineDeployment(t, o, at)));
    progress(`${label}: starting ${setup.name} in ${ns}`);
    const horizon = boot.name === 'short' ? boot.ms : (boot.minMs + boot.maxMs) / 2;
    autoscaler = await startAutoscaler(setup, caPath, cp, kc, ns, runDir, horizon);
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
        // A pod gone before it ran (preempted, say) will not run: it does not hold the delete until the settle cap.
        while (!rec.workloadPods().filter((p) => p.set === step.name).every((p) => p.runningMs !== undefined || p.goneMs !== undefined) && Date.now() < settleDeadline) await sleep(500);
      }
      await play(step, kc, client, rec, ns);
      if (step === last) demandGoneMs = Date.now();
      if (step.kind !== 'replicas') progress(`${label}: ${step.kind} ${step.name} at ${((Date.now() - startMs) / 1000).toFixed(0)} s`);
    }
    // Then: every pod has run (or the settle cap), the window and the scenario's duration are over, and after demand went away the nodes are gone (or the cap).
    const windowEnd = startMs + scenario.windowS * 1000;
    const durationEnd = startMs + (scenario.durationS ?? 0) * 1000;
    const scaleDownEnd = demandGoneMs === undefined ? 0 : demandGoneMs + (scenario.scaleDownS ?? 0) * 1000;
    let lastLog = Date.now();
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
      if (now - lastLog > 60_000) {
        lastLog = now;
        const pods = rec.workloadPods();
        progress(`${label}: ${((now - startMs) / 1000).toFixed(0)} s, ${pods.filter((p) => p.runningMs !== undefined).length}/${pods.length} pods ran, ${rec.nodesUp()} nodes up`);
      }
      await sleep(500);
    }
    const endMs = Date.now();
    const pods: PodRecord[] = rec.workloadPods().map((p) => ({ name: p.name, createdMs: p.createdMs, ...(p.runningMs !== undefined ? { runningMs: p.runningMs } : {}), ...(p.goneMs !== undefined ? { goneMs: p.goneMs } : {}), ...(p.evicted ? { evicted: true } : {}), ...(p.preempted ? { preempted: true } : {}) }));
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
    result = { scenario: scenario.name, setup: setup.name, boot: `${boot.name}${daemonset ? '' : ', no DaemonSet'}`, round, metrics, ...(note ? { note } : {}) };
    return result;
  } finally {
    for (const s of stops.reverse()) await Promise.resolve(s()).catch(() => undefined);
    await autoscaler?.stop().catch(() => undefined);
    try {
      await emptyNamespace(kc, ns, scenario.groups);
    } finally {
      await provider?.stop().catch(() => undefined);
      client.close();
    }
  }
}

/**
 * Removes a run's workload and capacity from `ns` (its autoscaler already stopped):
 * every workload object deleted, every group at 0 replicas, and waits until its
 * Machines and Nodes are gone (the kwok provider still running), at most 120 s.
 */
async function emptyNamespace(kc: KubeConfig, ns: string, groups: readonly PeerGroup[]): Promise<void> {
  const bg = '?propagationPolicy=Background';
  await Promise.all([
    kubeRequest(kc, 'DELETE', `/apis/apps/v1/namespaces/${ns}/deployments${bg}`),
    kubeRequest(kc, 'DELETE', `/apis/apps/v1/namespaces/${ns}/daemonsets${bg}`),
    kubeRequest(kc, 'DELETE', `/apis/batch/v1/namespaces/${ns}/cronjobs${bg}`),
    kubeRequest(kc, 'DELETE', `/apis/batch/v1/namespaces/${ns}/jobs${bg}`),
  ].map((p) => p.catch(() => undefined)));
  await Promise.all(groups.map((g) => kubeRequest(kc, 'PATCH', `/apis/${CAPI}/namespaces/${ns}/machinedeployments/${g.name}`, { spec: { replicas: 0 } }).catch(() => undefined)));
  const deadline = Date.now() + 120_000;
  for (;;) {
    await kubeRequest(kc, 'DELETE', `/api/v1/namespaces/${ns}/pods?gracePeriodSeconds=0`).catch(() => undefined);
    const machines = await kubeRequest<{ items: unknown[] }>(kc, 'GET', `/apis/${CAPI}/namespaces/${ns}/machines`);
    const nodes = await kubeRequest<{ items: unknown[] }>(kc, 'GET', `/api/v1/nodes?labelSelector=${encodeURIComponent(kwokNodeSelector({ namespace: ns }))}`);
    const pods = await kubeRequest<{ items: unknown[] }>(kc, 'GET', `/api/v1/namespaces/${ns}/pods`);
    if (machines.items.length === 0 && nodes.items.length === 0 && pods.items.length === 0) return;
    if (Date.now() > deadline) throw new Error(`${ns} not empty 120 s after its run: ${machines.items.length} Machines, ${nodes.items.length} Nodes, ${pods.items.length} pods`);
    await sleep(1000);
  }
}

/** A worker: one control plane, the lane's runs one after another; each result is sent to the parent at once. */
async function worker(spec: LaneSpec): Promise<void> {
  const setup = SETUPS.find((s) => s.name === spec.setup)!;
  who = `r${spec.round} lane ${spec.lane} ${spec.setup}`;
  // The parent gone (it crashed or was stopped): nothing to report to, the runs go on to their cleanup.
  const send = (m: LaneMessage) => new Promise<void>((resolve) => (process.send && process.connected ? process.send(m, undefined, {}, () => resolve()) : resolve()));
  /** A control plane, started when the parent gives this worker a start slot; retried on a failed start. */
  const startPlane = async (): Promise<ControlPlane> => {
    const go = new Promise<void>((resolve) => process.once('message', () => resolve()));
    await send({ startRequest: true });
    await go;
    try {
      for (let attempt = 1; ; attempt++) {
        progress(`control plane${attempt > 1 ? ` (attempt ${attempt})` : ''}`);
        try {
          return await startControlPlane({ scheduler: true, controllerManager: true, kwok: true, clusterApi: true });
        } catch (err) {
          if (attempt >= START_ATTEMPTS) throw err;
          progress(`control plane start failed: ${(err as Error).message.split('\n')[0]}`);
        }
      }
    } finally {
      await send({ startDone: true });
    }
  };
  let cp: ControlPlane | undefined;
  try {
    for (const [i, item] of spec.items.entries()) {
      const scenario = SCENARIOS.find((s) => s.name === item.scenario)!;
      const boot = BOOT_PROFILES.find((b) => b.name === item.boot)!;
      try {
        cp ??= await startPlane();
        const result = await runOne(cp, `peers-${i + 1}-${scenario.name}`, scenario, setup, spec.clusterAutoscaler, boot, item.daemonset, spec.round, spec.out);
        await send({ result, daemonset: item.daemonset });
      } catch (err) {
        progress(`${itemLabel(item)} FAILED: ${(err as Error).stack ?? String(err)}`);
        await send({ failed: item, error: (err as Error).message });
        // Whatever it left behind, the next run gets a fresh control plane.
        await cp?.stop().catch(() => undefined);
        cp = undefined;
      }
    }
  } finally {
    await cp?.stop().catch(() => undefined);
  }
}

/** The one cached build of build-cluster-autoscaler.sh (or HEADROOM_CA_BINARY), if there is exactly one. */
function cachedClusterAutoscaler(): string | undefined {
  if (process.env.HEADROOM_CA_BINARY) return process.env.HEADROOM_CA_BINARY;
  const bin = join(process.env.HEADROOM_CACHE ?? join(homedir(), '.cache', 'headroom'), 'bin');
  if (!existsSync(bin)) return undefined;
  const found = readdirSync(bin).filter((d) => d.startsWith('cluster-autoscaler-1.36.1-')).map((d) => join(bin, d, 'cluster-autoscaler')).filter((f) => existsSync(f));
  return found.length === 1 ? found[0] : undefined;
}

async function main(): Promise<void> {
  const parsed = parsePeersArgs(process.argv.slice(2), cachedClusterAutoscaler);
  if ('help' in parsed) {
    process.stdout.write(USAGE);
    return;
  }
  if ('error' in parsed) {
    process.stderr.write(`bench:peers: ${parsed.error}\n`);
    process.exit(2);
  }
  const o = parsed.options;
  mkdirSync(o.out, { recursive: true });
  const items: LaneItem[] = o.scenarios.flatMap((s) => o.boots.flatMap((b) => o.daemonsets.map((daemonset) => ({ scenario: s.name, boot: b.name, daemonset }))));
  const maxBootS = (b: LaneItem['boot']) => (b === 'jittered' ? 180 : 5);
  const split = lanes(items, o.lanes, (i) => runCapS(SCENARIOS.find((s) => s.name === i.scenario)!, maxBootS(i.boot)));
  const specs: LaneSpec[] = [];
  for (let round = 1; round <= o.runs; round++) {
    for (const [l, laneItems] of split.entries()) {
      for (const setup of o.setups) specs.push({ round, lane: l + 1, setup: setup.name, items: laneItems, out: o.out, ...(o.clusterAutoscaler ? { clusterAutoscaler: o.clusterAutoscaler } : {}) });
    }
  }
  const jobs = o.jobs ?? split.length * o.setups.length;
  const jsonl = join(o.out, 'runs.jsonl');
  progress(`${o.runs} round(s) x ${o.setups.length} setups x ${split.length} lanes (${split.map((l, i) => `${i + 1}: ${l.map(itemLabel).join(', ')}`).join('; ')}), at most ${jobs} at once; runs appended to ${jsonl}`);
  const results: RunResult[] = [];
  const failures: string[] = [];
  // The start slots: a worker asks, is told to go when a slot is free, and says when its control plane is up.
  let startsRunning = 0;
  /** Each gives its worker the slot, or returns false if that worker is gone. */
  const startQueue: Array<() => boolean> = [];
  const startNext = () => {
    while (startsRunning < START_SLOTS && startQueue.length > 0) if (startQueue.shift()!()) startsRunning++;
  };
  const runSpec = (spec: LaneSpec) => new Promise<void>((resolve) => {
    const child = fork(fileURLToPath(import.meta.url), [], {
      env: { ...process.env, [LANE_ENV]: JSON.stringify(spec) }, stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      // Metrics hold NaN (no scale-down, no steady $/h): JSON over IPC would make them null.
      serialization: 'advanced',
    });
    let got = 0;
    let holdsSlot = false;
    child.on('message', (m: LaneMessage) => {
      if ('startRequest' in m) {
        startQueue.push(() => {
          if (!child.connected) return false;
          holdsSlot = true;
          child.send({ go: true });
          return true;
        });
        startNext();
        return;
      }
      if ('startDone' in m) {
        if (holdsSlot) startsRunning--;
        holdsSlot = false;
        startNext();
        return;
      }
      got++;
      if ('failed' in m) {
        failures.push(`round ${spec.round} ${itemLabel(m.failed)}/${spec.setup}: ${m.error}`);
        appendFileSync(jsonl, `${JSON.stringify({ ...m.failed, setup: spec.setup, round: spec.round, error: m.error })}\n`);
        return;
      }
      const r = m.result;
      results.push(r);
      appendFileSync(jsonl, `${JSON.stringify({ ...r, daemonset: m.daemonset, at: new Date().toISOString() })}\n`);
      const x = r.metrics;
      progress(`${r.scenario}/${r.boot}/${r.setup} round ${r.round}: ${x.podsRan}/${x.pods} ran, p50 ${x.toRunningP50S.toFixed(1)} s, last ${x.toRunningLastS.toFixed(1)} s, ${x.nodesCreated} nodes, $${x.costWindow.toFixed(3)}, scale-down ${x.scaleDownS.toFixed(0)} s${r.note ? ` (${r.note})` : ''}`);
    });
    child.on('exit', (code, signal) => {
      if (holdsSlot) {
        startsRunning--;
        startNext();
      }
      if (got < spec.items.length) {
        failures.push(`round ${spec.round} lane ${spec.lane} ${spec.setup}: worker exited (${signal ?? code}) after ${got} of ${spec.items.length} runs`);
        progress(failures.at(-1)!);
      }
      resolve();
    });
  });
  // Specs in order (round, lane, setup): a free slot takes the next, so a round's lanes run side by side.
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(jobs, specs.length) }, async () => {
    while (next < specs.length) await runSpec(specs[next++]!);
  }));
  const wallS = (Date.now() - t0) / 1000;
  const order = (r: RunResult) => [r.round, SCENARIOS.findIndex((s) => s.name === r.scenario), r.boot, SETUPS.findIndex((s) => s.name === r.setup)] as const;
  results.sort((a, b) => {
    const x = order(a);
    const y = order(b);
    return x[0] - y[0] || x[1] - y[1] || x[2].localeCompare(y[2]) || x[3] - y[3];
  });
  const out = `Wall time: ${(wallS / 60).toFixed(1)} min (${wallS.toFixed(0)} s) for ${results.length} runs, ${failures.length} failed, ${split.length} lanes x ${o.setups.length} setups, at most ${jobs} at once.\n`
    + `${failures.map((f) => `- FAILED: ${f}\n`).join('')}\n`
    + `## Summary (median (min–max) over runs)\n\n${summaryTable(summarize(results))}\n\n## Every run\n\n${runsTable(results)}\n`;
  writeFileSync(join(o.out, 'tables.md'), out);
  console.log(out);
  if (failures.length > 0) process.exitCode = 1;
}

const lane = process.env[LANE_ENV];
if (lane) {
  await worker(JSON.parse(lane) as LaneSpec);
  if (process.connected) process.disconnect();
} else {
  await main();
}
