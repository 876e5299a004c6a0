import { expect } from 'chai';
import type { KubeConfig, V1Node, V1Pod } from '@kubernetes/client-node';
import { Registry } from 'prom-client';
import { MachineFixture, fixtureNodeSelector, FIXTURE_GROUP_NAME_LABEL, type MachineOutcome } from '../harness/machine-fixture.js';
import { createTestNamespace, deleteTestNamespace } from '../harness/namespace.js';
import { strandedPodInvariant } from './invariant.js';
import { eventually } from '../harness/wait.js';
import { sharedClient } from './hooks.js';
import type { KubeClient } from '../../src/kube/kube-client.js';
import { Controller } from '../../src/controller/controller.js';
import type { CycleReport } from '../../src/provisioning/cycle-report.js';
import { machineDeployment, pendingPod } from './controller-objects.js';

/**
 * Provisioning failures on the real control plane (issue 14): the machine fixture is
 * told that Machines of the cheapest group never boot, or fail; the controller must
 * give up on them and place the pods on the next best group. Two groups: `cheap`
 * (4 cpu) is what the solver picks first, `big` (8 cpu) the fallback.
 */
describe('provisioning failures on a real control plane', function () {
  let kc: KubeConfig;
  let client: KubeClient;

  before(async function () { ({ kc, client } = await sharedClient(this)); });
  after(() => client.close());
  const invariant = strandedPodInvariant(() => client);

  async function scenario(prefix: string, outcome: (group: string | undefined) => MachineOutcome, cheapAnnotations: Record<string, string> = {}) {
    const ns = await createTestNamespace(kc, prefix);
    invariant.watch(ns, fixtureNodeSelector({ namespace: ns }));
    const fixture = await MachineFixture.start({
      kubeConfig: kc, namespace: ns, bootDelayMs: 0, intervalMs: 100,
      machineOutcome: (m) => outcome(m.labels['cluster.x-k8s.io/deployment-name']),
    });
    for (const [name, cpu, memory, annotations] of [['cheap', '4', '16Gi', cheapAnnotations], ['big', '8', '32Gi', {}]] as const) {
      await client.request('POST', `/apis/cluster.x-k8s.io/v1beta2/namespaces/${ns}/machinedeployments`, {
        body: machineDeployment({ namespace: ns, name, replicas: 0, min: 0, max: 5, cpu, memory, annotations }),
      });
    }
    const cycles: CycleReport[] = [];
    const logs: string[] = [];
    let ctl: Controller | undefined;
    const start = async (provisioning: NonNullable<ConstructorParameters<typeof Controller>[0]['provisioning']>) => {
      ctl = new Controller({
        workload: kc,
        discovery: [{ namespace: ns, labels: {} }],
        workloadScope: { namespace: ns, nodeLabelSelector: fixtureNodeSelector({ namespace: ns }) },
        batch: { idleMs: 200, maxMs: 1000 },
        registry: new Registry(),
        disruption: false,
        provisioning,
        log: (m) => logs.push(`${new Date().toISOString()} ${m}`),
        onCycle: (r) => cycles.push(r),
      });
      await ctl.start();
      return ctl;
    };
    const replicas = async (name: string) =>
      (await client.get<{ spec: { replicas: number } }>(`/apis/cluster.x-k8s.io/v1beta2/namespaces/${ns}/machinedeployments/${name}`)).spec.replicas;
    const createPods = (n: number) => Promise.all(Array.from({ length: n }, (_, i) =>
      client.request('POST', `/api/v1/namespaces/${ns}/pods`, { body: pendingPod(ns, `p-${i}`, '1') })));
    const runningOn = (count: number) => eventually(`${count} pods Running`, async () => {
      const pods = (await client.get<{ items: V1Pod[] }>(`/api/v1/namespaces/${ns}/pods`)).items;
      if (pods.length !== count || !pods.every((p) => p.status?.phase === 'Running')) return false;
      const nodes = (await client.get<{ items: V1Node[] }>('/api/v1/nodes', { labelSelector: fixtureNodeSelector({ namespace: ns }) })).items;
      const groupOf = new Map(nodes.map((n) => [n.metadata!.name!, n.metadata?.labels?.[FIXTURE_GROUP_NAME_LABEL]]));
      return pods.map((p) => groupOf.get(p.spec!.nodeName!));
    }, { timeoutMs: 90_000, intervalMs: 250 });
    const events = async () => (await client.get<{ items: Array<{ reason: string; note?: string; regarding: { name: string }; reportingController?: string }> }>(`/apis/events.k8s.io/v1/namespaces/${ns}/events`))
      .items.filter((e) => e.reportingController === 'headroom.dev/controller');
    const cleanup = async () => {
      await ctl?.stop().catch(() => {});
      await client.request('DELETE', `/api/v1/namespaces/${ns}/pods`, { query: { gracePeriodSeconds: 0 } }).catch(() => {});
      await fixture.stop();
      await deleteTestNamespace(kc, ns).catch(() => {});
    };
    return { ns, start, replicas, createPods, runningOn, events, cycles, logs, cleanup };
  }

  it('a Machine that never becomes a Ready node is removed after the max provision time; the pods go to the next best group', async function () {
    this.timeout(150_000);
    const s = await scenario('pf-timeout', (g) => (g === 'cheap' ? 'never' : 'boot'));
    try {
      await s.start({ maxNodeProvisionMs: 4000, backoff: { initialMs: 60_000, maxMs: 120_000 } });
      const t0 = Date.now();
      await s.createPods(2);
      await eventually('cheap to be scaled up first', async () => (await s.replicas('cheap')) > 0, { timeoutMs: 30_000 });
      const groups = await s.runningOn(2);
      const placedMs = Date.now() - t0;
      expect(groups).to.deep.equal(['big', 'big']);
      expect(await s.replicas('cheap')).to.equal(0);
      // Acted on at the deadline, not at the next 30 s resync.
      expect(placedMs).to.be.below(25_000);
      const failures = s.cycles.flatMap((c) => c.provisionFailures ?? []);
      expect(failures.length).to.be.greaterThan(0);
      expect(failures.every((f) => f.kind === 'timeout' && f.group === `MachineDeployment/${s.ns}/cheap` && !f.error)).to.equal(true);
      const ev = await s.events();
      expect(ev.some((e) => e.regarding.name === 'cheap' && e.reason === 'ScaledDown' && /not a Ready node/.test(e.note ?? ''))).to.equal(true);
      console.log(`      [measure] never-booting Machine replaced: pods Running on the next group ${placedMs} ms after creation (max provision time 4000 ms)`);
    } finally {
      await s.cleanup();
    }
  });

  it('a Failed Machine (InsufficientCapacity) is replaced at once, long before the provision timeout', async function () {
    this.timeout(150_000);
    const s = await scenario('pf-failed', (g) => (g === 'cheap' ? 'fail' : 'boot'));
    try {
      await s.start({ maxNodeProvisionMs: 600_000 });
      const t0 = Date.now();
      await s.createPods(2);
      const groups = await s.runningOn(2);
      const placedMs = Date.now() - t0;
      expect(groups).to.deep.equal(['big', 'big']);
      expect(await s.replicas('cheap')).to.equal(0);
      const failures = s.cycles.flatMap((c) => c.provisionFailures ?? []);
      expect(failures.map((f) => f.kind)).to.include('failed');
      expect(placedMs).to.be.below(30_000);
      console.log(`      [measure] Failed Machine replaced: pods Running on the next group ${placedMs} ms after creation (max provision time 600 s)`);
    } finally {
      await s.cleanup();
    }
  });

  it('a paused group is left alone: not scaled, and the reason is in an event; the pods go to the other group', async function () {
    this.timeout(150_000);
    const s = await scenario('pf-paused', () => 'boot', { 'cluster.x-k8s.io/paused': '' });
    try {
      await s.start({});
      await s.createPods(2);
      const groups = await s.runningOn(2);
      expect(groups).to.deep.equal(['big', 'big']);
      expect(await s.replicas('cheap')).to.equal(0);
      const held = s.cycles.find((c) => c.held)?.held ?? {};
      expect(held[`MachineDeployment/${s.ns}/cheap`]).to.match(/paused/);
      const ev = await eventually('a NotScaledUp event on cheap', async () =>
        (await s.events()).find((e) => e.regarding.name === 'cheap' && e.reason === 'NotScaledUp'), { timeoutMs: 10_000 });
      expect(ev.note).to.match(/paused \(cluster\.x-k8s\.io\/paused\)/);
    } finally {
      await s.cleanup();
    }
  });
});
