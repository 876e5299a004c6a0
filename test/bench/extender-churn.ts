/**
 * The extender under a large cluster's churn, in one process, no control plane:
 *
 *   node --expose-gc --import tsx test/bench/extender-churn.ts [--nodes 5000 --pods 50000 --seconds 10 --json]
 *
 * Real informers (src/kube/informer.ts) list and watch a fake API client that serves
 * apiserver-shaped JSON (kwok-like Nodes with five conditions and nodeInfo, pods with
 * the apiserver's defaults, a service-account volume, kwok's status and managedFields),
 * so ingestion, the informer transform and the caches are the controller's own. The
 * extender's LiveExtenderState serves the real webhook/extender server (plain HTTP on
 * loopback) and it measures:
 *   1. ingestion: list time; heap and RSS once synced (after a GC);
 *   2. the first full build while autocannon (a child process) calls the filter with
 *      500 names at 50/s: time to ready, event-loop delay (p99, max), request latency;
 *   3. steady churn for --seconds: every node updates its status once per
 *      --heartbeat-s (kwok/kubelet heartbeats: conditions' times only), --pod-churn
 *      pods/s are created bound and as many deleted, and every --node-change-s one node
 *      changes for real (cordoned, uncordoned); meanwhile filter and prioritize with
 *      500 names (closed loop, 1 connection), then filter at 4 connections: latency,
 *      event-loop delay, full builds, main-thread CPU.
 * Old and new code: run it in two worktrees (same machine, alternating), compare medians.
 */
import { spawn } from 'node:child_process';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import type { KubernetesObject } from '@kubernetes/client-node';
import autocannon from 'autocannon';
import { startHeadroomServer } from '../../src/cli/headroom-server.js';
import { emptyClusterObjects, type ClusterObjects } from '../../src/cluster/objects.js';
import type { ClusterStateSource, StateChange } from '../../src/cluster/state.js';
import { LiveExtenderState } from '../../src/controller/live-extender-state.js';
import { Informer, type InformerOptions } from '../../src/kube/informer.js';
import type { KubeClient } from '../../src/kube/kube-client.js';
import { systemClock } from '../../src/provisioning/clock.js';
import { DemandIntake } from '../../src/provisioning/demand-intake.js';
import { base, currentResourceVersion, nodeJson, podJson } from './kwok-objects.js';

const { values } = parseArgs({
  options: {
    nodes: { type: 'string', default: '5000' },
    pods: { type: 'string', default: '50000' },
    seconds: { type: 'string', default: '10' },
    'heartbeat-s': { type: 'string', default: '30' },
    'pod-churn': { type: 'string', default: '50' },
    'node-change-s': { type: 'string', default: '2' },
    json: { type: 'boolean', default: false },
    // Internal: the load generator's child mode.
    client: { type: 'string' },
  },
});

if (values.client) {
  // Child: autocannon against the parent's server, one JSON line of results.
  const o = JSON.parse(values.client) as { url: string; body: string; connections: number; seconds: number; rate?: number };
  const samples: number[] = [];
  const instance = autocannon({
    url: o.url, method: 'POST', headers: { 'content-type': 'application/json' }, body: o.body,
    connections: o.connections, duration: o.seconds, ...(o.rate ? { overallRate: o.rate } : {}),
  });
  instance.on('response', (_c: unknown, _s: number, _b: number, ms: number) => samples.push(ms));
  const r = await instance;
  samples.sort((a, b) => a - b);
  const pct = (p: number) => samples[Math.min(samples.length - 1, Math.floor((p / 100) * samples.length))] ?? NaN;
  process.stdout.write(`${JSON.stringify({ requests: samples.length, errors: r.errors + r.timeouts, non2xx: r.non2xx, p50: pct(50), p99: pct(99), max: samples.at(-1) ?? NaN })}\n`);
  process.exit(0);
}

