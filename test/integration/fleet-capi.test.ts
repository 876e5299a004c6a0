/**
 * Issue 26, fleet mode on the real Cluster API manager (v1.14) with the kwok provider:
 * one management control plane runs CAPI, the provider makes each Cluster's Machines
 * Nodes in that Cluster's own workload control plane (kube-apiserver, kube-scheduler,
 * kwok), and writes the `<cluster>-kubeconfig` Secrets as a control-plane provider does.
 * Two fleet replicas, each a `headroom controller --fleet` process (from source), share
 * the two Clusters. Pending pods in each workload cluster end up Running on Nodes of
 * that cluster, made by its own groups only. Then the owner of one Cluster is SIGKILLed
 * while both clusters have new pending pods: its cluster moves to the other process
 * within 15 s, and an InvariantChecker per cluster (groups in the management cluster,
 * pods and Nodes in the workload cluster) sees no group above what its pods need at any
 * moment (no capacity provisioned twice), each group's Machines exactly its replicas,
 * and every pod Running.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import type { KubeConfig, V1Node, V1Pod } from '@kubernetes/client-node';
import { clusterLeaseName } from '../../src/fleet/names.js';
import { type ControlPlane, startControlPlane } from '../harness/control-plane.js';
import { InvariantChecker } from '../harness/invariants.js';
import { kubeRequest } from '../harness/kube-request.js';
import { KWOK_BOOTSTRAP_SECRET, KWOK_INFRA_GROUP, KWOK_PROVIDER_VERSION, KwokProvider, kwokNodeSelector } from '../harness/kwok-provider.js';
import { freePort } from '../harness/ports.js';
import { ManagedProcess, makeTempDir, removeTempDir } from '../harness/process.js';
import { eventually } from '../harness/wait.js';
import { MAX, MIN, pendingPod } from './controller-objects.js';

const FLEET = 'fleet';
const SYSTEM = 'headroom-system';
const APPS = 'apps';
const CAPI = 'cluster.x-k8s.io/v1beta2';
const INFRA = `${KWOK_INFRA_GROUP}/${KWOK_PROVIDER_VERSION}`;

describe('fleet mode on the real Cluster API manager: Machines become Nodes in the right workload cluster; a SIGKILLed replica process', function () {
  this.timeout(400_000);
  let mgmt: ControlPlane;
  const wl: Partial<Record<'a' | 'b', ControlPlane>> = {};
  let mkc: KubeConfig;
  let provider: KwokProvider | undefined;
  let logDir: string | undefined;
  const replicas: Array<{ id: string; proc: ManagedProcess; port: number }> = [];
  const checkers: InvariantChecker[] = [];

  afterEach(async function () {
    if (this.currentTest?.state !== 'failed') return;
    // What went wrong, in one place: the replicas' logs, the groups, Machines and Nodes.
    for (const r of replicas) console.log(`--- replica ${r.id} (${r.proc.running ? 'running' : 'exited'})\n${r.proc.logTail(40)}`);
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
    logDir = makeTempDir('headroom-fleet-capi-');
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
    for (const c of checkers) c.stop();
    await Promise.all(replicas.map((r) => r.proc.stop(5000).catch(() => {})));
    await provider?.stop({ keepNodes: true }).catch(() => {});
    await Promise.all([mgmt?.stop(), wl.a?.stop(), wl.b?.stop()]);
    if (logDir) removeTempDir(logDir);
  });

  const replicasOf = async (name: string) => (await kubeRequest(mkc, 'GET', `/apis/cluster.x-k8s.io/v1beta2/namespaces/${FLEET}/machinedeployments/${name}`) as { spec: { replicas: number } }).spec.replicas;
  /** The replica holding the cluster's Lease ('' if none). */
  const holder = async (name: string) => {
    try {
      const l = await kubeRequest(mkc, 'GET', `/apis/coordination.k8s.io/v1/namespaces/${SYSTEM}/leases/${clusterLeaseName({ namespace: FLEET, name })}`) as { spec: { holderIdentity?: string | null } };
      return l.spec.holderIdentity ?? '';
    } catch {
      return '';
    }
  };
  const machinesOf = async (md: string) => (await kubeRequest(mkc, 'GET', `/apis/cluster.x-k8s.io/v1beta2/namespaces/${FLEET}/machines?labelSelector=${encodeURIComponent(`cluster.x-k8s.io/deployment-name=${md}`)}`) as { items: Array<{ metadata: { name: string; deletionTimestamp?: string } }> }).items;
  const runningOn = async (cp: ControlPlane) => {
    const pods = (await kubeRequest(cp.kubeConfig(), 'GET', `/api/v1/namespaces/${APPS}/pods`) as { items: V1Pod[] }).items;
    const nodes = (await kubeRequest(cp.kubeConfig(), 'GET', '/api/v1/nodes') as { items: V1Node[] }).items.map((n) => n.metadata!.name!);
    return { running: pods.filter((p) => p.status?.phase === 'Running' && nodes.includes(p.spec?.nodeName ?? '')).length, pods: pods.length, nodes };
  };

  /** `headroom controller --fleet` from source, with the chart's default Lease timing passed as its flags (8 s / 6 s / 2 s). */
  async function startReplica(): Promise<{ id: string; proc: ManagedProcess; port: number }> {
    const port = await freePort();
    const proc = ManagedProcess.start('headroom-fleet', process.execPath, [
      '--import', 'tsx', join(process.cwd(), 'test', 'integration', 'controller-cli-entry.ts'), 'controller', '--fleet',
      '--kubeconfig', mgmt.kubeconfigPath, '--fleet-namespace', FLEET, '--leader-election-namespace', SYSTEM,
      '--batch-idle-duration', '300', '--batch-max-duration', '1000', '--disruption', 'false', '--prediction=false',
      '--solver-threads', '0', '--metrics-address', `127.0.0.1:${port}`,
      '--fleet-lease-duration', '8s', '--fleet-renew-deadline', '6s', '--fleet-retry-period', '2s',
    ], { logFile: join(logDir!, `fleet-${port}.log`) });
    const r = { id: `${hostname()}_${proc.pid}`, proc, port };
    replicas.push(r);
    return r;
  }
  const isReady = async (port: number) => (await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => undefined))?.status === 200;

  it('each workload cluster\'s pending pods run on Nodes its own groups made; the owner of a cluster SIGKILLed mid scale-up: moved within 15 s, no double action, no stranded pod', async () => {
    const [r1, r2] = await Promise.all([startReplica(), startReplica()]);
    await eventually('both replica processes ready', async () => (await isReady(r1!.port)) && (await isReady(r2!.port)), { timeoutMs: 90_000, intervalMs: 250 })
      .catch((err: Error) => { throw new Error(`${err.message}\n${r1!.proc.logTail(15)}\n${r2!.proc.logTail(15)}`); });
    await eventually('one cluster per replica', async () => {
      const [ha, hb] = [await holder('a'), await holder('b')];
      return ha !== '' && hb !== '' && ha !== hb && [r1!.id, r2!.id].includes(ha) && [r1!.id, r2!.id].includes(hb);
    }, { timeoutMs: 60_000 });
    // Per cluster: its groups in the management cluster, its pods and Nodes in its own apiserver.
    // needed: the most replicas its pods ever need (3 and 2 below); more is a double action.
    for (const [name, needed] of [['a', 3], ['b', 2]] as const) {
      checkers.push(await InvariantChecker.start({
        kubeConfig: wl[name]!.kubeConfig(), namespace: APPS, nodeLabelSelector: kwokNodeSelector({ namespace: FLEET }),
        groups: { kubeConfig: mkc, namespace: FLEET, labelSelector: `cluster.x-k8s.io/cluster-name=${name}` }, needed: { [`${name}-md`]: needed },
      }));
    }
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

    // New pending pods in both clusters, and 400 ms later (inside the batch window: the
    // owner may or may not have written its scale-up) SIGKILL of b's owner.
    const victimId = await holder('b');
    const victim = replicas.find((r) => r.id === victimId)!;
    const survivor = replicas.find((r) => r !== victim)!;
    await kubeRequest(wl.a!.kubeConfig(), 'POST', `/api/v1/namespaces/${APPS}/pods`, pendingPod(APPS, 'pa-2', '3'));
    await kubeRequest(wl.b!.kubeConfig(), 'POST', `/api/v1/namespaces/${APPS}/pods`, pendingPod(APPS, 'pb-1', '3'));
    await new Promise((r) => setTimeout(r, 400));
    process.kill(-victim.proc.pid, 'SIGKILL');
    const k0 = Date.now();
    const exit = await victim.proc.exited;
    expect(exit.signal).to.equal('SIGKILL');
    await eventually('the survivor holds both Leases', async () => (await holder('a')) === survivor.id && (await holder('b')) === survivor.id, { timeoutMs: 30_000, intervalMs: 100 });
    const failoverMs = Date.now() - k0;
    console.log(`      [measure] SIGKILL of the replica process owning b: both clusters held by the other after ${failoverMs} ms (killed at ${new Date(k0).toISOString()})`);
    // Where the time went: the survivor's own account of taking b over (timestamped lines).
    console.log(survivor.proc.logTail(200).split('\n').filter((l) => /became leader|controller started|fleet\/b/.test(l)).slice(-6).map((l) => `        ${l.slice(0, 220)}`).join('\n'));
    expect(failoverMs).to.be.below(15_000);

    // No stranded pod: every pod Running, on Nodes of its own cluster.
    const [ca, cb] = checkers as [InvariantChecker, InvariantChecker];
    await ca.allPodsRunning(120_000, 3);
    await cb.allPodsRunning(120_000, 2);
    expect((await runningOn(wl.a!)).running).to.equal(3);
    expect((await runningOn(wl.b!)).running).to.equal(2);
    // No double action: each group exactly what its pods need, never more at any moment, one Machine per replica.
    await new Promise((r) => setTimeout(r, 3000));
    expect(await replicasOf('a-md')).to.equal(3);
    expect(await replicasOf('b-md')).to.equal(2);
    for (const [md, n] of [['a-md', 3], ['b-md', 2]] as const) expect((await machinesOf(md)).filter((m) => !m.metadata.deletionTimestamp), `${md}'s Machines`).to.have.length(n);
    expect(ca.peakReplicas.get('a-md')).to.equal(3);
    expect(cb.peakReplicas.get('b-md')).to.equal(2);
    expect([...ca.violations, ...cb.violations]).to.deep.equal([]);
    expect(survivor.proc.running, 'the survivor is still running').to.equal(true);
  });
});
