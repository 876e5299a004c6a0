import { readFileSync } from 'node:fs';
import { CoreV1Api, type KubeConfig, type V1Node, type V1Pod } from '@kubernetes/client-node';
import { expect } from 'chai';
import { parse } from 'yaml';
import { startHeadroomServer } from '../../src/cli/headroom-server.js';
import { ExtenderState } from '../../src/extender/state.js';
import { DemandIntake } from '../../src/provisioning/demand-intake.js';
import { systemClock } from '../../src/provisioning/clock.js';
import { httpRequests } from '../../src/server/metrics.js';
import type { RunningServer } from '../../src/server/listen.js';
import { generateServingCert } from '../../src/server/serving-cert.js';
import { parseResourceList } from '../../src/scheduling/resources.js';
import type { Component, ControlPlane } from '../harness/control-plane.js';
import { createTestNamespace, deleteTestNamespace } from '../harness/namespace.js';
import { sharedControlPlane } from './hooks.js';

const GROUP_LABEL = 'headroom.dev/test-group';
const TAINT_KEY = 'headroom.dev/test-group';

/**
 * The real kube-scheduler, configured from webhook-config/kube-scheduler-configuration.yaml
 * (nodeCacheCapable: true, and once with false), calls the extender over TLS and binds
 * pods to kwok nodes. The nodes carry a taint and label only this file's pods tolerate
 * and select, so other test files sharing the cluster neither land here nor see us.
 */
