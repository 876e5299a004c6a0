import { readFileSync } from 'node:fs';
import { CoreV1Api, type KubeConfig, type V1Node, type V1Pod, Watch } from '@kubernetes/client-node';
import { expect } from 'chai';
import { parse } from 'yaml';
import { ExtenderState } from '../../src/extender/state.js';
import { DemandIntake } from '../../src/provisioning/demand-intake.js';
import { systemClock } from '../../src/provisioning/clock.js';
import { startHeadroomServer } from '../../src/server/headroom-server.js';
import type { RunningServer } from '../../src/server/listen.js';
import { generateServingCert } from '../../src/server/serving-cert.js';
import { parseResourceList } from '../../src/scheduling/resources.js';
import { type Component, type ControlPlane, startControlPlane } from '../harness/control-plane.js';
import { fmt, median } from './load-kit.js';

/**
 * kube-scheduler throughput on 1,000 kwok nodes, with and without the extender
 * (nodeCacheCapable: true, filter + prioritize over TLS). A private control plane
 * (etcd, kube-apiserver, kwok). The pods of a run are created while its scheduler is
 * stopped; the scheduler is then started and we time first to last binding. Runs
 * alternate (plain, extender, plain, extender). Both schedulers get clientConnection
 * qps 500 / burst 1000 so the default 50 QPS does not cap both at the same figure.
 */
const NODES = Number(process.env.HEADROOM_SCHED_NODES ?? 1000);
const PODS = Number(process.env.HEADROOM_SCHED_PODS ?? 400);
const ROUNDS = 2;
const NS = 'default';
const started = Date.now();
const progress = (m: string) => console.error(`    [${((Date.now() - started) / 1000).toFixed(1)}s] ${m}`);

describe('load: kube-scheduler throughput on kwok nodes, with and without the extender', function () {
  this.timeout(1_200_000);
  let cp: ControlPlane;
  let kc: KubeConfig;
  let core: CoreV1Api;
  let server: RunningServer;
  const state = new ExtenderState();
  const tls = generateServingCert({ service: 'headroom', namespace: 'headroom-system' });
  const rates: Record<'plain' | 'extender', number[]> = { plain: [], extender: [] };

  async function inBatches<T>(items: T[], size: number, fn: (t: T) => Promise<unknown>): Promise<void> {
    for (let i = 0; i < items.length; i += size) await Promise.all(items.slice(i, i + size).map(fn));
  }

  function schedulerConfig(withExtender: boolean): Record<string, unknown> {
    const config: Record<string, unknown> = { clientConnection: { qps: 500, burst: 1000 } };
    if (!withExtender) return config;
    const example = parse(readFileSync('webhook-config/kube-scheduler-configuration.yaml', 'utf8')) as { extenders: Record<string, unknown>[] };
    config.extenders = [{ ...example.extenders[0], urlPrefix: `${server.url}/scheduler`, tlsConfig: { caData: Buffer.from(tls.caPem).toString('base64') } }];
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

  async function run(kind: 'plain' | 'extender', round: number): Promise<void> {
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
    const scheduler: Component = await cp.startScheduler({ schedulerName, config: schedulerConfig(kind === 'extender') });
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
    } finally {
      stopWatch();
      await scheduler.stop();
      for (const p of pods) state.addPod((await core.readNamespacedPod({ name: p.metadata!.name!, namespace: NS }).catch(() => undefined))?.spec?.nodeName ?? '', parseResourceList({ cpu: '100m', memory: '128Mi', pods: '1' }));
    }
  }

  before(async function () {
    this.timeout(1_200_000);
    cp = await startControlPlane({ kwok: true, crds: false });
    kc = cp.kubeConfig();
    core = kc.makeApiClient(CoreV1Api);
    server = await startHeadroomServer({
      host: '127.0.0.1', port: 0, tls, state: () => state, intake: new DemandIntake(), clock: systemClock, ready: () => true, logError: () => undefined,
    });
    const allocatable = { cpu: '32', memory: '128Gi', pods: '110' };
    const nodes: V1Node[] = Array.from({ length: NODES }, (_, i) => ({
      metadata: { name: `kwok-${i}`, labels: { 'kubernetes.io/hostname': `kwok-${i}`, type: 'kwok' }, annotations: { 'kwok.x-k8s.io/node': 'fake' } },
      status: { allocatable, capacity: allocatable },
    }));
    progress('control plane up');
    await inBatches(nodes, 50, (body) => core.createNode({ body }));
    progress(`${NODES} nodes created`);
    for (const n of nodes) state.setNode(n.metadata!.name!, { allocatable: parseResourceList(allocatable), requested: {} });
    for (let r = 0; r < ROUNDS; r++) {
      await run('plain', r);
      await run('extender', r);
    }
    const p = median(rates.plain);
    const e = median(rates.extender);
    console.log(`\n  kube-scheduler on ${NODES} kwok nodes, ${PODS} pods per run, medians of ${ROUNDS}:`);
    console.log(`  without extender ${fmt(p, 1)} pods/s (${rates.plain.map((x) => fmt(x, 1)).join(', ')})`);
    console.log(`  with extender    ${fmt(e, 1)} pods/s (${rates.extender.map((x) => fmt(x, 1)).join(', ')})  ratio ${fmt(e / p, 2)}`);
  });

  after(async function () {
    this.timeout(120_000);
    await server?.close(0);
    await cp?.stop();
  });

  it('schedules with the extender at least half as fast as without it', () => {
    expect(median(rates.extender) / median(rates.plain)).to.be.at.least(0.5);
  });
});
