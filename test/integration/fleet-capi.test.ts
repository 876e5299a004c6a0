/**
 * Issue 26, fleet mode on the real Cluster API manager (v1.14) with the kwok provider:
 * one management control plane runs CAPI, the provider makes each Cluster's Machines
 * Nodes in that Cluster's own workload control plane (kube-apiserver, kube-scheduler,
 * kwok), and writes the `<cluster>-kubeconfig` Secrets as a control-plane provider does.
 * Two fleet replicas (in-process) share the two Clusters. Pending pods in each workload
 * cluster end up Running on Nodes of that cluster, made by its own groups only; a
 * killed replica's cluster is scaled by the other.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import type { KubeConfig, V1Node, V1Pod } from '@kubernetes/client-node';
import { Registry } from 'prom-client';
import { FleetController } from '../../src/fleet/fleet-controller.js';
import { KubeClient } from '../../src/kube/kube-client.js';
import { type ControlPlane, startControlPlane } from '../harness/control-plane.js';
import { kubeRequest } from '../harness/kube-request.js';
import { KWOK_BOOTSTRAP_SECRET, KWOK_INFRA_GROUP, KWOK_PROVIDER_VERSION, KwokProvider } from '../harness/kwok-provider.js';
import { eventually } from '../harness/wait.js';
import { MAX, MIN, pendingPod } from './controller-objects.js';

const FLEET = 'fleet';
const SYSTEM = 'headroom-system';
const APPS = 'apps';
const CAPI = 'cluster.x-k8s.io/v1beta2';
const INFRA = `${KWOK_INFRA_GROUP}/${KWOK_PROVIDER_VERSION}`;

describe('fleet mode on the real Cluster API manager: Machines become Nodes in the right workload cluster', function () {
  this.timeout(400_000);
  let mgmt: ControlPlane;
  const wl: Partial<Record<'a' | 'b', ControlPlane>> = {};
  let mkc: KubeConfig;
  let provider: KwokProvider | undefined;
  const replicas: Array<{ id: string; fleet: FleetController; client: KubeClient; alive: boolean }> = [];
  const logs: string[] = [];

  afterEach(async function () {
    if (this.currentTest?.state !== 'failed') return;
    // What went wrong, in one place: the fleet's log, the groups, Machines and Nodes.
    console.log(logs.slice(-60).join('\n'));
    const mds = await kubeRequest(mkc, 'GET', `/apis/cluster.x-k8s.io/v1beta2/namespaces/${FLEET}/machinedeployments`) as { items: Array<{ metadata: { name: string }; spec: { replicas: number }; status?: unknown }> };
    for (const md of mds.items) console.log(`md ${md.metadata.name} replicas=${md.spec.replicas} status=${JSON.stringify(md.status)}`);
    const sets = await kubeRequest(mkc, 'GET', `/apis/cluster.x-k8s.io/v1beta2/namespaces/${FLEET}/machinesets`) as { items: Array<{ metadata: { name: string }; spec: unknown; status?: unknown }> };
    for (const ms of sets.items) console.log(`machineset ${ms.metadata.name} ${JSON.stringify(ms.spec).slice(0, 300)} ${JSON.stringify(ms.status)}`);
    const ms = await kubeRequest(mkc, 'GET', `/apis/cluster.x-k8s.io/v1beta2/namespaces/${FLEET}/machines`) as { items: Array<{ metadata: { name: string }; status?: unknown }> };
    for (const m of ms.items) console.log(`machine ${m.metadata.name} ${JSON.stringify(m.status).slice(0, 400)}`);
    const cl = await kubeRequest(mkc, 'GET', `/apis/cluster.x-k8s.io/v1beta2/namespaces/${FLEET}/clusters`) as { items: Array<{ metadata: { name: string }; status?: unknown }> };
    for (const c of cl.items) console.log(`cluster ${c.metadata.name} ${JSON.stringify(c.status).slice(0, 600)}`);
    for (const name of ['a', 'b'] as const) console.log(`wl ${name}: ${JSON.stringify(await runningOn(wl[name]!))}`);
    for (const f of readdirSync(mgmt.dir).filter((x) => /cluster-api|capi/.test(x) && x.endsWith('.log'))) {
      console.log(`--- ${f}\n${readFileSync(join(mgmt.dir, f), 'utf8').split('\n').filter((l) => /error|Error|fail/i.test(l)).slice(-25).join('\n')}`);
    }
  });

  before(async function () {
    this.timeout(300_000);
    const [m, a, b] = await Promise.all([
      startControlPlane({ clusterApi: true, controllerManager: true, ownCrds: true }),
      startControlPlane({ crds: false, ownCrds: false, scheduler: true, kwok: true }),
      startControlPlane({ crds: false, ownCrds: false, scheduler: true, kwok: true }),
    ]);
    mgmt = m!; wl.a = a!; wl.b = b!;
    mkc = mgmt.kubeConfig();
    for (const name of [SYSTEM, FLEET]) await kubeRequest(mkc, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    for (const cp of [wl.a, wl.b]) await kubeRequest(cp.kubeConfig(), 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: APPS } });
    provider = await KwokProvider.start({ kubeConfig: mkc, namespace: FLEET, bootDelayMs: 300, intervalMs: 150, workloads: { a: wl.a.kubeConfig(), b: wl.b.kubeConfig() } });
    await kubeRequest(mkc, 'POST', `/apis/${INFRA}/namespaces/${FLEET}/kwokmachinetemplates`, {
      apiVersion: INFRA, kind: 'KwokMachineTemplate', metadata: { name: 'small' }, spec: { template: { spec: { capacity: { cpu: '4', memory: '16Gi', pods: '110' } } } },
    });
    for (const name of ['a', 'b'] as const) {
      await provider.createCluster(name);
      await kubeRequest(mkc, 'POST', `/apis/cluster.x-k8s.io/v1beta2/namespaces/${FLEET}/machinedeployments`, {
        apiVersion: CAPI, kind: 'MachineDeployment',
        metadata: {
          name: `${name}-md`, labels: { 'cluster.x-k8s.io/cluster-name': name },
          annotations: {
            [MIN]: '0', [MAX]: '10',
            'capacity.cluster-autoscaler.kubernetes.io/cpu': '4', 'capacity.cluster-autoscaler.kubernetes.io/memory': '16Gi', 'capacity.cluster-autoscaler.kubernetes.io/maxPods': '110',
          },
        },
        spec: {
          clusterName: name, replicas: 0,
          selector: { matchLabels: { 'cluster.x-k8s.io/deployment-name': `${name}-md` } },
          template: {
            metadata: { labels: { 'cluster.x-k8s.io/deployment-name': `${name}-md` } },
            spec: { clusterName: name, bootstrap: { dataSecretName: KWOK_BOOTSTRAP_SECRET }, infrastructureRef: { apiGroup: KWOK_INFRA_GROUP, kind: 'KwokMachineTemplate', name: 'small' } },
          },
        },
      });
      await kubeRequest(mkc, 'POST', '/apis/headroom.dev/v1alpha1/nodepools', {
        apiVersion: 'headroom.dev/v1alpha1', kind: 'NodePool', metadata: { name },
        spec: { clusterRef: { namespace: FLEET, name }, nodeGroupSelector: { matchLabels: { 'cluster.x-k8s.io/cluster-name': name } } },
      });
    }
    // The provider wrote each Cluster's kubeconfig Secret, pointing at its own apiserver.
    for (const name of ['a', 'b'] as const) {
      const s = await eventually(`${name}-kubeconfig written by the provider`, async () => {
        try {
          return await kubeRequest(mkc, 'GET', `/api/v1/namespaces/${FLEET}/secrets/${name}-kubeconfig`) as { data: { value: string } };
        } catch {
          return false;
        }
      }, { timeoutMs: 60_000 });
      expect(Buffer.from(s.data.value, 'base64').toString()).to.include(wl[name]!.server);
    }
  });

  after(async function () {
    this.timeout(90_000);
    for (const r of replicas) if (r.alive) await r.fleet.stop().catch(() => {});
    for (const r of replicas) r.client.close();
    await provider?.stop({ keepNodes: true }).catch(() => {});
    await Promise.all([mgmt?.stop(), wl.a?.stop(), wl.b?.stop()]);
  });

  const replicasOf = async (name: string) => (await kubeRequest(mkc, 'GET', `/apis/cluster.x-k8s.io/v1beta2/namespaces/${FLEET}/machinedeployments/${name}`) as { spec: { replicas: number } }).spec.replicas;
  const owners = (key: string) => replicas.filter((r) => r.alive && r.fleet.owned().includes(key)).map((r) => r.id);
  const runningOn = async (cp: ControlPlane) => {
    const pods = (await kubeRequest(cp.kubeConfig(), 'GET', `/api/v1/namespaces/${APPS}/pods`) as { items: V1Pod[] }).items;
    const nodes = (await kubeRequest(cp.kubeConfig(), 'GET', '/api/v1/nodes') as { items: V1Node[] }).items.map((n) => n.metadata!.name!);
    return { running: pods.filter((p) => p.status?.phase === 'Running' && nodes.includes(p.spec?.nodeName ?? '')).length, pods: pods.length, nodes };
  };

  function startReplica(id: string): FleetController {
    const client = new KubeClient(mkc);
    const fleet = new FleetController({
      management: client, namespace: SYSTEM, identity: id, clusterNamespace: FLEET,
      settings: { batch: { idleMs: 300, maxMs: 1000 }, disruption: false },
      log: (m) => logs.push(`${new Date().toISOString()} ${id} ${m}`), registry: new Registry(),
    });
    replicas.push({ id, fleet, client, alive: true });
    return fleet;
  }

  it('each workload cluster\'s pending pods run on Nodes its own groups made; after a kill the other replica scales the cluster', async () => {
    await Promise.all([startReplica('r1').start(), startReplica('r2').start()]);
    await eventually('one cluster per replica', async () => owners('fleet/a').length === 1 && owners('fleet/b').length === 1 && owners('fleet/a')[0] !== owners('fleet/b')[0], { timeoutMs: 60_000 });
    const t0 = Date.now();
    for (let i = 0; i < 2; i++) await kubeRequest(wl.a!.kubeConfig(), 'POST', `/api/v1/namespaces/${APPS}/pods`, pendingPod(APPS, `pa-${i}`, '3'));
    await kubeRequest(wl.b!.kubeConfig(), 'POST', `/api/v1/namespaces/${APPS}/pods`, pendingPod(APPS, 'pb-0', '3'));
    const a = await eventually('a\'s two pods Running on two Nodes of workload cluster a', async () => {
      const r = await runningOn(wl.a!);
      return r.running === 2 ? r : false;
    }, { timeoutMs: 60_000, intervalMs: 500 });
    const b = await eventually('b\'s pod Running on a Node of workload cluster b', async () => {
      const r = await runningOn(wl.b!);
      return r.running === 1 ? r : false;
    }, { timeoutMs: 120_000, intervalMs: 500 });
    console.log(`      [measure] pending pods to Running on new kwok Nodes through CAPI: ${Date.now() - t0} ms (a: ${a.nodes.length} nodes, b: ${b.nodes.length})`);
    expect(a.nodes).to.have.length(2);
    expect(b.nodes).to.have.length(1);
    expect(await replicasOf('a-md')).to.equal(2);
    expect(await replicasOf('b-md')).to.equal(1);
    // CAPI sets each Machine's nodeRef once it finds the Node in that Machine's workload cluster.
    for (const name of ['a', 'b'] as const) {
      const nodes = (name === 'a' ? a : b).nodes.sort();
      await eventually(`Machines of ${name} reference Nodes of workload cluster ${name}`, async () => {
        const machines = (await kubeRequest(mkc, 'GET', `/apis/cluster.x-k8s.io/v1beta2/namespaces/${FLEET}/machines`) as { items: Array<{ spec: { clusterName: string }; status?: { nodeRef?: { name: string } } }> }).items;
        const refs = machines.filter((m) => m.spec.clusterName === name).map((m) => m.status?.nodeRef?.name).filter(Boolean).sort();
        return JSON.stringify(refs) === JSON.stringify(nodes);
      }, { timeoutMs: 30_000, intervalMs: 250 });
    }

    // Kill the owner of b: the survivor owns both and scales b.
    const victim = replicas.find((r) => r.alive && r.fleet.owned().includes('fleet/b'))!;
    const survivor = replicas.find((r) => r.alive && r !== victim)!;
    const k0 = Date.now();
    victim.fleet.kill();
    victim.alive = false;
    await eventually('the survivor owns both', async () => survivor.fleet.owned().length === 2, { timeoutMs: 30_000, intervalMs: 100 });
    const failoverMs = Date.now() - k0;
    console.log(`      [measure] failover after a kill: ${failoverMs} ms`);
    expect(failoverMs).to.be.below(15_000);
    await kubeRequest(wl.b!.kubeConfig(), 'POST', `/api/v1/namespaces/${APPS}/pods`, pendingPod(APPS, 'pb-1', '3'));
    await eventually('b\'s second pod Running on a second Node of b', async () => (await runningOn(wl.b!)).running === 2, { timeoutMs: 120_000, intervalMs: 500 });
    expect(await replicasOf('b-md')).to.equal(2);
    expect(await replicasOf('a-md'), 'a untouched').to.equal(2);
    expect((await runningOn(wl.a!)).nodes).to.have.length(2);
  });
});
