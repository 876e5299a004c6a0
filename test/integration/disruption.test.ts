import { expect } from 'chai';
import type { KubeConfig, V1Node, V1Pod } from '@kubernetes/client-node';
import { Registry } from 'prom-client';
import type { UnstructuredObject } from '../../src/api/unstructured-object.js';
import type { KubeClient } from '../../src/kube/kube-client.js';
import { MachineFixture, fixtureNodeSelector } from '../harness/machine-fixture.js';
import { createTestNamespace, deleteTestNamespace } from '../harness/namespace.js';
import { eventually } from '../harness/wait.js';
import { sharedClient } from './hooks.js';
import { Controller } from '../../src/controller/controller.js';
import type { DisruptionReport } from '../../src/disruption/disruption-report.js';
import { machineDeployment, pendingPod } from './controller-objects.js';
import { DISRUPTION_TAINT_KEY } from '../../src/api/disruption-taint.js';
import { strandedPodInvariant } from './invariant.js';

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

  before(async function () { ({ kc, client } = await sharedClient(this)); });
  after(() => client.close());
  const invariant = strandedPodInvariant(() => client);

  it('removes emptied nodes after consolidateAfter via delete-machine, keeps the node with a pod, holds min size', async function () {
    this.timeout(150_000);
    const ns = await createTestNamespace(kc, 'disrupt');
    const fixture = await MachineFixture.start({ kubeConfig: kc, namespace: ns, bootDelayMs: 0, intervalMs: 100 });
    const reports: DisruptionReport[] = [];
    const logs: string[] = [];
    let ctl: Controller | undefined;
    const selector = fixtureNodeSelector({ namespace: ns });
    invariant.watch(ns, selector);
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
      const text = await registry.metrics();
      expect(text).to.match(new RegExp(`^headroom_nodes_terminated_total\\{nodepool="[^"]*",reason="empty"\\} ${peak - 1}$`, 'm'));
      expect(text).to.include(`headroom_voluntary_disruption_decisions_total{decision="delete",reason="empty"} ${peak - 1}`);
      // One replicas write per group and pass: the empty nodes of a pass go in one deleteMachines.
      expect(text).to.match(/^headroom_cloudprovider_duration_seconds_count\{method="deleteMachines"\} [1-9]/m);

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

  it('a pod bound to the chosen node between the decision and the delete stops the delete, and the node is untainted', async function () {
    this.timeout(150_000);
    const ns = await createTestNamespace(kc, 'disrupt-race');
    const fixture = await MachineFixture.start({ kubeConfig: kc, namespace: ns, bootDelayMs: 0, intervalMs: 100 });
    const reports: DisruptionReport[] = [];
    let ctl: Controller | undefined;
    const selector = fixtureNodeSelector({ namespace: ns });
    invariant.watch(ns, selector);
    const nodes = async () => (await client.get<{ items: V1Node[] }>('/api/v1/nodes', { labelSelector: selector })).items;
    const capi = `/apis/cluster.x-k8s.io/v1beta2/namespaces/${ns}`;
    const replicas = async () => (await client.get<{ spec: { replicas: number } }>(`${capi}/machinedeployments/md`)).spec.replicas;
    const tainted = (n: V1Node) => (n.spec?.taints ?? []).some((t) => t.key === DISRUPTION_TAINT_KEY && t.effect === 'NoSchedule');
    try {
      await client.request('POST', `${capi}/machinedeployments`, {
        body: machineDeployment({ namespace: ns, name: 'md', replicas: 2, min: 0, max: 3, cpu: '4', memory: '16Gi' }),
      });
      await eventually('two nodes', async () => ((await nodes()).length === 2 ? true : false), { timeoutMs: 60_000, intervalMs: 250 });
      ctl = new Controller({
        workload: kc, discovery: [{ namespace: ns, labels: {} }],
        workloadScope: { namespace: ns, nodeLabelSelector: selector },
        batch: { idleMs: 500, maxMs: 5000 },
        // A long settle: the window in which the test binds a pod to the tainted node.
        disruption: { intervalMs: 1000, defaultConsolidateAfterMs: 1000, settleMs: 5000 },
        onDisruption: (r) => reports.push(r),
        log: () => {},
      });
      await ctl.start();

      // The Disruptor decides on one of the two empty nodes (10% of 2 -> 1 at a time) and taints it.
      const chosen = await eventually('a node tainted headroom.dev/disrupted', async () => (await nodes()).find(tainted) ?? false, { timeoutMs: 60_000, intervalMs: 100 });
      const name = chosen.metadata!.name!;
      // Between the decision and the delete, a pod is bound to that node (straight to nodeName, as a binding does).
      const pod = { ...pendingPod(ns, 'late', '1'), spec: { ...pendingPod(ns, 'late', '1').spec, nodeName: name } };
      await client.request('POST', `/api/v1/namespaces/${ns}/pods`, { body: pod });

      const kept = await eventually('the removal called off on the fresh look', async () => reports.flatMap((r) => r.kept).find((k) => k.node === name && /fresh look/.test(k.why)) ?? false, { timeoutMs: 30_000, intervalMs: 100 });
      expect(kept.why).to.match(new RegExp(`pod ${ns}/late was bound to the node after the decision`));
      await eventually('the node untainted', async () => {
        const n = (await nodes()).find((x) => x.metadata?.name === name);
        return n !== undefined && !tainted(n);
      }, { timeoutMs: 10_000, intervalMs: 100 });
      // Nothing was written for it: no removal reported, its Machine is not marked, replicas did not drop for it.
      expect(reports.flatMap((r) => r.removals).filter((r) => r.node === name)).to.deep.equal([]);
      const machines = (await client.get<{ items: UnstructuredObject[] }>(`${capi}/machines`)).items;
      const mine = machines.find((m) => (m.status as { nodeRef?: { name?: string } } | undefined)?.nodeRef?.name === name)!;
      expect(mine.metadata?.annotations?.['cluster.x-k8s.io/delete-machine']).to.equal(undefined);
      expect(mine.metadata?.deletionTimestamp).to.equal(undefined);
      await ctl.stop();
      ctl = undefined;
      // The other, still empty node may have gone in the meantime; the one with the pod stays.
      expect(await replicas()).to.be.at.least(1);
      expect((await nodes()).map((n) => n.metadata?.name)).to.include(name);
      const late = await client.get<V1Pod>(`/api/v1/namespaces/${ns}/pods/late`);
      expect(late.spec?.nodeName).to.equal(name);
    } finally {
      await ctl?.stop().catch(() => {});
      await client.request('DELETE', `/api/v1/namespaces/${ns}/pods`, { query: { gracePeriodSeconds: 0 } }).catch(() => {});
      await fixture.stop();
      await deleteTestNamespace(kc, ns).catch(() => {});
    }
  });

  it('a NodePool budget of 0 blocks during its schedule and allows outside it; headroom.dev/do-not-disrupt keeps its node', async function () {
    this.timeout(150_000);
    const ns = await createTestNamespace(kc, 'disrupt-budget');
    const fixture = await MachineFixture.start({ kubeConfig: kc, namespace: ns, bootDelayMs: 0, intervalMs: 100 });
    const reports: DisruptionReport[] = [];
    let ctl: Controller | undefined;
    const selector = fixtureNodeSelector({ namespace: ns });
    invariant.watch(ns, selector);
    const nodes = async () => (await client.get<{ items: V1Node[] }>('/api/v1/nodes', { labelSelector: selector })).items;
    const capi = `/apis/cluster.x-k8s.io/v1beta2/namespaces/${ns}`;
    const poolName = `${ns}-budget`;
    const pools = '/apis/headroom.dev/v1alpha1/nodepools';
    try {
      await client.request('POST', `${capi}/machinedeployments`, {
        body: machineDeployment({ namespace: ns, name: 'md', replicas: 3, min: 0, max: 3, cpu: '4', memory: '16Gi', labels: { pool: poolName } }),
      });
      // In force all the time (every minute, for an hour): nothing may go.
      await client.request('POST', pools, {
        body: {
          apiVersion: 'headroom.dev/v1alpha1', kind: 'NodePool', metadata: { name: poolName },
          spec: {
            nodeGroupSelector: { matchLabels: { pool: poolName } },
            disruption: { consolidationPolicy: 'WhenEmpty', consolidateAfter: '1s', budgets: [{ nodes: '100%' }, { nodes: '0', schedule: '* * * * *', duration: '1h' }] },
          },
        },
      });
      const three = await eventually('three nodes', async () => { const n = await nodes(); return n.length === 3 ? n : false; }, { timeoutMs: 60_000, intervalMs: 250 });
      const kept = three[0]!.metadata!.name!;
      await client.request('PATCH', `/api/v1/nodes/${kept}`, {
        contentType: 'application/merge-patch+json', body: { metadata: { annotations: { 'headroom.dev/do-not-disrupt': 'true' } } },
      });
      ctl = new Controller({
        workload: kc, discovery: [{ namespace: ns, labels: {} }],
        workloadScope: { namespace: ns, nodeLabelSelector: selector },
        batch: { idleMs: 500, maxMs: 5000 },
        disruption: { intervalMs: 1000, settleMs: 500 },
        onDisruption: (r) => reports.push(r),
        log: () => {},
      });
      await ctl.start();
      await eventually('passes blocked by the scheduled budget', async () => reports.flatMap((r) => r.kept).filter((k) => /allows 0 node/.test(k.why)).length >= 4, { timeoutMs: 30_000, intervalMs: 200 });
      expect(reports.flatMap((r) => r.removals)).to.deep.equal([]);
      expect((await nodes()).length).to.equal(3);

      // Outside its schedule (once a year, for a minute, not now): the empty nodes go, the do-not-disrupt one stays.
      const now = new Date();
      const away = `0 0 1 ${((now.getUTCMonth() + 6) % 12) + 1} *`;
      await client.request('PATCH', `${pools}/${poolName}`, {
        contentType: 'application/merge-patch+json',
        body: { spec: { disruption: { budgets: [{ nodes: '100%' }, { nodes: '0', schedule: away, duration: '1m' }] } } },
      });
      const left = await eventually('only the do-not-disrupt node left', async () => { const n = await nodes(); return n.length === 1 ? n : false; }, { timeoutMs: 60_000, intervalMs: 250 });
      expect(left[0]!.metadata?.name).to.equal(kept);
      const removed = reports.flatMap((r) => r.removals);
      expect(removed.map((r) => r.node).sort()).to.deep.equal(three.slice(1).map((n) => n.metadata!.name!).sort());
      expect(removed.every((r) => r.reason === 'Empty' && r.result?.written === true)).to.equal(true);
    } finally {
      await ctl?.stop().catch(() => {});
      await client.request('DELETE', `${pools}/${poolName}`).catch(() => {});
      await fixture.stop();
      await deleteTestNamespace(kc, ns).catch(() => {});
    }
  });
});
