import { expect } from 'chai';
import type { KubeConfig, V1Node, V1Pod } from '@kubernetes/client-node';
import { Controller } from '../../src/controller/controller.js';
import type { DisruptionReport } from '../../src/disruption/disruption-report.js';
import type { KubeClient } from '../../src/kube/kube-client.js';
import { FIXTURE_GROUP_NAME_LABEL, MachineFixture, fixtureNodeSelector } from '../harness/machine-fixture.js';
import { createTestNamespace, deleteTestNamespace } from '../harness/namespace.js';
import { eventually } from '../harness/wait.js';
import { deployment, machineDeployment, type GroupOptions } from './controller-objects.js';
import { sharedClient } from './hooks.js';
import { strandedPodInvariant } from './invariant.js';

/**
 * Underutilisation consolidation end to end on the real control plane
 * (kube-controller-manager recreates evicted Deployment pods, kube-scheduler binds them,
 * the machine fixture plays CAPI and kwok the kubelets), under the
 * Running-never-stranded invariant: a multi-node delete of two half-empty nodes, and a
 * single-node replace by one cheaper node.
 */
describe('disruption: consolidation of underutilised nodes on a real control plane', function () {
  let kc: KubeConfig;
  let client: KubeClient;

  before(async function () { ({ kc, client } = await sharedClient(this)); });
  after(() => client.close());
  const invariant = strandedPodInvariant(() => client);

  async function setup(prefix: string, groups: Array<Omit<GroupOptions, 'namespace' | 'labels'>>) {
    const ns = await createTestNamespace(kc, prefix);
    const fixture = await MachineFixture.start({ kubeConfig: kc, namespace: ns, bootDelayMs: 0, intervalMs: 100 });
    const selector = fixtureNodeSelector({ namespace: ns });
    const pool = `${ns}-pool`;
    const capi = `/apis/cluster.x-k8s.io/v1beta2/namespaces/${ns}`;
    for (const g of groups) {
      await client.request('POST', `${capi}/machinedeployments`, { body: machineDeployment({ ...g, namespace: ns, labels: { pool } }) });
    }
    const nodes = async () => (await client.get<{ items: V1Node[] }>('/api/v1/nodes', { labelSelector: selector })).items;
    const ready = (n: V1Node) => n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
    const initial = groups.reduce((a, g) => a + g.replicas, 0);
    await eventually(`${initial} Ready nodes`, async () => {
      const items = await nodes();
      return items.length === initial && items.every(ready);
    }, { timeoutMs: 60_000, intervalMs: 250 });
    const pods = async () => (await client.get<{ items: V1Pod[] }>(`/api/v1/namespaces/${ns}/pods`)).items;
    const running = (n: number) => eventually(`${n} pods Running`, async () => {
      const items = (await pods()).filter((p) => !p.metadata?.deletionTimestamp);
      return items.length === n && items.every((p) => p.status?.phase === 'Running') ? items : false;
    }, { timeoutMs: 60_000, intervalMs: 250 });
    const replicas = async (md: string) => (await client.get<{ spec: { replicas: number } }>(`${capi}/machinedeployments/${md}`)).spec.replicas;
    const reports: DisruptionReport[] = [];
    let ctl: Controller | undefined;
    const start = async () => {
      await client.request('POST', '/apis/headroom.dev/v1alpha1/nodepools', {
        body: {
          apiVersion: 'headroom.dev/v1alpha1', kind: 'NodePool', metadata: { name: pool },
          spec: {
            nodeGroupSelector: { matchLabels: { pool } },
            disruption: { consolidationPolicy: 'WhenEmptyOrUnderutilized', consolidateAfter: '3s', budgets: [{ nodes: '100%' }] },
          },
        },
      });
      ctl = new Controller({
        workload: kc, discovery: [{ namespace: ns, labels: {} }],
        workloadScope: { namespace: ns, nodeLabelSelector: selector },
        batch: { idleMs: 500, maxMs: 5000 },
        disruption: { intervalMs: 1000, settleMs: 500, drain: { pollMs: 250 }, consolidationDelayAfterAddMs: 0 },
        onDisruption: (r) => reports.push(r),
        log: () => {},
      });
      await ctl.start();
    };
    const cleanup = async () => {
      await ctl?.stop().catch(() => {});
      await client.request('DELETE', `/apis/apps/v1/namespaces/${ns}/deployments/web`).catch(() => {});
      await client.request('DELETE', `/api/v1/namespaces/${ns}/pods`, { query: { gracePeriodSeconds: 0 } }).catch(() => {});
      await client.request('DELETE', `/apis/headroom.dev/v1alpha1/nodepools/${pool}`).catch(() => {});
      await fixture.stop();
      await deleteTestNamespace(kc, ns).catch(() => {});
    };
    invariant.watch(ns, selector);
    return { ns, nodes, ready, running, replicas, reports, start, cleanup, stop: async () => { await ctl?.stop(); ctl = undefined; } };
  }

  it('two half-empty nodes are consolidated to one: the pods of one are evicted, recreated on the other, and its Machine goes', async function () {
    this.timeout(180_000);
    const t0 = Date.now();
    const s = await setup('consol-multi', [{ name: 'md', replicas: 2, min: 0, max: 4, cpu: '4', memory: '16Gi' }]);
    try {
      // One 1500m pod per 4-cpu node (kube-scheduler spreads a Deployment): each node under half used; both pods fit on one.
      await client.request('POST', `/apis/apps/v1/namespaces/${s.ns}/deployments`, { body: deployment(s.ns, 'web', 2, '1500m') });
      const before = await s.running(2);
      expect(new Set(before.map((p) => p.spec?.nodeName)).size, 'the pods start on two nodes').to.equal(2);
      await s.start();
      const removal = await eventually('one node removed as underutilised', async () => s.reports.flatMap((r) => r.removals).find((r) => r.result?.written) ?? false, { timeoutMs: 90_000, intervalMs: 250 });
      expect(removal.reason).to.equal('Underutilized');
      expect(removal.podUids).to.have.length(1);
      const survivor = before.map((p) => p.spec!.nodeName!).find((n) => n !== removal.node)!;
      const after = await s.running(2);
      expect(after.map((p) => p.spec?.nodeName)).to.deep.equal([survivor, survivor]);
      await eventually('md at 1 replica, one node left', async () => (await s.replicas('md')) === 1 && (await s.nodes()).length === 1, { timeoutMs: 60_000, intervalMs: 250 });
      // The survivor is not consolidated away too: its pods would need a new node.
      await new Promise((r) => setTimeout(r, 4000));
      expect(await s.replicas('md')).to.equal(1);
      expect(s.reports.flatMap((r) => r.removals).filter((r) => r.result?.written)).to.have.length(1);
      await s.stop();
      console.log(`      [measure] multi-node consolidation: ${removal.node} removed, 2 pods Running on ${survivor}; test ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    } finally {
      await s.cleanup();
    }
  });

  it('a cheaper replacement happens: a big node running one small pod is replaced by a new small node, then drained and removed', async function () {
    this.timeout(180_000);
    const t0 = Date.now();
    const s = await setup('consol-replace', [
      { name: 'big', replicas: 1, min: 0, max: 2, cpu: '8', memory: '32Gi' },
      { name: 'small', replicas: 0, min: 0, max: 2, cpu: '2', memory: '8Gi' },
    ]);
    try {
      await client.request('POST', `/apis/apps/v1/namespaces/${s.ns}/deployments`, { body: deployment(s.ns, 'web', 1, '1') });
      const [pod] = await s.running(1);
      const bigNode = pod!.spec!.nodeName!;
      await s.start();
      // The small group is scaled up first; the big node goes only once the new one is Ready.
      const removal = await eventually('the big node removed for its cheaper replacement', async () => s.reports.flatMap((r) => r.removals).find((r) => r.result?.written) ?? false, { timeoutMs: 120_000, intervalMs: 250 });
      expect(removal.reason).to.equal('Underutilized');
      expect(removal.node).to.equal(bigNode);
      expect(await s.replicas('small')).to.equal(1);
      const [moved] = await s.running(1);
      const nodes = await s.nodes();
      const groupOf = new Map(nodes.map((n) => [n.metadata!.name!, n.metadata?.labels?.[FIXTURE_GROUP_NAME_LABEL]]));
      expect(groupOf.get(moved!.spec!.nodeName!)).to.equal('small');
      expect(moved!.metadata!.uid).to.not.equal(pod!.metadata!.uid);
      await eventually('big at 0 replicas and its node gone', async () => (await s.replicas('big')) === 0 && (await s.nodes()).every((n) => n.metadata?.name !== bigNode), { timeoutMs: 60_000, intervalMs: 250 });
      await s.stop();
      console.log(`      [measure] single-node replace: ${bigNode} (big) replaced by ${moved!.spec!.nodeName} (small); test ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    } finally {
      await s.cleanup();
    }
  });
});
