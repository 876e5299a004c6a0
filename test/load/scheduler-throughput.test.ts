import { readFileSync } from 'node:fs';
import { CoreV1Api, type KubeConfig, type V1Node, type V1Pod, Watch } from '@kubernetes/client-node';
import { expect } from 'chai';
import { parse } from 'yaml';
import { type Component, type ControlPlane, startControlPlane } from '../harness/control-plane.js';
import { fmt, median, startChild, type ChildServer } from './load-kit.js';

/**
 * kube-scheduler throughput on 1,000 kwok nodes, without an extender, with Headroom's
 * extender (nodeCacheCapable: true, filter + prioritize over TLS), and with a
 * do-nothing extender (a bare node:https server that echoes the candidates and scores
 * them all 0: what the extender protocol itself costs on this machine). A private
 * control plane (etcd, kube-apiserver, kwok). Each extender runs in its own process, as
 * Headroom does in production, so this process's watch traffic does not share its event
 * loop; Headroom's state holds the kwok nodes with usage spread over 0-90% (varied,
 * non-zero scores) and every 50th node being consolidated. The pods of a run are
 * created while its scheduler is stopped; the scheduler is then started and we time
 * first to last binding. Runs rotate (plain, headroom, floor) for ROUNDS rounds; medians
 * are compared. Every scheduler gets clientConnection qps 500 / burst 1000 so the default
 * 50 QPS does not cap them all at the same figure.
 */
const NODES = Number(process.env.HEADROOM_SCHED_NODES ?? 1000);
const PODS = Number(process.env.HEADROOM_SCHED_PODS ?? 800);
const ROUNDS = Number(process.env.HEADROOM_SCHED_ROUNDS ?? 3);
type Kind = 'plain' | 'headroom' | 'floor';
const NS = 'default';
const started = Date.now();
const progress = (m: string) => console.error(`    [${((Date.now() - started) / 1000).toFixed(1)}s] ${m}`);