const NODES = Number(values.nodes);
const PODS = Number(values.pods);
const SECONDS = Number(values.seconds);
const HEARTBEAT_S = Number(values['heartbeat-s']);
const POD_CHURN = Number(values['pod-churn']);
const NODE_CHANGE_S = Number(values['node-change-s']);
const t0 = Date.now();
const progress = (m: string) => console.error(`[extender-churn ${((Date.now() - t0) / 1000).toFixed(0)}s] ${m}`);
const gc = (globalThis as { gc?: () => void }).gc;
const mb = (b: number) => Math.round(b / 1048576);

/** A KubeClient stand-in serving lists in pages (as JSON text, parsed like a response) and watches fed by the bench. */
class FakeApi {
  readonly lists = new Map<string, () => Record<string, unknown>[]>();
  readonly watchers = new Map<string, (e: { type: string; object: Record<string, unknown> }) => void>();
  async get<T>(path: string, query?: Record<string, unknown>): Promise<T> {
    const all = this.lists.get(path)?.() ?? [];
    const from = Number(query?.continue ?? 0);
    const limit = Number(query?.limit ?? 500);
    const items = all.slice(from, from + limit);
    const next = from + limit < all.length ? String(from + limit) : undefined;
    await new Promise((r) => setImmediate(r)); // a response arrives on its own turn of the loop
    return JSON.parse(JSON.stringify({ metadata: { resourceVersion: currentResourceVersion(), ...(next ? { continue: next } : {}) }, items })) as T;
  }
  async watch(path: string, _q: unknown, onEvent: (e: { type: string; object: Record<string, unknown> }) => void, signal: AbortSignal, onOpen?: () => void): Promise<void> {
    this.watchers.set(path, onEvent);
    onOpen?.();
    await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
  }
  emit(path: string, type: string, object: Record<string, unknown>): void {
    // Each event is parsed from its own JSON, as a watch stream delivers it.
    this.watchers.get(path)?.({ type, object: JSON.parse(JSON.stringify(object)) as Record<string, unknown> });
  }
}

/** Pods, nodes and Machines from real informers, the way ClusterCache combines them. */
class InformerSource implements ClusterStateSource {
  private cached: ClusterObjects | undefined;
  /** Main-thread time spent in change listeners (the extender state's deltas). */
  listenerMs = 0;
  private readonly listeners = new Set<(kind: keyof ClusterObjects, change?: StateChange) => void>();
  constructor(private readonly informers: Array<[keyof ClusterObjects, Informer]>) {
    for (const [kind, inf] of informers) {
      inf.onChange((change) => {
        this.cached = undefined;
        const t = performance.now();
        for (const fn of this.listeners) fn(kind, change);
        this.listenerMs += performance.now() - t;
      });
    }
  }
  objects(): ClusterObjects {
    if (this.cached) return this.cached;
    const out = emptyClusterObjects();
    for (const [kind, inf] of this.informers) (out as unknown as Record<string, KubernetesObject[]>)[kind] = inf.list();
    return (this.cached = out);
  }
  synced(): boolean {
    return this.informers.every(([, i]) => i.hasSynced());
  }
  onChange(fn: (kind: keyof ClusterObjects, change?: StateChange) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }
}

interface Load { requests: number; errors: number; non2xx: number; p50: number; p99: number; max: number }

function loadChild(url: string, body: string, connections: number, seconds: number, rate?: number): Promise<Load> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', process.argv[1]!, '--client', JSON.stringify({ url, body, connections, seconds, rate })], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out) as Load) : reject(new Error(`load child exited ${code}`))));
  });
}

/** Event-loop delay and main-thread CPU over a phase. */
function monitor() {
  const h = monitorEventLoopDelay({ resolution: 2 });
  h.enable();
  const cpu0 = process.cpuUsage();
  const at0 = performance.now();
  return () => {
    h.disable();
    const cpu = process.cpuUsage(cpu0);
    const wall = performance.now() - at0;
    return { lagP99Ms: h.percentile(99) / 1e6, lagMaxMs: h.max / 1e6, cpuPercent: Math.round((100 * (cpu.user + cpu.system)) / 1000 / wall) };
  };
}

