import { expect } from 'chai';
import type { KubeConfig, V1Node, V1Pod } from '@kubernetes/client-node';
import { Registry } from 'prom-client';
import type { UnstructuredObject } from '../../src/api/unstructured-object.js';
import { Informer } from '../../src/kube/informer.js';
import { KubeClient } from '../../src/kube/kube-client.js';
import { startControlPlane } from '../harness/control-plane.js';
import { MachineFixture, fixtureNodeSelector } from '../harness/machine-fixture.js';
import { createTestNamespace, deleteTestNamespace } from '../harness/namespace.js';
import { eventually, isNodeReady, waitForReadyNodes } from '../harness/wait.js';
import { sharedClient } from './hooks.js';
import { Controller, type ControllerOptions } from '../../src/controller/controller.js';
import type { CycleReport } from '../../src/provisioning/cycle-report.js';
import { machineDeployment, machinePool, pendingPod, type GroupOptions } from './controller-objects.js';

/**
 * `headroom controller` end to end on the real control plane: pending pods ->
 * informers -> batch -> solve -> scale subresource; the machine fixture turns
 * replicas into kwok Nodes; the real kube-scheduler binds the pods; kwok runs them.
 * Each test uses its own namespace, and the controller watches only that
 * namespace's pods and the fixture's Nodes of it (the cluster is shared).
 */

const percentile = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
};