describe('load: kube-scheduler throughput on kwok nodes, with and without the extender', function () {
  this.timeout(1_200_000);
  let cp: ControlPlane;
  let kc: KubeConfig;
  let core: CoreV1Api;
  const extenders: Partial<Record<Kind, ChildServer>> = {};
  const rates: Record<Kind, number[]> = { plain: [], headroom: [], floor: [] };
  /** CPU seconds of the extender's process per scheduled pod. */
  const extenderCpu: Record<Kind, number[]> = { plain: [], headroom: [], floor: [] };

  async function inBatches<T>(items: T[], size: number, fn: (t: T) => Promise<unknown>): Promise<void> {
    for (let i = 0; i < items.length; i += size) await Promise.all(items.slice(i, i + size).map(fn));
  }

  function schedulerConfig(extender: ChildServer | undefined): Record<string, unknown> {
    const config: Record<string, unknown> = { clientConnection: { qps: 500, burst: 1000 } };
    if (!extender) return config;
    const example = parse(readFileSync('webhook-config/kube-scheduler-configuration.yaml', 'utf8')) as { extenders: Record<string, unknown>[] };
    config.extenders = [{ ...example.extenders[0], urlPrefix: `${extender.url}/scheduler`, tlsConfig: { caData: Buffer.from(extender.caPem).toString('base64') } }];
    return config;
  }

  /**
   * Local arrival times of each pod's binding, from a watch (sub-ms, unlike the 1 s
   * condition timestamps). kube-apiserver closes a watch whose reader falls behind (this
   * process also serves the extender), so on close we re-list (pods bound in the gap get
   * the re-list time) and watch again from the list's resourceVersion.
   */
  async function watchBindings(schedulerName: string, onBound: (name: string, at: number) => void): Promise<() => void> {
    let stopped = false;
    let current: AbortController | undefined;
    const fieldSelector = `spec.schedulerName=${schedulerName}`;
    const start = async (): Promise<void> => {
      if (stopped) return;
      const list = await core.listNamespacedPod({ namespace: NS, fieldSelector });
      const now = performance.now();
      for (const pod of list.items) if (pod.spec?.nodeName) onBound(pod.metadata!.name!, now);
      current = await new Watch(kc).watch(
        `/api/v1/namespaces/${NS}/pods`,
        { fieldSelector, resourceVersion: list.metadata!.resourceVersion!, allowWatchBookmarks: true },
        (_type: string, pod: V1Pod) => {
          if (pod.spec?.nodeName) onBound(pod.metadata!.name!, performance.now());
        },
        () => void start().catch(() => setTimeout(() => void start(), 200)),
      );
    };
    await start();
    return () => {
      stopped = true;
      current?.abort();
    };
  }

  async function run(kind: Kind, round: number): Promise<void> {
    const schedulerName = `${kind}-${round}`;
    const pods: V1Pod[] = Array.from({ length: PODS }, (_, i) => ({
      metadata: { name: `${schedulerName}-${i}`, namespace: NS },
      spec: { schedulerName, containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.10', resources: { requests: { cpu: '100m', memory: '128Mi' } } }] },
    }));
    await inBatches(pods, 25, (body) => core.createNamespacedPod({ namespace: NS, body }));
    progress(`${schedulerName}: ${PODS} pods created`);
    const boundAt = new Map<string, number>();
    const stopWatch = await watchBindings(schedulerName, (name, at) => {
      if (!boundAt.has(name)) boundAt.set(name, at);
    });
    const extender = extenders[kind];
    const cpuBefore = extender ? Number(await extender.command('cpu')) : 0;
    const scheduler: Component = await cp.startScheduler({ schedulerName, config: schedulerConfig(extender) });
    try {
      const deadline = Date.now() + 180_000;
      let last = -1;
      while (boundAt.size < PODS && Date.now() < deadline) {
        if (boundAt.size !== last && (last = boundAt.size) % 50 === 0) progress(`${schedulerName}: ${last} bound`);
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(boundAt.size, `${schedulerName}: pods bound`).to.equal(PODS);
      progress(`${schedulerName}: all bound`);
      const times = [...boundAt.values()];
      const seconds = (Math.max(...times) - Math.min(...times)) / 1000;
      rates[kind].push((PODS - 1) / seconds);
      if (extender) extenderCpu[kind].push((Number(await extender.command('cpu')) - cpuBefore) / PODS);
      if (extender) progress(`${schedulerName}: extender TLS connections so far ${await extender.command('conns')}`);
      progress(`${schedulerName}: ${fmt((PODS - 1) / seconds, 1)} pods/s`);
    } finally {
      stopWatch();
      await scheduler.stop();
    }
  }

  before(async function () {
    this.timeout(1_200_000);
    cp = await startControlPlane({ kwok: true, crds: false });
    kc = cp.kubeConfig();
    core = kc.makeApiClient(CoreV1Api);
    [extenders.headroom, extenders.floor] = await Promise.all([
      startChild('headroom', NODES, { HEADROOM_LOAD_STATE: 'kwok' }),
      startChild('extender-floor'),
    ]);
    const allocatable = { cpu: '32', memory: '128Gi', pods: '110' };
    const nodes: V1Node[] = Array.from({ length: NODES }, (_, i) => ({
      metadata: { name: `kwok-${i}`, labels: { 'kubernetes.io/hostname': `kwok-${i}`, type: 'kwok' }, annotations: { 'kwok.x-k8s.io/node': 'fake' } },
      status: { allocatable, capacity: allocatable },
    }));
    progress('control plane up');
    await inBatches(nodes, 50, (body) => core.createNode({ body }));
    progress(`${NODES} nodes created`);
    for (let r = 0; r < ROUNDS; r++) {
      for (const kind of ['plain', 'headroom', 'floor'] as const) await run(kind, r);
    }
    const p = median(rates.plain);
    const line = (name: string, kind: Kind) => {
      const cpu = extenderCpu[kind].length ? `, extender process ${fmt(1000 * median(extenderCpu[kind]), 2)} CPU-ms per pod` : '';
      return `  ${name.padEnd(28)} ${fmt(median(rates[kind]), 1)} pods/s (${rates[kind].map((x) => fmt(x, 1)).join(', ')})  ratio ${fmt(median(rates[kind]) / p, 2)}${cpu}`;
    };
    console.log(`\n  kube-scheduler on ${NODES} kwok nodes, ${PODS} pods per run, medians of ${ROUNDS}:`);
    console.log(line('without extender', 'plain'));
    console.log(line('Headroom extender', 'headroom'));
    console.log(line('do-nothing extender (floor)', 'floor'));
  });

  after(async function () {
    this.timeout(120_000);
    await Promise.all(Object.values(extenders).map((e) => e.stop()));
    await cp?.stop();
  });

  it('schedules with the Headroom extender at least half as fast as without it', () => {
    expect(median(rates.headroom) / median(rates.plain)).to.be.at.least(0.5);
  });
});