async function main(): Promise<void> {
  const api = new FakeApi();
  let heartbeatAt = base;
  const nodeObjs = Array.from({ length: NODES }, (_, i) => nodeJson(i, heartbeatAt));
  const podObjs = new Map<number, Record<string, unknown>>();
  for (let i = 0; i < PODS; i++) podObjs.set(i, podJson(i, i % NODES));
  api.lists.set('/api/v1/nodes', () => nodeObjs);
  api.lists.set('/api/v1/pods', () => [...podObjs.values()]);
  api.lists.set('/apis/cluster.x-k8s.io/v1beta2/machines', () => []);
  const client = api as unknown as KubeClient;
  // The informer transform (new code) when present: the same one ClusterCache gives each kind.
  const transforms = await import('../../src/kube/informer-transform.js').catch(() => undefined) as
    | { transformFor?: (plural: string) => InformerOptions['transform'] } | undefined;
  const opts = (plural: string): InformerOptions => {
    const t = (transforms?.transformFor as ((p: string) => unknown) | undefined)?.(plural);
    return { stallTimeoutMs: 3_600_000, ...(t ? { transform: t } : {}) } as InformerOptions;
  };
  gc?.();
  const heapBefore = process.memoryUsage();
  const informers: Array<[keyof ClusterObjects, Informer]> = [
    ['nodes', new Informer(client, { group: '', version: 'v1', plural: 'nodes' }, opts('nodes'))],
    ['pods', new Informer(client, { group: '', version: 'v1', plural: 'pods' }, opts('pods'))],
    ['machines', new Informer(client, { group: 'cluster.x-k8s.io', version: 'v1beta2', plural: 'machines' }, opts('machines'))],
  ];
  const source = new InformerSource(informers);
  const listStart = performance.now();
  for (const [, i] of informers) i.start();
  while (!source.synced()) await new Promise((r) => setTimeout(r, 20));
  const listMs = performance.now() - listStart;
  gc?.();
  const synced = process.memoryUsage();
  const ingestion = {
    listMs: Math.round(listMs), transform: transforms?.transformFor !== undefined,
    cacheHeapMb: mb(synced.heapUsed - heapBefore.heapUsed), heapUsedMb: mb(synced.heapUsed), rssMb: mb(synced.rss),
  };
  progress(`listed ${NODES} nodes, ${PODS} pods in ${ingestion.listMs} ms; cache heap ${ingestion.cacheHeapMb} MB, RSS ${ingestion.rssMb} MB`);

  const live = new LiveExtenderState(source, 250, (err) => console.error(err));
  // The old code rebuilt synchronously in rebuild(): time it too.
  let rebuildMs = 0;
  const old = live as unknown as { rebuild?: () => void };
  if (typeof old.rebuild === 'function') {
    const rebuild = old.rebuild.bind(live);
    old.rebuild = () => {
      const t = performance.now();
      rebuild();
      rebuildMs += performance.now() - t;
    };
  }
  const server = await startHeadroomServer({
    host: '127.0.0.1', port: 0, tls: false, state: () => live.get(), intake: new DemandIntake(), clock: systemClock, ready: () => true,
  });
  const url = `http://127.0.0.1:${server.port}`;
  const pod = { metadata: { name: 'p', namespace: 'burst' }, spec: { containers: [{ name: 'c', resources: { requests: { cpu: '1', memory: '1Gi' } } }] } };
  const names = Array.from({ length: Math.min(500, NODES) }, (_, i) => `load-${i}`);
  const body = JSON.stringify({ Pod: pod, NodeNames: names });

  // 2. The first full build, under load.
  const duringLoad = loadChild(`${url}/scheduler/filter`, body, 2, 8, 50);
  await new Promise((r) => setTimeout(r, 1500)); // the child is up and sending
  const stopBuild = monitor();
  const buildStart = performance.now();
  live.start();
  while (live.rebuilds < 1) await new Promise((r) => setTimeout(r, 5));
  const firstBuild = { readyMs: Math.round(performance.now() - buildStart), ...stopBuild(), during: await duringLoad };
  progress(`first build ready after ${firstBuild.readyMs} ms; lag p99 ${firstBuild.lagP99Ms.toFixed(1)} max ${firstBuild.lagMaxMs.toFixed(1)} ms; filter p99 ${firstBuild.during.p99} ms`);
  gc?.();
  const built = process.memoryUsage();

  // 3. Steady churn.
  let nextPod = PODS;
  let oldest = 0;
  let hbCursor = 0;
  let changed = 0;
  const tickMs = 100;
  const churn = setInterval(() => {
    heartbeatAt += tickMs;
    const beats = Math.round((NODES / HEARTBEAT_S) * (tickMs / 1000));
    for (let k = 0; k < beats; k++) {
      const i = hbCursor++ % NODES;
      nodeObjs[i] = nodeJson(i, heartbeatAt, i === changed && cordoned);
      api.emit('/api/v1/nodes', 'MODIFIED', nodeObjs[i]!);
    }
    const pods = Math.max(1, Math.round(POD_CHURN * (tickMs / 1000)));
    for (let k = 0; k < pods; k++) {
      const p = podJson(nextPod, nextPod % NODES);
      podObjs.set(nextPod++, p);
      api.emit('/api/v1/pods', 'ADDED', p);
      const gone = podObjs.get(oldest);
      podObjs.delete(oldest++);
      if (gone) api.emit('/api/v1/pods', 'DELETED', gone);
    }
  }, tickMs);
  let cordoned = false;
  const nodeChange = setInterval(() => {
    cordoned = !cordoned;
    changed = (changed + 7) % NODES;
    nodeObjs[changed] = nodeJson(changed, heartbeatAt, cordoned);
    api.emit('/api/v1/nodes', 'MODIFIED', nodeObjs[changed]!);
  }, NODE_CHANGE_S * 1000);
  await new Promise((r) => setTimeout(r, 1000));
  const rebuildsBefore = live.rebuilds;
  const stopSteady = monitor();
  const steadyAt = performance.now();
  source.listenerMs = 0;
  rebuildMs = 0;
  const filter = await loadChild(`${url}/scheduler/filter`, body, 1, SECONDS);
  const prioritize = await loadChild(`${url}/scheduler/prioritize`, body, 1, SECONDS);
  const filter4 = await loadChild(`${url}/scheduler/filter`, body, 4, SECONDS);
  const steadyS = (performance.now() - steadyAt) / 1000;
  const steady = {
    ...stopSteady(), fullBuilds: live.rebuilds - rebuildsBefore,
    // Main-thread ms per second the extender state spent on changes: deltas, plus the old code's synchronous rebuilds.
    stateMsPerS: Math.round((source.listenerMs + rebuildMs) / steadyS), filter, prioritize, filter4,
  };
  clearInterval(churn);
  clearInterval(nodeChange);
  progress(`churn: filter p50 ${filter.p50} p99 ${filter.p99} ms; prioritize p99 ${prioritize.p99}; filter x4 p99 ${filter4.p99}; full builds ${steady.fullBuilds}, state ${steady.stateMsPerS} ms/s; lag p99 ${steady.lagP99Ms.toFixed(1)} max ${steady.lagMaxMs.toFixed(1)} ms; CPU ${steady.cpuPercent}%`);
  gc?.();
  const end = process.memoryUsage();
  live.stop();
  await server.close();
  for (const [, i] of informers) i.stop();
  const result = {
    config: { nodes: NODES, pods: PODS, seconds: SECONDS, heartbeatS: HEARTBEAT_S, podChurn: POD_CHURN, nodeChangeS: NODE_CHANGE_S },
    ingestion, firstBuild, afterBuild: { heapUsedMb: mb(built.heapUsed), rssMb: mb(built.rss) }, steady,
    end: { heapUsedMb: mb(end.heapUsed), rssMb: mb(end.rss) },
  };
  process.stdout.write(`${values.json ? JSON.stringify(result) : JSON.stringify(result, null, 2)}\n`);
}

await main();
process.exit(0);
