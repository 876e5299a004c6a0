import { expect } from 'chai';
import type { KubeConfig, V1Node, V1Pod } from '@kubernetes/client-node';
import { Registry } from 'prom-client';
import { MachineFixture, fixtureNodeSelector } from '../harness/machine-fixture.js';
import { createTestNamespace, deleteTestNamespace } from '../harness/namespace.js';
import { eventually } from '../harness/wait.js';
import { sharedControlPlane } from './hooks.js';
import { KubeClient } from '../../src/controller/kube-client.js';
import { Controller } from '../../src/controller/controller.js';
import type { DisruptionReport } from '../../src/disruption/disruptor.js';
import type { UnstructuredObject } from '../../src/cluster/objects.js';
import { machineDeployment, pendingPod } from './controller-objects.js';

/**
 * Disruption end to end on the real control plane: the controller scales a
 * MachineDeployment up for pods (machine fixture -> kwok Nodes, real
 * kube-scheduler); most pods are deleted; the leader's Disruptor removes the
 * emptied nodes through delete-machine + a replicas decrement after
 * consolidateAfter, keeps the node that still runs a pod, and stops at min size.
 */
describe('disruption on a real control plane', function () {
  let kc: KubeConfig;
  let client: KubeClient;

  before(async function () {
    this.timeout(180_000);
    kc = (await sharedControlPlane()).kubeConfig();
    client = new KubeClient(kc);
  });
  after(() => client.close());

  it('removes emptied nodes after consolidateAfter via delete-machine, keeps the node with a pod, holds min size', async function () {
    this.timeout(150_000);
    const ns = await createTestNamespace(kc, 'disrupt');
    const fixture = await MachineFixture.start({ kubeConfig: kc, namespace: ns, bootDelayMs: 0, intervalMs: 100 });
    const reports: DisruptionReport[] = [];
    const logs: string[] = [];
    let ctl: Controller | undefined;
    const selector = fixtureNodeSelector({ namespace: ns });
    const nodes = async () => (await client.get<{ items: V1Node[] }>('/api/v1/nodes', { labelSelector: selector })).items;
    const pods = async () => (await client.get<{ items: V1Pod[] }>(`/api/v1/namespaces/${ns}/pods`)).items;
    const replicas = async () => (await client.get<{ spec: { replicas: number } }>(`/apis/cluster.x-k8s.io/v1beta2/namespaces/${ns}/machinedeployments/md`)).spec.replicas;
    try {
      await client.request('POST', `/apis/cluster.x-k8s.io/v1beta2/namespaces/${ns}/machinedeployments`, {
        body: machineDeployment({ namespace: ns, name: 'md', replicas: 1, min: 1, max: 6, cpu: '4', memory: '16Gi' }),
      });
      const consolidateAfterMs = 5000;
      const registry = new Registry();
      ctl = new Controller({
        workload: kc, discovery: [{ namespace: ns, labels: {} }],
        workloadScope: { namespace: ns, nodeLabelSelector: selector },
        batch: { idleMs: 500, maxMs: 5000 }, registry,
        disruption: { intervalMs: 1000, defaultConsolidateAfterMs: consolidateAfterMs },
        onDisruption: (r) => reports.push(r),
        log: (m) => logs.push(m),
      });
      await ctl.start();

      // 10 one-cpu pods on 4-cpu nodes: at least 3 nodes.
      await Promise.all(Array.from({ length: 10 }, (_, i) => client.request('POST', `/api/v1/namespaces/${ns}/pods`, { body: pendingPod(ns, `p-${i}`, '1') })));
      const running = await eventually('10 pods Running', async () => {
        const items = await pods();
        return items.length === 10 && items.every((p) => p.status?.phase === 'Running') ? items : false;
      }, { timeoutMs: 90_000, intervalMs: 250 });
      const peak = await replicas();
      expect(peak).to.be.at.least(3);
      // Nodes that ran our pods; the solver may also have added one that never got a pod.
      const busy = new Set(running.map((p) => p.spec!.nodeName!));
      expect(reports.flatMap((r) => r.removals).filter((r) => busy.has(r.node))).to.deep.equal([]);

      // Keep one pod; delete the rest.
      const keep = (await pods()).find((p) => p.metadata?.name === 'p-0')!;
      const keepNode = keep.spec!.nodeName!;
      const deletedAt = Date.now();
      await Promise.all(Array.from({ length: 9 }, (_, i) => client.request('DELETE', `/api/v1/namespaces/${ns}/pods/p-${i + 1}`, { query: { gracePeriodSeconds: 0 } })));

      // Down to min size (1): the one node left is the kept pod's.
      const left = await eventually('one node left', async () => {
        const items = await nodes();
        return items.length === 1 && (await replicas()) === 1 ? items : false;
      }, { timeoutMs: 60_000, intervalMs: 250 });
      expect(left[0]!.metadata?.name).to.equal(keepNode);
      const survivor = (await pods()).find((p) => p.metadata?.name === 'p-0');
      expect(survivor?.spec?.nodeName).to.equal(keepNode);
      expect(survivor?.status?.phase).to.equal('Running');

      const removals = reports.flatMap((r) => r.removals);
      expect(removals).to.have.length(peak - 1);
      for (const r of removals) {
        expect(r.reason).to.equal('Empty');
        expect(r.result?.written).to.equal(true);
        expect(r.node).to.not.equal(keepNode);
        expect(r.machine).to.match(new RegExp(`^${ns}/`));
      }
      // A node that ran pods goes only consolidateAfter after they were deleted, as the
      // controller's cache saw it: a watch lagging behind the binding can make a node look
      // empty a little earlier (seen up to ~1.2 s on a busy shared control plane), hence the slack.
      for (const r of reports) {
        for (const x of r.removals) if (busy.has(x.node)) expect(r.startedAt - deletedAt).to.be.at.least(consolidateAfterMs - 2000);
      }
      expect(removals.filter((x) => busy.has(x.node))).to.have.length(busy.size - 1);
      // Removal goes through the actuator's delete-machine + decrement, which logs it.
      expect(logs.filter((l) => /removing Machine .* node empty/.test(l))).to.have.length(peak - 1);
      expect(await registry.metrics()).to.include(`headroom_disruptions_total{reason="Empty",kind="MachineDeployment",namespace="${ns}",name="md"} ${peak - 1}`);

      // It stays at min size: the kept node is not touched, even after more passes.
      await new Promise((r) => setTimeout(r, consolidateAfterMs + 2000));
      expect(await replicas()).to.equal(1);
      expect((await nodes()).map((n) => n.metadata?.name)).to.deep.equal([keepNode]);
      const machines = (await client.get<{ items: UnstructuredObject[] }>(`/apis/cluster.x-k8s.io/v1beta2/namespaces/${ns}/machines`)).items;
      expect(machines.filter((m) => !m.metadata?.deletionTimestamp)).to.have.length(1);
    } finally {
      await ctl?.stop().catch(() => {});
      await client.request('DELETE', `/api/v1/namespaces/${ns}/pods`, { query: { gracePeriodSeconds: 0 } }).catch(() => {});
      await fixture.stop();
      await deleteTestNamespace(kc, ns).catch(() => {});
    }
  });
});