describe('scheduler extender with a real kube-scheduler and kwok nodes', function () {
  this.timeout(180_000);
  let cp: ControlPlane;
  let kc: KubeConfig;
  let core: CoreV1Api;
  let ns: string;
  let server: RunningServer;
  const state = new ExtenderState();
  const intake = new DemandIntake(100);
  const tls = generateServingCert({ service: 'headroom', namespace: 'headroom-system' });
  const nodes: string[] = [];
  const schedulers: Component[] = [];

  before(async function () {
    this.timeout(240_000);
    cp = await sharedControlPlane();
    kc = cp.kubeConfig();
    core = kc.makeApiClient(CoreV1Api);
    ns = await createTestNamespace(kc, 'extender');
    server = await startHeadroomServer({
      host: '127.0.0.1', port: 0, tls, state: () => state, intake, clock: systemClock, ready: () => true,
    });
  });

  after(async function () {
    for (const s of schedulers) await s.stop();
    await server?.close(0);
    for (const name of nodes) await core.deleteNode({ name }).catch(() => undefined);
    if (kc && ns) await deleteTestNamespace(kc, ns);
  });

  /** A kwok node only this file's pods can use; registered in the extender state too. */
  async function createNode(suffix: string): Promise<string> {
    const name = `${ns}-${suffix}`;
    const allocatable = { cpu: '4', memory: '8Gi', pods: '110' };
    const body: V1Node = {
      metadata: { name, labels: { [GROUP_LABEL]: ns, 'kubernetes.io/hostname': name, type: 'kwok' }, annotations: { 'kwok.x-k8s.io/node': 'fake' } },
      spec: { taints: [{ key: TAINT_KEY, value: ns, effect: 'NoSchedule' }] },
      status: { allocatable, capacity: allocatable },
    };
    await core.createNode({ body });
    nodes.push(name);
    state.setNode(name, { allocatable: parseResourceList(allocatable), requested: {} });
    return name;
  }

  function podSpec(name: string, schedulerName: string, cpu: string, memory: string, nodeName?: string): V1Pod {
    return {
      metadata: { name, namespace: ns },
      spec: {
        schedulerName,
        ...(nodeName ? { nodeName } : {}),
        nodeSelector: { [GROUP_LABEL]: ns },
        tolerations: [{ key: TAINT_KEY, operator: 'Equal', value: ns, effect: 'NoSchedule' }],
        containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.10', resources: { requests: { cpu, memory } } }],
      },
    };
  }

  async function waitBound(name: string, timeoutMs = 60_000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const pod = await core.readNamespacedPod({ name, namespace: ns });
      if (pod.spec?.nodeName) return pod.spec.nodeName;
      await new Promise((r) => setTimeout(r, 200));
    }
    throw new Error(`pod ${name} was not bound within ${timeoutMs} ms`);
  }

  async function startScheduler(schedulerName: string, nodeCacheCapable: boolean): Promise<void> {
    const config = parse(readFileSync('webhook-config/kube-scheduler-configuration.yaml', 'utf8')) as Record<string, unknown>;
    const [extender] = config.extenders as Record<string, unknown>[];
    Object.assign(extender!, {
      urlPrefix: `${server.url}/scheduler`,
      tlsConfig: { caData: Buffer.from(tls.caPem).toString('base64') },
      nodeCacheCapable,
    });
    schedulers.push(await cp.startScheduler({ schedulerName, config }));
  }

  const extenderCalls = async (path: string) =>
    ((await httpRequests.get()).values.filter((v) => v.labels.endpoint === path && v.labels.code === '200').reduce((s, v) => s + v.value, 0));

  describe('nodeCacheCapable: true (the shipped choice)', () => {
    let a: string;
    let b: string;
    let schedulerName: string;

    before(async function () {
      this.timeout(180_000);
      a = await createNode('a');
      b = await createNode('b');
      schedulerName = `headroom-ext-${ns}`;
      await startScheduler(schedulerName, true);
    });

    it('binds a pod to a kwok node, calling filter and prioritize', async () => {
      const [f0, p0] = [await extenderCalls('/scheduler/filter'), await extenderCalls('/scheduler/prioritize')];
      await core.createNamespacedPod({ namespace: ns, body: podSpec('first', schedulerName, '100m', '64Mi') });
      const node = await waitBound('first');
      expect([a, b]).to.include(node);
      state.addPod(node, parseResourceList({ cpu: '100m', memory: '64Mi', pods: '1' }));
      expect(await extenderCalls('/scheduler/filter')).to.be.greaterThan(f0);
      expect(await extenderCalls('/scheduler/prioritize')).to.be.greaterThan(p0);
      // kwok runs it.
      const deadline = Date.now() + 30_000;
      let phase: string | undefined;
      while (Date.now() < deadline && phase !== 'Running') {
        phase = (await core.readNamespacedPod({ name: 'first', namespace: ns })).status?.phase;
        if (phase !== 'Running') await new Promise((r) => setTimeout(r, 200));
      }
      expect(phase).to.equal('Running');
    });

    it('respects a filter decision: no pod lands on a node Headroom is disrupting', async () => {
      for (const [disrupted, other] of [[a, b], [b, a]] as const) {
        state.markDisrupting(disrupted, 'consolidating');
        const names = [0, 1, 2].map((i) => `filtered-${disrupted.slice(-1)}-${i}`);
        for (const name of names) await core.createNamespacedPod({ namespace: ns, body: podSpec(name, schedulerName, '10m', '16Mi') });
        for (const name of names) expect(await waitBound(name), name).to.equal(other);
        state.addPod(other, parseResourceList({ cpu: '10m', memory: '16Mi', pods: '1' }), names.length);
        state.clearDisrupting(disrupted);
      }
    });

    it('records a pod as demand when every candidate is filtered, and it stays unbound', async () => {
      state.markDisrupting(a, 'draining');
      state.markDisrupting(b, 'draining');
      try {
        await core.createNamespacedPod({ namespace: ns, body: podSpec('nowhere', schedulerName, '10m', '16Mi') });
        const deadline = Date.now() + 30_000;
        let rec;
        while (Date.now() < deadline && !rec) {
          rec = intake.drain().find((r) => r.source === 'extender' && r.pod.key === `${ns}/nowhere`);
          if (!rec) await new Promise((r) => setTimeout(r, 200));
        }
        expect(rec, 'extender demand record').to.not.equal(undefined);
        const pod = await core.readNamespacedPod({ name: 'nowhere', namespace: ns });
        expect(pod.spec!.nodeName).to.equal(undefined);
      } finally {
        state.clearDisrupting(a);
        state.clearDisrupting(b);
        await core.deleteNamespacedPod({ name: 'nowhere', namespace: ns, gracePeriodSeconds: 0 });
      }
    });

    it('steers to the fuller of two eligible nodes (the default scheduler picks the emptier)', async () => {
      for (const [fuller, emptier] of [[a, b], [b, a]] as const) {
        // Fill `fuller` for real (bound directly, as kube-scheduler would see it) and in the state.
        const filler = `filler-on-${fuller.slice(-1)}`;
        await core.createNamespacedPod({ namespace: ns, body: podSpec(filler, schedulerName, '2', '4Gi', fuller) });
        state.addPod(fuller, parseResourceList({ cpu: '2', memory: '4Gi', pods: '1' }));
        // Control: without the extender, LeastAllocated sends the pod to the emptier node.
        const control = `control-${fuller.slice(-1)}`;
        await core.createNamespacedPod({ namespace: ns, body: podSpec(control, 'default-scheduler', '500m', '512Mi') });
        expect(await waitBound(control), 'default-scheduler').to.equal(emptier);
        state.addPod(emptier, parseResourceList({ cpu: '500m', memory: '512Mi', pods: '1' }));
        const steered = `steered-${fuller.slice(-1)}`;
        await core.createNamespacedPod({ namespace: ns, body: podSpec(steered, schedulerName, '500m', '512Mi') });
        expect(await waitBound(steered), 'with the extender').to.equal(fuller);
        state.addPod(fuller, parseResourceList({ cpu: '500m', memory: '512Mi', pods: '1' }));
        // Level the two nodes again before swapping roles.
        for (const name of [filler, control, steered]) await core.deleteNamespacedPod({ name, namespace: ns, gracePeriodSeconds: 0 });
        state.setNode(a, { allocatable: state.node(a)!.allocatable, requested: {} });
        state.setNode(b, { allocatable: state.node(b)!.allocatable, requested: {} });
        await waitGone([filler, control, steered]);
      }
    });
  });

  describe('nodeCacheCapable: false (full NodeList in and out)', () => {
    let schedulerName: string;
    before(async function () {
      this.timeout(180_000);
      schedulerName = `headroom-ext-list-${ns}`;
      await startScheduler(schedulerName, false);
    });

    it('binds pods and respects the filter with Nodes instead of NodeNames', async () => {
      const [a, b] = nodes as [string, string];
      const f0 = await extenderCalls('/scheduler/filter');
      state.markDisrupting(b, 'consolidating');
      try {
        const names = ['list-0', 'list-1', 'list-2'];
        for (const name of names) await core.createNamespacedPod({ namespace: ns, body: podSpec(name, schedulerName, '10m', '16Mi') });
        for (const name of names) expect(await waitBound(name), name).to.equal(a);
        expect(await extenderCalls('/scheduler/filter')).to.be.at.least(f0 + names.length);
      } finally {
        state.clearDisrupting(b);
      }
    });
  });

  async function waitGone(names: string[]): Promise<void> {
    const deadline = Date.now() + 60_000;
    for (const name of names) {
      while (Date.now() < deadline) {
        const gone = await core.readNamespacedPod({ name, namespace: ns }).then(() => false, () => true);
        if (gone) break;
        await new Promise((r) => setTimeout(r, 200));
      }
    }
  }
});
