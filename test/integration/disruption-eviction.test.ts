import { expect } from 'chai';
import type { KubeConfig, V1Node, V1Pod } from '@kubernetes/client-node';
import { Controller } from '../../src/controller/controller.js';
import { KubeDisruptionNodes } from '../../src/controller/kube-disruption-nodes.js';
import type { DisruptionReport } from '../../src/disruption/disruption-report.js';
import type { KubeClient } from '../../src/kube/kube-client.js';
import { MachineFixture, fixtureNodeSelector } from '../harness/machine-fixture.js';
import { createTestNamespace, deleteTestNamespace } from '../harness/namespace.js';
import { eventually } from '../harness/wait.js';
import { deployment, machineDeployment } from './controller-objects.js';
import { sharedClient } from './hooks.js';
import { StrandedPodWatcher, strandedPodInvariant } from './invariant.js';

/**
 * Termination through the Eviction API on the real control plane (kube-controller-manager
 * recreates evicted Deployment pods and keeps PDB status; kube-scheduler binds them;
 * kwok runs them), under the Running-never-stranded invariant (invariant.ts), which is
 * shown to fail on a deliberately unsafe plan.
 */
describe('disruption: eviction, PDBs and the stranded-pod invariant on a real control plane', function () {
  let kc: KubeConfig;
  let client: KubeClient;

  before(async function () { ({ kc, client } = await sharedClient(this)); });
  after(() => client.close());
  const invariant = strandedPodInvariant(() => client);

  async function setup(prefix: string, replicas: number) {
    const ns = await createTestNamespace(kc, prefix);
    const fixture = await MachineFixture.start({ kubeConfig: kc, namespace: ns, bootDelayMs: 0, intervalMs: 100 });
    const selector = fixtureNodeSelector({ namespace: ns });
    const pool = `${ns}-pool`;
    await client.request('POST', `/apis/cluster.x-k8s.io/v1beta2/namespaces/${ns}/machinedeployments`, {
      body: machineDeployment({ namespace: ns, name: 'md', replicas, min: 0, max: 4, cpu: '4', memory: '16Gi', labels: { pool } }),
    });
    const nodes = async () => (await client.get<{ items: V1Node[] }>('/api/v1/nodes', { labelSelector: selector })).items;
    await eventually(`${replicas} Ready nodes`, async () => {
      const items = await nodes();
      return items.length === replicas && items.every((n) => n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'));
    }, { timeoutMs: 60_000, intervalMs: 250 });
    const pods = async () => (await client.get<{ items: V1Pod[] }>(`/api/v1/namespaces/${ns}/pods`)).items;
    const cleanup = async () => {
      await client.request('DELETE', `/apis/apps/v1/namespaces/${ns}/deployments/web`).catch(() => {});
      await client.request('DELETE', `/api/v1/namespaces/${ns}/pods`, { query: { gracePeriodSeconds: 0 } }).catch(() => {});
      await client.request('DELETE', `/apis/headroom.dev/v1alpha1/nodepools/${pool}`).catch(() => {});
      await fixture.stop();
      await deleteTestNamespace(kc, ns).catch(() => {});
    };
    return { ns, selector, pool, nodes, pods, cleanup };
  }

  async function running(pods: () => Promise<V1Pod[]>, n: number): Promise<V1Pod[]> {
    return eventually(`${n} pods Running`, async () => {
      const items = (await pods()).filter((p) => !p.metadata?.deletionTimestamp);
      return items.length === n && items.every((p) => p.status?.phase === 'Running') ? items : false;
    }, { timeoutMs: 60_000, intervalMs: 250 });
  }

  it('the invariant fails on a deliberately unsafe plan: a node tainted and drained while its pods have nowhere else to go', async function () {
    this.timeout(150_000);
    const s = await setup('inv-unsafe', 1);
    const watcher = new StrandedPodWatcher(client, s.ns, { nodeLabelSelector: s.selector, graceMs: 5000 });
    try {
      await client.request('POST', `/apis/apps/v1/namespaces/${s.ns}/deployments`, { body: deployment(s.ns, 'web', 2, '1') });
      await running(s.pods, 2);
      watcher.start();
      // The unsafe plan: taint the only node and evict its pods, with no cancellation.
      const port = new KubeDisruptionNodes(client);
      const [node] = await s.nodes();
      await port.taintNode(node!.metadata!.name!);
      for (const p of await s.pods()) await port.evictPod({ namespace: s.ns, name: p.metadata!.name!, uid: p.metadata!.uid! });
      await eventually('the invariant reports a stranded pod', async () => watcher.violations.length > 0, { timeoutMs: 60_000, intervalMs: 250 });
      await watcher.stop();
      expect(() => watcher.assertHeld()).to.throw(new RegExp(`Pending \\d+ s while node ${node!.metadata!.name} had room`));
    } finally {
      await watcher.stop();
      await s.cleanup();
    }
  });

  it('expiry drains a node through the Eviction API (pods recreated elsewhere, then the Machine goes); a PDB with maxUnavailable 0 blocks it', async function () {
    this.timeout(240_000);
    const s = await setup('evict', 2);
    const reports: DisruptionReport[] = [];
    let ctl: Controller | undefined;
    const replicas = async () => (await client.get<{ spec: { replicas: number } }>(`/apis/cluster.x-k8s.io/v1beta2/namespaces/${s.ns}/machinedeployments/md`)).spec.replicas;
    try {
      // Two 1-cpu pods on two 4-cpu nodes; either node's pods fit on the other. The node
      // of the first pod (X) is the one to go: the other is annotated do-not-disrupt.
      await client.request('POST', `/apis/apps/v1/namespaces/${s.ns}/deployments`, { body: deployment(s.ns, 'web', 2, '1') });
      const before = await running(s.pods, 2);
      const x = before[0]!.spec!.nodeName!;
      const onX = new Set(before.filter((p) => p.spec?.nodeName === x).map((p) => p.metadata!.uid!));
      const y = (await s.nodes()).map((n) => n.metadata!.name!).find((n) => n !== x)!;
      await client.request('PATCH', `/api/v1/nodes/${y}`, {
        contentType: 'application/merge-patch+json', body: { metadata: { annotations: { 'karpenter.sh/do-not-disrupt': 'true' } } },
      });
      // maxUnavailable 0: kube-controller-manager reports disruptionsAllowed 0.
      await client.request('POST', `/apis/policy/v1/namespaces/${s.ns}/poddisruptionbudgets`, {
        body: { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { namespace: s.ns, name: 'web' }, spec: { maxUnavailable: 0, selector: { matchLabels: { app: 'web' } } } },
      });
      await eventually('PDB status reported', async () => {
        const pdb = await client.get<{ status?: { expectedPods?: number } }>(`/apis/policy/v1/namespaces/${s.ns}/poddisruptionbudgets/web`);
        return pdb.status?.expectedPods === 2;
      }, { timeoutMs: 30_000, intervalMs: 250 });
      await client.request('POST', '/apis/headroom.dev/v1alpha1/nodepools', {
        body: {
          apiVersion: 'headroom.dev/v1alpha1', kind: 'NodePool', metadata: { name: s.pool },
          spec: { nodeGroupSelector: { matchLabels: { pool: s.pool } }, disruption: { consolidateAfter: 'Never', expireAfter: '5s', budgets: [{ nodes: '100%' }] } },
        },
      });
      const watcher = invariant.watch(s.ns, s.selector);
      ctl = new Controller({
        workload: kc, discovery: [{ namespace: s.ns, labels: {} }],
        workloadScope: { namespace: s.ns, nodeLabelSelector: s.selector },
        batch: { idleMs: 500, maxMs: 5000 },
        disruption: { intervalMs: 1000, settleMs: 500, drain: { pollMs: 250 } },
        onDisruption: (r) => reports.push(r),
        log: () => {},
      });
      await ctl.start();

      // Blocked by the PDB: kept, with the PDB named, and nothing written.
      const kept = await eventually('kept by the PDB', async () => reports.flatMap((r) => r.kept).find((k) => /PodDisruptionBudget .*\/web allows 0/.test(k.why)) ?? false, { timeoutMs: 30_000, intervalMs: 250 });
      expect(kept.node).to.equal(x);
      expect(kept.why).to.match(new RegExp(`the plan needs ${onX.size}$`));
      await new Promise((r) => setTimeout(r, 3000));
      expect(reports.flatMap((r) => r.removals)).to.deep.equal([]);
      expect(await replicas()).to.equal(2);

      // Without the PDB, the oldest expired node whose pod fits on the other goes: evicted first, then removed.
      await client.request('DELETE', `/apis/policy/v1/namespaces/${s.ns}/poddisruptionbudgets/web`);
      const removal = await eventually('one node removed for expiry', async () => reports.flatMap((r) => r.removals).find((r) => r.result?.written) ?? false, { timeoutMs: 60_000, intervalMs: 250 });
      expect(removal.reason).to.equal('Expired');
      expect(removal.node).to.equal(x);
      const after = await running(s.pods, 2);
      // X's pods were evicted (new pods, by their ReplicaSet) and run on the node that stays.
      expect(after.map((p) => p.spec?.nodeName)).to.deep.equal([y, y]);
      expect(after.filter((p) => onX.has(p.metadata!.uid!))).to.deep.equal([]);
      await eventually('replicas 1', async () => (await replicas()) === 1, { timeoutMs: 30_000, intervalMs: 250 });
      // The survivor is do-not-disrupt (and its pods would need a new node): it stays.
      await new Promise((r) => setTimeout(r, 4000));
      expect(await replicas()).to.equal(1);
      await ctl.stop();
      ctl = undefined;
      expect(watcher.polls).to.be.greaterThan(10);
    } finally {
      await ctl?.stop().catch(() => {});
      await s.cleanup();
    }
  });
});