describe('headroom controller on a real control plane', function () {
  let kc: KubeConfig;
  let client: KubeClient;

  before(async function () { ({ kc, client } = await sharedClient(this)); });
  after(() => client.close());

  /** A namespace, a machine fixture in it, and controllers scoped to it. */
  async function scenario(prefix: string, fixtureOpts: { bootDelayMs?: number } = {}) {
    const ns = await createTestNamespace(kc, prefix);
    const fixture = await MachineFixture.start({ kubeConfig: kc, namespace: ns, bootDelayMs: fixtureOpts.bootDelayMs ?? 0, intervalMs: 100 });
    const controllers: Controller[] = [];
    const cycles: CycleReport[] = [];
    const logs: string[] = [];
    const startController = async (extra: Partial<ControllerOptions> = {}) => {
      const c = new Controller({
        workload: kc,
        discovery: [{ namespace: ns, labels: {} }],
        workloadScope: { namespace: ns, nodeLabelSelector: fixtureNodeSelector({ namespace: ns }) },
        batch: { idleMs: 1000, maxMs: 10_000 },
        registry: new Registry(),
        log: (m) => logs.push(`${new Date().toISOString()} ${m}`),
        onCycle: (r) => cycles.push(r),
        ...extra,
      });
      controllers.push(c);
      await c.start();
      return c;
    };
    const createGroup = async (kind: 'MachineDeployment' | 'MachinePool', o: Omit<GroupOptions, 'namespace'>) => {
      const body = kind === 'MachineDeployment' ? machineDeployment({ ...o, namespace: ns }) : machinePool({ ...o, namespace: ns });
      const plural = kind === 'MachineDeployment' ? 'machinedeployments' : 'machinepools';
      return client.request<UnstructuredObject>('POST', `/apis/cluster.x-k8s.io/v1beta2/namespaces/${ns}/${plural}`, { body });
    };
    const replicas = async (kind: 'machinedeployments' | 'machinepools', name: string) =>
      (await client.get<{ spec: { replicas: number } }>(`/apis/cluster.x-k8s.io/v1beta2/namespaces/${ns}/${kind}/${name}`)).spec.replicas;
    const createPods = async (prefixName: string, count: number, cpu: string) => {
      const created = new Map<string, number>();
      await Promise.all(Array.from({ length: count }, async (_, i) => {
        const name = `${prefixName}-${i}`;
        await client.request('POST', `/api/v1/namespaces/${ns}/pods`, { body: pendingPod(ns, name, cpu) });
        created.set(name, Date.now());
      }));
      return created;
    };
    const pods = async () => (await client.get<{ items: V1Pod[] }>(`/api/v1/namespaces/${ns}/pods`)).items;
    const allRunning = (count: number) => eventually(`${count} pods Running in ${ns}`, async () => {
      const items = await pods();
      return items.length === count && items.every((p) => p.status?.phase === 'Running') ? items : false;
    }, { timeoutMs: 90_000, intervalMs: 250 });
    const cleanup = async () => {
      for (const c of controllers) await c.stop().catch(() => {});
      await client.request('DELETE', `/api/v1/namespaces/${ns}/pods`, { query: { gracePeriodSeconds: 0 } }).catch(() => {});
      await fixture.stop();
      await deleteTestNamespace(kc, ns).catch(() => {});
    };
    return { ns, fixture, startController, createGroup, replicas, createPods, pods, allRunning, cycles, logs, cleanup, controllers };
  }

  for (const idleMs of [1000, 100]) {
  it(`raises MachineDeployment replicas for a 100-pod burst; kube-scheduler binds them to the new kwok nodes (batch idle ${idleMs} ms; latency and writes measured)`, async function () {
    this.timeout(180_000);
    const s = await scenario('ctl-md');
    try {
      await s.createGroup('MachineDeployment', { name: 'md', replicas: 0, min: 0, max: 20, cpu: '4', memory: '16Gi' });
      const registry = new Registry();
      const ctl = await s.startController({ batch: { idleMs, maxMs: 10_000 }, registry });
      // Watch pod phases from the test, for per-pod latency at event resolution.
      const running = new Map<string, number>();
      const bound = new Map<string, number>();
      const podWatch = new Informer<V1Pod>(client, { group: '', version: 'v1', plural: 'pods', namespace: s.ns });
      podWatch.onChange((ch) => {
        const p = ch.object as V1Pod | undefined;
        if (!p?.metadata?.name) return;
        if (p.spec?.nodeName && !bound.has(p.metadata.name)) bound.set(p.metadata.name, Date.now());
        if (p.status?.phase === 'Running' && !running.has(p.metadata.name)) running.set(p.metadata.name, Date.now());
      });
      podWatch.start();
      const nodeReady = new Map<string, number>();
      const nodeWatch = new Informer<V1Node>(client, { group: '', version: 'v1', plural: 'nodes', labelSelector: fixtureNodeSelector({ namespace: s.ns }) });
      nodeWatch.onChange((ch) => {
        const n = ch.object as V1Node | undefined;
        if (n?.metadata?.name && isNodeReady(n) && !nodeReady.has(n.metadata.name)) nodeReady.set(n.metadata.name, Date.now());
      });
      nodeWatch.start();
      await podWatch.waitForSync();
      await nodeWatch.waitForSync();
      const writesBefore = { ...ctl.actuator!.capiWrites };
      const burstStart = Date.now();
      const created = await s.createPods('burst', 100, '300m');
      const burstCreated = Date.now();
      const items = await s.allRunning(100);
      const allRunningAt = Date.now();
      podWatch.stop();
      nodeWatch.stop();
      const rel = (xs: Iterable<number>) => {
        const a = [...xs].map((t) => t - burstStart);
        return a.length ? `${Math.min(...a)}..${Math.max(...a)} ms` : 'none';
      };
      console.log(`      [measure] after burst start: nodes Ready ${rel(nodeReady.values())}, pods bound ${rel(bound.values())}, pods Running ${rel(running.values())}`);
      const nodes = new Set(items.map((p) => p.spec?.nodeName));
      const finalReplicas = await s.replicas('machinedeployments', 'md');
      // 100 x 300m = 30 cpu on 4-cpu nodes: at least 8 nodes, and no more than the cycles needed.
      expect(finalReplicas).to.be.within(8, 10);
      expect(nodes.size).to.be.at.most(finalReplicas);
      for (const n of nodes) expect(n).to.match(/^md-/);
      const latencies = [...created].map(([name, t]) => (running.get(name) ?? allRunningAt) - t);
      const writes = ctl.actuator!.capiWrites;
      const scaleWrites = writes.scale - writesBefore.scale;
      const firstWrite = s.cycles.find((c) => c.scaleUps.some((u) => u.result?.written));
      expect(firstWrite).to.not.equal(undefined);
      // Headroom's own part: from each pod's creation to the scale-up that covers it being written and observed.
      const writtenAt = firstWrite!.startedAt + firstWrite!.durationMs;
      const own = [...created.values()].map((t) => writtenAt - t);
      console.log(`      [measure] 100-pod burst (created over ${burstCreated - burstStart} ms), batch idle ${idleMs} ms / max 10 s, fixture boot delay 0:`
        + ` Headroom's own latency (pod created -> scale-up written) p50 ${percentile(own, 50)} ms, p95 ${percentile(own, 95)} ms;`
        + ` end to end (pod created -> Running) p50 ${percentile(latencies, 50)} ms, p95 ${percentile(latencies, 95)} ms, max ${Math.max(...latencies)} ms;`
        + ` burst start -> all Running ${allRunningAt - burstStart} ms;`
        + ` (cycle: solve ${firstWrite?.solveMs} ms, total ${firstWrite?.durationMs} ms);`
        + ` CAPI writes: ${scaleWrites} scale write(s) for ${finalReplicas} nodes / 100 pods (1 group), conflicts ${writes.conflicts - writesBefore.conflicts};`
        + ` cycles ${s.cycles.length}`);
      expect(scaleWrites).to.be.at.most(3);
      // Events: on the MachineDeployment, and (capped) on the pods it was scaled for.
      const events = await eventually('scale-up events', async () => {
        const list = await client.get<{ items: Array<{ reason: string; regarding: { kind: string; name: string } }> }>(`/apis/events.k8s.io/v1/namespaces/${s.ns}/events`);
        const onMd = list.items.filter((e) => e.reason === 'ScaledUp' && e.regarding.kind === 'MachineDeployment');
        const onPods = list.items.filter((e) => e.reason === 'TriggeredScaleUp' && e.regarding.kind === 'Pod');
        return onMd.length > 0 && onPods.length > 0 ? { onMd, onPods } : false;
      }, { timeoutMs: 10_000 });
      expect(events.onPods.length).to.be.at.most(20 * scaleWrites);
      // Metrics: every pod's creation-to-node-Ready was observed; replicas and scale-ups exported.
      const text = await eventually('pod latency metric for 100 pods', async () => {
        const t = await registry.metrics();
        return /headroom_pod_creation_to_node_ready_seconds_count 100$/m.test(t) ? t : false;
      }, { timeoutMs: 10_000 });
      expect(text).to.match(new RegExp(`headroom_node_group_replicas\\{kind="MachineDeployment",namespace="${s.ns}",name="md"\\} ${finalReplicas}`));
      expect(text).to.match(/headroom_scale_ups_total\{[^}]*name="md"\} [1-9]/);
      expect(text).to.match(/headroom_scheduler_scheduling_duration_seconds_count\{controller="provisioner"\} [1-9]/);
      // Karpenter-named families: nodes asked for, the CAPI calls that asked, the nodes' allocatable.
      expect(text).to.match(/^headroom_nodes_created_total\{nodepool="",reason="provisioned"\} [1-9]/m);
      expect(text).to.match(/^headroom_cloudprovider_duration_seconds_count\{method="scaleTo"\} [1-9]/m);
      expect(text).to.match(/^headroom_nodes_allocatable\{nodepool="",resource_type="cpu"\} [1-9]/m);
      expect(text).to.match(/^headroom_pods_state\{phase="[A-Za-z]+"\} [1-9]/m);
    } finally {
      await s.cleanup();
    }
  });
  }

  it('raises MachinePool replicas and the pods run on the pool\'s nodes', async function () {
    this.timeout(120_000);
    const s = await scenario('ctl-mp');
    try {
      await s.createGroup('MachinePool', { name: 'mp', replicas: 0, min: 0, max: 5, cpu: '2', memory: '8Gi' });
      await s.startController({ batch: { idleMs: 300, maxMs: 3000 } });
      await s.createPods('mp', 6, '900m');
      const items = await s.allRunning(6);
      expect(await s.replicas('machinepools', 'mp')).to.equal(3);
      for (const p of items) expect(p.spec?.nodeName).to.match(/^mp-/);
    } finally {
      await s.cleanup();
    }
  });

  it('never exceeds max size or NodePool limits under three concurrent bursts', async function () {
    this.timeout(150_000);
    const s = await scenario('ctl-limits');
    const poolName = `${s.ns}-limited`;
    try {
      // Two groups in one NodePool limited to 5 nodes / 16 cpu; group a alone is capped at 3.
      await s.createGroup('MachineDeployment', { name: 'a', replicas: 0, min: 0, max: 3, cpu: '4', memory: '16Gi', labels: { pool: poolName } });
      await s.createGroup('MachineDeployment', { name: 'b', replicas: 0, min: 0, max: 10, cpu: '2', memory: '8Gi', labels: { pool: poolName } });
      await client.request('POST', '/apis/headroom.dev/v1alpha1/nodepools', {
        body: {
          apiVersion: 'headroom.dev/v1alpha1', kind: 'NodePool', metadata: { name: poolName },
          spec: { nodeGroupSelector: { matchLabels: { pool: poolName } }, limits: { nodes: 5, cpu: '16' } },
        },
      });
      // Track the highest replicas ever written, from a watch.
      const peak = { a: 0, b: 0 };
      const mdWatch = new Informer<UnstructuredObject>(client, { group: 'cluster.x-k8s.io', version: 'v1beta2', plural: 'machinedeployments', namespace: s.ns });
      mdWatch.onChange(() => {
        for (const md of mdWatch.list()) {
          const name = md.metadata?.name as 'a' | 'b';
          if (name in peak) peak[name] = Math.max(peak[name], (md.spec as { replicas: number }).replicas);
        }
      });
      mdWatch.start();
      await s.startController({ batch: { idleMs: 200, maxMs: 2000 }, nodePoolStatusIntervalMs: 500 });
      // Three bursts, each far beyond the limits, racing the batch windows.
      await Promise.all([
        s.createPods('one', 20, '1'),
        new Promise((r) => setTimeout(r, 250)).then(() => s.createPods('two', 20, '1')),
        new Promise((r) => setTimeout(r, 700)).then(() => s.createPods('three', 20, '1')),
      ]);
      // Let every batch close and every cycle finish.
      await eventually('provisioning to settle', async () => {
        const last = s.cycles[s.cycles.length - 1];
        return s.cycles.length >= 2 && last && Date.now() - (last.startedAt + last.durationMs) > 3000;
      }, { timeoutMs: 60_000, intervalMs: 500 });
      mdWatch.stop();
      const a = await s.replicas('machinedeployments', 'a');
      const b = await s.replicas('machinedeployments', 'b');
      console.log(`      [measure] three bursts of 20 x 1 cpu: final a=${a} b=${b}, peak a=${peak.a} b=${peak.b}, cycles ${s.cycles.length}`);
      expect(peak.a).to.be.at.most(3);
      expect(peak.a + peak.b).to.be.at.most(5);
      expect(peak.a * 4 + peak.b * 2).to.be.at.most(16);
      // And the limits are actually reached (the bursts need far more).
      expect(a + b).to.be.at.least(4);
      // The pool's status shows its usage and members.
      const status = await eventually('NodePool status', async () => {
        const pool = await client.get<{ status?: { resources?: Record<string, string>; nodeGroups?: string[]; conditions?: Array<{ type: string; status: string }> } }>(`/apis/headroom.dev/v1alpha1/nodepools/${poolName}`);
        return pool.status?.resources?.nodes === String(a + b) ? pool.status : false;
      }, { timeoutMs: 10_000 });
      expect(status.resources).to.deep.equal({ cpu: String(a * 4 + b * 2), memory: `${a * 16 + b * 8}Gi`, nodes: String(a + b) });
      expect(status.nodeGroups).to.deep.equal([`MachineDeployment/${s.ns}/a`, `MachineDeployment/${s.ns}/b`]);
      expect(status.conditions?.find((c) => c.type === 'Ready')?.status).to.equal('True');
    } finally {
      await client.request('DELETE', `/apis/headroom.dev/v1alpha1/nodepools/${poolName}`).catch(() => {});
      await s.cleanup();
    }
  });

  it('a controller killed mid-scale-up and restarted ends at the same replicas as an uninterrupted run', async function () {
    this.timeout(150_000);
    // Uninterrupted reference run.
    const ref = await scenario('ctl-ref', { bootDelayMs: 2000 });
    let expected: number;
    try {
      await ref.createGroup('MachineDeployment', { name: 'md', replicas: 0, min: 0, max: 20, cpu: '4', memory: '16Gi' });
      await ref.startController({ batch: { idleMs: 300, maxMs: 3000 } });
      await ref.createPods('p', 30, '500m');
      await ref.allRunning(30);
      expected = await ref.replicas('machinedeployments', 'md');
    } finally {
      await ref.cleanup();
    }
    const s = await scenario('ctl-restart', { bootDelayMs: 2000 });
    try {
      await s.createGroup('MachineDeployment', { name: 'md', replicas: 0, min: 0, max: 20, cpu: '4', memory: '16Gi' });
      const first = await s.startController({ batch: { idleMs: 300, maxMs: 3000 } });
      await s.createPods('p', 30, '500m');
      // Kill as soon as the scale-up is written, while its nodes are still booting.
      await eventually('the first scale-up', async () => (await s.replicas('machinedeployments', 'md')) > 0, { timeoutMs: 30_000, intervalMs: 20 });
      first.kill();
      const atKill = await s.replicas('machinedeployments', 'md');
      const readyAtKill = (await client.get<{ items: unknown[] }>('/api/v1/nodes', { labelSelector: fixtureNodeSelector({ namespace: s.ns }) })).items.length;
      await s.startController({ batch: { idleMs: 300, maxMs: 3000 } });
      await s.allRunning(30);
      const after = await s.replicas('machinedeployments', 'md');
      console.log(`      [measure] restart: replicas at kill ${atKill} (nodes ${readyAtKill}), after restart ${after}, uninterrupted ${expected}`);
      expect(readyAtKill).to.be.lessThan(atKill);
      expect(after).to.equal(expected);
    } finally {
      await s.cleanup();
    }
  });

  it('fails over to the standby replica within 15 s when the leader dies', async function () {
    this.timeout(120_000);
    const s = await scenario('ctl-ha');
    try {
      await s.createGroup('MachineDeployment', { name: 'md', replicas: 0, min: 0, max: 10, cpu: '4', memory: '16Gi' });
      const le = { namespace: s.ns, name: 'headroom-controller' };
      const a = await s.startController({ leaderElection: { ...le, identity: 'a' }, batch: { idleMs: 200, maxMs: 2000 } });
      await eventually('a to lead', async () => a.isLeader(), { timeoutMs: 20_000, intervalMs: 50 });
      const b = await s.startController({ leaderElection: { ...le, identity: 'b' }, batch: { idleMs: 200, maxMs: 2000 } });
      await new Promise((r) => setTimeout(r, 3000));
      expect(b.isLeader()).to.equal(false);
      a.kill();
      const killedAt = Date.now();
      await eventually('b to lead', async () => b.isLeader(), { timeoutMs: 20_000, intervalMs: 50 });
      const failoverMs = Date.now() - killedAt;
      // And the new leader acts.
      await s.createPods('p', 4, '1');
      await s.allRunning(4);
      const lease = await client.get<{ spec: { holderIdentity: string; leaseTransitions: number } }>(`/apis/coordination.k8s.io/v1/namespaces/${s.ns}/leases/headroom-controller`);
      console.log(`      [measure] leader failover after a crash: ${failoverMs} ms (lease 10 s, retry 2 s)`);
      expect(failoverMs).to.be.below(15_000);
      expect(lease.spec.holderIdentity).to.equal('b');
      expect(lease.spec.leaseTransitions).to.equal(1);
    } finally {
      await s.cleanup();
    }
  });

  it('creates standalone Machines from a NodePool\'s templates for pending pods, within the pool\'s node limit', async function () {
    this.timeout(120_000);
    const s = await scenario('ctl-standalone');
    const poolName = `${s.ns}-standalone`;
    try {
      for (const [path, kind] of [
        [`/apis/bootstrap.test.headroom.dev/v1beta2/namespaces/${s.ns}/fakebootstrapconfigtemplates`, 'FakeBootstrapConfigTemplate'],
        [`/apis/infrastructure.test.headroom.dev/v1beta2/namespaces/${s.ns}/fakemachinetemplates`, 'FakeMachineTemplate'],
      ] as const) {
        await client.request('POST', path, {
          body: { apiVersion: path.split('/').slice(2, 4).join('/'), kind, metadata: { name: 'tpl', namespace: s.ns }, spec: { template: { spec: { size: 'large' } } } },
        });
      }
      await client.request('POST', '/apis/headroom.dev/v1alpha1/nodepools', {
        body: {
          apiVersion: 'headroom.dev/v1alpha1', kind: 'NodePool', metadata: { name: poolName },
          spec: {
            limits: { nodes: 3 },
            machineTemplate: {
              namespace: s.ns, clusterName: 'test', version: 'v1.36.0',
              bootstrapConfigTemplateRef: { apiVersion: 'bootstrap.test.headroom.dev/v1beta2', kind: 'FakeBootstrapConfigTemplate', name: 'tpl' },
              infrastructureTemplateRef: { apiVersion: 'infrastructure.test.headroom.dev/v1beta2', kind: 'FakeMachineTemplate', name: 'tpl' },
              capacity: { cpu: '2', memory: '8Gi', pods: '110' },
              labels: { role: 'standalone' },
            },
          },
        },
      });
      await s.startController({ batch: { idleMs: 300, maxMs: 3000 } });
      // 4 pods x 900m: two per 2-cpu node -> 2 Machines.
      await s.createPods('sa', 4, '900m');
      const items = await s.allRunning(4);
      // The fixture records nodeRef on the Machine a moment after the Node exists.
      const machines = await eventually('2 Machines with nodeRefs', async () => {
        const list = (await client.get<{ items: UnstructuredObject[] }>(`/apis/cluster.x-k8s.io/v1beta2/namespaces/${s.ns}/machines`)).items;
        return list.length >= 2 && list.every((m) => (m.status as { nodeRef?: unknown } | undefined)?.nodeRef) ? list : false;
      }, { timeoutMs: 10_000 });
      expect(machines).to.have.length(2);
      for (const m of machines) {
        expect(m.metadata?.labels?.['headroom.dev/nodepool']).to.equal(poolName);
        expect(m.metadata?.ownerReferences?.[0]).to.include({ kind: 'NodePool', name: poolName });
      }
      const nodeNames = new Set(machines.map((m) => (m.status as { nodeRef?: { name: string } } | undefined)?.nodeRef?.name));
      for (const p of items) expect(nodeNames.has(p.spec?.nodeName)).to.equal(true);
      // 10 more pods would need 5 more nodes; the pool allows 3 in total.
      await s.createPods('more', 10, '900m');
      await eventually('a third Machine', async () => (await client.get<{ items: unknown[] }>(`/apis/cluster.x-k8s.io/v1beta2/namespaces/${s.ns}/machines`)).items.length === 3, { timeoutMs: 20_000 });
      await new Promise((r) => setTimeout(r, 3000));
      expect((await client.get<{ items: unknown[] }>(`/apis/cluster.x-k8s.io/v1beta2/namespaces/${s.ns}/machines`)).items).to.have.length(3);
    } finally {
      await client.request('DELETE', `/apis/headroom.dev/v1alpha1/nodepools/${poolName}`).catch(() => {});
      await s.cleanup();
    }
  });

  it('with two kubeconfigs reads pods from the workload cluster and scales the MachineDeployment in the management cluster', async function () {
    this.timeout(240_000);
    // A second, private apiserver (CAPI + our CRDs) plays the management cluster.
    const mgmt = await startControlPlane({});
    const mkc = mgmt.kubeConfig();
    const mclient = new KubeClient(mkc);
    const ns = await createTestNamespace(kc, 'ctl-two');
    let ctl: Controller | undefined;
    try {
      await mclient.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } } });
      const md = machineDeployment({ namespace: ns, name: 'md', replicas: 0, min: 0, max: 5, cpu: '4', memory: '16Gi' });
      await mclient.request('POST', `/apis/cluster.x-k8s.io/v1beta2/namespaces/${ns}/machinedeployments`, { body: md });
      // A decoy of the same name in the workload cluster must not be touched.
      await client.request('POST', `/apis/cluster.x-k8s.io/v1beta2/namespaces/${ns}/machinedeployments`, { body: md });
      ctl = new Controller({
        workload: kc, management: mkc, discovery: [{ namespace: ns, labels: {} }],
        workloadScope: { namespace: ns, nodeLabelSelector: fixtureNodeSelector({ namespace: ns }) },
        batch: { idleMs: 200, maxMs: 2000 }, log: () => {},
      });
      await ctl.start();
      await Promise.all([0, 1, 2].map((i) => client.request('POST', `/api/v1/namespaces/${ns}/pods`, { body: pendingPod(ns, `p-${i}`, '1') })));
      const replicasIn = async (c: KubeClient) => (await c.get<{ spec: { replicas: number } }>(`/apis/cluster.x-k8s.io/v1beta2/namespaces/${ns}/machinedeployments/md`)).spec.replicas;
      await eventually('the management cluster\'s MachineDeployment to scale', async () => (await replicasIn(mclient)) === 1, { timeoutMs: 30_000 });
      await new Promise((r) => setTimeout(r, 1000));
      expect(await replicasIn(mclient)).to.equal(1);
      expect(await replicasIn(client)).to.equal(0);
      // The ScaledUp event is on the management cluster's object; TriggeredScaleUp on the workload pods.
      await eventually('events in both clusters', async () => {
        const m = await mclient.get<{ items: Array<{ reason: string }> }>(`/apis/events.k8s.io/v1/namespaces/${ns}/events`);
        const w = await client.get<{ items: Array<{ reason: string }> }>(`/apis/events.k8s.io/v1/namespaces/${ns}/events`);
        return m.items.some((e) => e.reason === 'ScaledUp') && w.items.some((e) => e.reason === 'TriggeredScaleUp');
      }, { timeoutMs: 10_000 });
    } finally {
      await ctl?.stop();
      mclient.close();
      await client.request('DELETE', `/api/v1/namespaces/${ns}/pods`, { query: { gracePeriodSeconds: 0 } }).catch(() => {});
      await deleteTestNamespace(kc, ns).catch(() => {});
      await mgmt.stop();
    }
  });

  it('keeps spare capacity for a CapacityBuffer (podTemplateRef + replicas) with no pods pending', async function () {
    this.timeout(120_000);
    const s = await scenario('ctl-buffer');
    try {
      await s.createGroup('MachineDeployment', { name: 'md', replicas: 0, min: 0, max: 5, cpu: '4', memory: '16Gi' });
      await client.request('POST', `/api/v1/namespaces/${s.ns}/podtemplates`, {
        body: {
          apiVersion: 'v1', kind: 'PodTemplate', metadata: { name: 'shape', namespace: s.ns },
          template: { spec: { containers: [{ name: 'c', image: 'x', resources: { requests: { cpu: '1500m', memory: '1Gi' } } }] } },
        },
      });
      await s.startController({ batch: { idleMs: 200, maxMs: 2000 } });
      await client.request('POST', `/apis/autoscaling.x-k8s.io/v1alpha1/namespaces/${s.ns}/capacitybuffers`, {
        body: { apiVersion: 'autoscaling.x-k8s.io/v1alpha1', kind: 'CapacityBuffer', metadata: { name: 'spare', namespace: s.ns }, spec: { podTemplateRef: { name: 'shape' }, replicas: 4 } },
      });
      // 4 x 1.5 cpu: two per 4-cpu node -> 2 nodes, with no pod pending at all.
      await waitForReadyNodes(kc, fixtureNodeSelector({ namespace: s.ns }), 2, 30_000);
      await new Promise((r) => setTimeout(r, 2000));
      expect(await s.replicas('machinedeployments', 'md')).to.equal(2);
      expect(await s.pods()).to.have.length(0);
    } finally {
      await s.cleanup();
    }
  });

  it('in dry run plans and records events but writes nothing to CAPI objects', async function () {
    this.timeout(90_000);
    const s = await scenario('ctl-dry');
    try {
      await s.createGroup('MachineDeployment', { name: 'md', replicas: 0, min: 0, max: 5, cpu: '4', memory: '16Gi' });
      const ctl = await s.startController({ dryRun: true, batch: { idleMs: 200, maxMs: 2000 } });
      await s.createPods('p', 6, '1');
      // The six pods are created in parallel; under load they can reach the informer more
      // than the 200 ms batch idle apart, and a first cycle then plans for the ones it saw
      // ("0 -> 1"). Nothing is written in a dry run, so a later cycle plans for all six.
      const dryRunEvents = async () => (await client.get<{ items: Array<{ reason: string; note: string; regarding: { name: string } }> }>(
        `/apis/events.k8s.io/v1/namespaces/${s.ns}/events`)).items.filter((e) => e.reason === 'DryRunScaleUp' && e.regarding.name === 'md');
      await eventually('a DryRunScaleUp event planning 0 -> 2 for the six pods', async () =>
        (await dryRunEvents()).some((e) => /replicas 0 -> 2:/.test(e.note)), { timeoutMs: 20_000 });
      await new Promise((r) => setTimeout(r, 1000));
      // Never more than the six pods need, and always from 0: no replica was written in between.
      for (const e of await dryRunEvents()) expect(e.note).to.match(/replicas 0 -> [12]:/);
      expect(await s.replicas('machinedeployments', 'md')).to.equal(0);
      expect(ctl.actuator!.capiWrites).to.deep.equal({ scale: 0, annotate: 0, create: 0, delete: 0, conflicts: 0 });
    } finally {
      await s.cleanup();
    }
  });
});
