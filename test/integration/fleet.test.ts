/**
 * Issue 26, fleet mode, on real control planes: one management kube-apiserver (CAPI
 * CRDs, NodePool CRD) and two workload clusters, each its own kube-apiserver and etcd.
 * The kubeconfig Secrets are written by the test as CAPI writes them (`<cluster>-kubeconfig`,
 * key `value`). Two fleet replicas (FleetController, in-process) share the Clusters
 * through per-cluster Leases in the management cluster. Not here: the real CAPI manager
 * and the kwok provider (node groups are MachineDeployments whose spec.replicas the
 * test reads), so no Machine becomes a Node.
 */
import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import type { KubeConfig } from '@kubernetes/client-node';
import { Registry } from 'prom-client';
import { KubeClient } from '../../src/kube/kube-client.js';
import { FleetController } from '../../src/fleet/fleet-controller.js';
import { FleetLeases } from '../../src/fleet/fleet-leases.js';
import { clusterLeaseName, FLEET_LABEL, replicaLeaseName } from '../../src/fleet/names.js';
import { PRESENCE_GC_AFTER_LEASES } from '../../src/fleet/presence-gc.js';
import { type ControlPlane, startControlPlane } from '../harness/control-plane.js';
import { kubeRequest } from '../harness/kube-request.js';
import { freePort } from '../harness/ports.js';
import { eventually } from '../harness/wait.js';
import { machineDeployment, pendingPod } from './controller-objects.js';

const FLEET = 'fleet';
const SYSTEM = 'headroom-system';
const APPS = 'apps';
const CAPI = '/apis/cluster.x-k8s.io/v1beta2';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Condition { type: string; status: string; reason: string; message: string }

const cluster = (name: string, extra: { paused?: boolean } = {}) => ({
  apiVersion: 'cluster.x-k8s.io/v1beta2', kind: 'Cluster',
  metadata: { name, namespace: FLEET, labels: { fleet: 'yes' } },
  spec: { paused: extra.paused ?? false },
});

const nodePool = (name: string) => ({
  apiVersion: 'headroom.dev/v1alpha1', kind: 'NodePool', metadata: { name },
  spec: { clusterRef: { namespace: FLEET, name }, nodeGroupSelector: { matchLabels: { 'cluster.x-k8s.io/cluster-name': name } } },
});

describe('fleet mode: one management cluster, two workload clusters, two replicas', function () {
  this.timeout(400_000);
  let mgmt: ControlPlane;
  let wl: Record<'a' | 'b', ControlPlane>;
  let mkc: KubeConfig;
  const replicas: Array<{ id: string; fleet: FleetController; client: KubeClient; alive: boolean }> = [];
  const logs: string[] = [];
  // Sampled every 50 ms for the whole run: a cluster led by two replicas at once is a failure.
  const doubles: string[] = [];
  let sampler: NodeJS.Timeout | undefined;
  let killedAt = 0;

  before(async function () {
    this.timeout(300_000);
    const [m, a, b] = await Promise.all([
      startControlPlane({ ownCrds: true }),
      startControlPlane({ crds: false, ownCrds: false }),
      startControlPlane({ crds: false, ownCrds: false }),
    ]);
    mgmt = m!; wl = { a: a!, b: b! };
    mkc = mgmt.kubeConfig();
    for (const name of [SYSTEM, FLEET]) await kubeRequest(mkc, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    for (const cp of [wl.a, wl.b]) await kubeRequest(cp.kubeConfig(), 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: APPS } });
    for (const name of ['a', 'b'] as const) {
      await kubeRequest(mkc, 'POST', `/api/v1/namespaces/${FLEET}/secrets`, {
        apiVersion: 'v1', kind: 'Secret', metadata: { name: `${name}-kubeconfig`, namespace: FLEET },
        data: { value: Buffer.from(readFileSync(wl[name].kubeconfigPath)).toString('base64') },
      });
      await kubeRequest(mkc, 'POST', `${CAPI}/namespaces/${FLEET}/machinedeployments`,
        machineDeployment({ namespace: FLEET, name: `${name}-md`, clusterName: name, replicas: 0, min: 0, max: 10, cpu: '4', memory: '16Gi' }));
      await kubeRequest(mkc, 'POST', '/apis/headroom.dev/v1alpha1/nodepools', nodePool(name));
    }
    // Another Cluster's group with no fleet Cluster selected: never scaled.
    await kubeRequest(mkc, 'POST', `${CAPI}/namespaces/${FLEET}/machinedeployments`,
      machineDeployment({ namespace: FLEET, name: 'other-md', clusterName: 'other', replicas: 0, min: 0, max: 10, cpu: '16', memory: '64Gi' }));
    await kubeRequest(mkc, 'POST', `${CAPI}/namespaces/${FLEET}/clusters`, cluster('a'));
  });

  after(async function () {
    this.timeout(60_000);
    clearInterval(sampler);
    for (const r of replicas) if (r.alive) await r.fleet.stop().catch(() => {});
    for (const r of replicas) r.client.close();
    await Promise.all([mgmt?.stop(), wl?.a?.stop(), wl?.b?.stop()]);
  });

  const replicasOf = async (name: string) => (await kubeRequest(mkc, 'GET', `${CAPI}/namespaces/${FLEET}/machinedeployments/${name}`) as { spec: { replicas: number } }).spec.replicas;
  const conditionOf = async (name: string) => {
    const c = await kubeRequest(mkc, 'GET', `${CAPI}/namespaces/${FLEET}/clusters/${name}`) as { status?: { conditions?: Condition[] } };
    return c.status?.conditions?.find((x) => x.type === 'HeadroomAutoscaling');
  };
  const owners = (key: string) => replicas.filter((r) => r.alive && r.fleet.owned().includes(key)).map((r) => r.id);
  const leaseHolder = async (name: string) => {
    try {
      const l = await kubeRequest(mkc, 'GET', `/apis/coordination.k8s.io/v1/namespaces/${SYSTEM}/leases/${clusterLeaseName({ namespace: FLEET, name })}`) as { spec: { holderIdentity?: string | null } };
      return l.spec.holderIdentity ?? '';
    } catch {
      return '';
    }
  };

  function startReplica(id: string): FleetController {
    const client = new KubeClient(mkc);
    const fleet = new FleetController({
      management: client, namespace: SYSTEM, identity: id, clusterNamespace: FLEET, clusterSelector: 'fleet=yes',
      settings: { batch: { idleMs: 300, maxMs: 1000 }, disruption: false },
      log: (m) => logs.push(`${id} ${m}`), registry: new Registry(),
      probeTimeoutMs: 2000, retryHeldMs: 2000, unreachableAfterMs: 4000, probeEveryMs: 1000,
    });
    replicas.push({ id, fleet, client, alive: true });
    return fleet;
  }

  it('two replicas share the Clusters, each cluster\'s pods get capacity from its own groups only, a Cluster added while running is picked up', async () => {
    await Promise.all([startReplica('r1').start(), startReplica('r2').start()]);
    sampler = setInterval(() => {
      const seen = new Map<string, string>();
      for (const r of replicas) {
        if (!r.alive) continue;
        for (const key of r.fleet.owned()) {
          if (seen.has(key)) doubles.push(`${key}: ${seen.get(key)} and ${r.id}`);
          seen.set(key, r.id);
        }
      }
    }, 50);
    await eventually('cluster a owned by one replica', async () => owners('fleet/a').length === 1, { timeoutMs: 30_000 });
    const t0 = Date.now();
    await kubeRequest(mkc, 'POST', `${CAPI}/namespaces/${FLEET}/clusters`, cluster('b'));
    await eventually('cluster b picked up, one cluster per replica', async () => owners('fleet/b').length === 1 && owners('fleet/a').length === 1
      && owners('fleet/a')[0] !== owners('fleet/b')[0], { timeoutMs: 30_000 });
    console.log(`      [measure] Cluster b added: owned after ${Date.now() - t0} ms; a by ${owners('fleet/a')}, b by ${owners('fleet/b')}`);
    expect(await conditionOf('a')).to.include({ status: 'True', reason: 'Autoscaling' });

    // Two 3-cpu pods in a want two 4-cpu nodes of a-md; one in b one node of b-md.
    for (let i = 0; i < 2; i++) await kubeRequest(wl.a.kubeConfig(), 'POST', `/api/v1/namespaces/${APPS}/pods`, pendingPod(APPS, `pa-${i}`, '3'));
    await kubeRequest(wl.b.kubeConfig(), 'POST', `/api/v1/namespaces/${APPS}/pods`, pendingPod(APPS, 'pb-0', '3'));
    await eventually('a-md scaled to 2', async () => (await replicasOf('a-md')) === 2, { timeoutMs: 60_000, intervalMs: 250 });
    await eventually('b-md scaled to 1', async () => (await replicasOf('b-md')) === 1, { timeoutMs: 60_000, intervalMs: 250 });
    await sleep(3000);
    expect(await replicasOf('a-md'), 'a\'s pods never scale b').to.equal(2);
    expect(await replicasOf('b-md')).to.equal(1);
    expect(await replicasOf('other-md'), 'a Cluster not selected').to.equal(0);

    // Metrics carry the cluster label of the owned clusters only.
    const owner = replicas.find((r) => r.id === owners('fleet/a')[0])!;
    const text = await owner.fleet.metrics(new Registry());
    expect(text).to.include('cluster="fleet/a"');
    expect(text).to.not.include('cluster="fleet/b"');
  });

  it('an unreachable workload API holds only that Cluster; a paused Cluster is held with a condition and resumes when unpaused', async () => {
    const closed = await freePort();
    const bad = readFileSync(wl.a.kubeconfigPath, 'utf8').replace(wl.a.server, `https://127.0.0.1:${closed}`);
    await kubeRequest(mkc, 'POST', `/api/v1/namespaces/${FLEET}/secrets`, {
      apiVersion: 'v1', kind: 'Secret', metadata: { name: 'c-kubeconfig', namespace: FLEET }, data: { value: Buffer.from(bad).toString('base64') },
    });
    await kubeRequest(mkc, 'POST', `${CAPI}/namespaces/${FLEET}/clusters`, cluster('c'));
    const held = await eventually('cluster c held: WorkloadAPIUnreachable', async () => {
      const c = await conditionOf('c');
      return c?.status === 'False' && c.reason === 'WorkloadAPIUnreachable' ? c : false;
    }, { timeoutMs: 30_000 });
    expect(held.message).to.include(`127.0.0.1:${closed}`);
    // a still scales while c is held.
    await kubeRequest(wl.a.kubeConfig(), 'POST', `/api/v1/namespaces/${APPS}/pods`, pendingPod(APPS, 'pa-2', '3'));
    await eventually('a-md scaled to 3 while c is held', async () => (await replicasOf('a-md')) === 3, { timeoutMs: 60_000, intervalMs: 250 });
    // Three clusters, two replicas: 2 + 1.
    const counts = ['r1', 'r2'].map((id) => replicas.find((r) => r.id === id)!.fleet.owned().length).sort();
    expect(counts).to.deep.equal([1, 2]);

    // Pause b: held, its pods wait; unpause: scaled.
    await kubeRequest(mkc, 'PATCH', `${CAPI}/namespaces/${FLEET}/clusters/b`, { spec: { paused: true } }, 'application/merge-patch+json');
    await eventually('cluster b held: Paused', async () => (await conditionOf('b'))?.reason === 'Paused', { timeoutMs: 30_000 });
    await kubeRequest(wl.b.kubeConfig(), 'POST', `/api/v1/namespaces/${APPS}/pods`, pendingPod(APPS, 'pb-1', '3'));
    await sleep(5000);
    expect(await replicasOf('b-md'), 'a paused Cluster is not scaled').to.equal(1);
    const events = await kubeRequest(mkc, 'GET', `/apis/events.k8s.io/v1/namespaces/${FLEET}/events`) as { items: Array<{ reason: string; regarding: { kind: string; name: string } }> };
    expect(events.items.some((e) => e.reason === 'HeldPaused' && e.regarding.kind === 'Cluster' && e.regarding.name === 'b')).to.equal(true);
    expect(events.items.some((e) => e.reason === 'HeldWorkloadAPIUnreachable' && e.regarding.name === 'c')).to.equal(true);
    await kubeRequest(mkc, 'PATCH', `${CAPI}/namespaces/${FLEET}/clusters/b`, { spec: { paused: false } }, 'application/merge-patch+json');
    await eventually('b-md scaled to 2 once unpaused', async () => (await replicasOf('b-md')) === 2, { timeoutMs: 60_000, intervalMs: 250 });
    expect(await conditionOf('b')).to.include({ status: 'True', reason: 'Autoscaling' });

    // b's apiserver frozen while b is autoscaled: held as unreachable, a unaffected; thawed: back.
    const f0 = Date.now();
    wl.b.signalApiServer('SIGSTOP');
    try {
      await eventually('cluster b held: WorkloadAPIUnreachable while its apiserver is frozen', async () => (await conditionOf('b'))?.reason === 'WorkloadAPIUnreachable', { timeoutMs: 30_000 });
      console.log(`      [measure] frozen workload apiserver: held after ${Date.now() - f0} ms`);
      await kubeRequest(wl.a.kubeConfig(), 'POST', `/api/v1/namespaces/${APPS}/pods`, pendingPod(APPS, 'pa-frozen-b', '3'));
      await eventually('a-md scaled to 4 while b is frozen', async () => (await replicasOf('a-md')) === 4, { timeoutMs: 60_000, intervalMs: 250 });
    } finally {
      wl.b.signalApiServer('SIGCONT');
    }
    const t1 = Date.now();
    await eventually('cluster b autoscaled again once its apiserver answers', async () => (await conditionOf('b'))?.reason === 'Autoscaling', { timeoutMs: 60_000 });
    console.log(`      [measure] thawed workload apiserver: autoscaled again after ${Date.now() - t1} ms`);
  });

  it('a killed replica\'s clusters move to the other within 15 s; a Cluster removed while running is released', async () => {
    const victim = replicas.find((r) => r.alive && r.fleet.owned().includes('fleet/a'))!;
    const survivor = replicas.find((r) => r.alive && r !== victim)!;
    const moved = victim.fleet.owned();
    const t0 = Date.now();
    victim.fleet.kill();
    victim.alive = false;
    killedAt = t0;
    await eventually('every cluster owned by the survivor', async () => ['fleet/a', 'fleet/b', 'fleet/c'].every((k) => survivor.fleet.owned().includes(k)), { timeoutMs: 30_000, intervalMs: 100 });
    const failoverMs = Date.now() - t0;
    console.log(`      [measure] SIGKILL-like stop of ${victim.id} (held ${moved.join(', ')}): all owned by ${survivor.id} after ${failoverMs} ms`);
    expect(failoverMs).to.be.below(15_000);
    for (const name of ['a', 'b', 'c']) expect(await leaseHolder(name)).to.equal(survivor.id);
    // The survivor acts on what the victim had.
    const [cl, md, pods] = moved.includes('fleet/a') ? [wl.a, 'a-md', 4] : [wl.b, 'b-md', 2];
    await kubeRequest(cl.kubeConfig(), 'POST', `/api/v1/namespaces/${APPS}/pods`, pendingPod(APPS, 'after-kill', '3'));
    await eventually(`${md} scaled by the survivor`, async () => (await replicasOf(md)) === pods + 1, { timeoutMs: 60_000, intervalMs: 250 });

    await kubeRequest(mkc, 'DELETE', `${CAPI}/namespaces/${FLEET}/clusters/c`);
    await eventually('cluster c released', async () => !survivor.fleet.owned().includes('fleet/c') && (await leaseHolder('c')) === '', { timeoutMs: 30_000 });
    expect(survivor.fleet.owned()).to.deep.equal(['fleet/a', 'fleet/b']);
    // The kubeconfigs are credentials: never in a log line.
    for (const name of ['a', 'b'] as const) {
      const key = /client-key-data: (\S+)/.exec(readFileSync(wl[name].kubeconfigPath, 'utf8'))![1]!;
      expect(logs.some((l) => l.includes(key.slice(0, 40)))).to.equal(false);
    }
  });

  it('a replica added while running gets its share by hand-over: no cluster led twice, none unled for long', async () => {
    const old = replicas.find((r) => r.alive)!;
    expect(old.fleet.owned()).to.deep.equal(['fleet/a', 'fleet/b']);
    // Longest time a cluster had no leader, sampled.
    const lastLed = new Map<string, number>([['fleet/a', Date.now()], ['fleet/b', Date.now()]]);
    let longestGap = 0;
    const gaps = setInterval(() => {
      const now = Date.now();
      for (const key of lastLed.keys()) {
        if (replicas.some((r) => r.alive && r.fleet.owned().includes(key))) {
          longestGap = Math.max(longestGap, now - lastLed.get(key)!);
          lastLed.set(key, now);
        }
      }
    }, 50);
    const t0 = Date.now();
    await startReplica('r3').start();
    const r3 = replicas.find((r) => r.id === 'r3')!;
    await eventually('one cluster each', async () => r3.fleet.owned().length === 1 && old.fleet.owned().length === 1, { timeoutMs: 30_000, intervalMs: 100 });
    clearInterval(gaps);
    console.log(`      [measure] replica r3 added: balanced after ${Date.now() - t0} ms; longest time a cluster had no leader ${longestGap} ms`);
    expect(longestGap, 'hand-over gap').to.be.below(5000);
    const key = r3.fleet.owned()[0]!;
    // The new owner acts: a pod in its cluster scales its group.
    const [cl, md] = key === 'fleet/a' ? [wl.a, 'a-md'] : [wl.b, 'b-md'];
    const before = await replicasOf(md);
    await kubeRequest(cl.kubeConfig(), 'POST', `/api/v1/namespaces/${APPS}/pods`, pendingPod(APPS, 'after-handover', '3'));
    await eventually(`${md} scaled by r3`, async () => (await replicasOf(md)) === before + 1, { timeoutMs: 60_000, intervalMs: 250 });
    expect(doubles, 'clusters led by two replicas at once (sampled every 50 ms over the whole run)').to.deep.equal([]);
  });

  it('the killed replica\'s presence Lease is deleted by a live replica; a delete at a stale resourceVersion keeps a renewed one', async () => {
    const leasePath = (name: string) => `/apis/coordination.k8s.io/v1/namespaces/${SYSTEM}/leases/${name}`;
    const exists = async (name: string) => kubeRequest(mkc, 'GET', leasePath(name)).then(() => true, () => false);
    const victim = replicas.find((r) => !r.alive)!;
    await eventually('the dead replica\'s presence Lease deleted', async () => !(await exists(replicaLeaseName(victim.id))), { timeoutMs: 90_000, intervalMs: 500 });
    console.log(`      [measure] presence Lease of ${victim.id} deleted ${Date.now() - killedAt} ms after the kill (GC after ${PRESENCE_GC_AFTER_LEASES} x 8 s unchanged)`);
    // Its last renewal came up to a retry period (2 s) before the kill, and was seen up to one after it.
    expect(Date.now() - killedAt, 'not before it was unchanged for 5 lease durations').to.be.at.least(PRESENCE_GC_AFTER_LEASES * 8000 - 4000);
    expect(logs.some((l) => l.includes(`deleted the presence Lease ${replicaLeaseName(victim.id)} of replica ${victim.id}`))).to.equal(true);
    for (const r of replicas.filter((x) => x.alive)) expect(await exists(replicaLeaseName(r.id)), `live ${r.id} keeps its presence`).to.equal(true);

    // The shell's delete on its own: a ghost Lease renewed after it was judged (its
    // resourceVersion moved on) is kept (409); at the current one it goes (the
    // DeleteOptions body travels on the keep-alive connection other requests use).
    const ghost = 'headroom-fleet-ghost';
    const created = await kubeRequest(mkc, 'POST', `/apis/coordination.k8s.io/v1/namespaces/${SYSTEM}/leases`, {
      apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: ghost, labels: { [FLEET_LABEL]: 'replica' } }, spec: { holderIdentity: 'ghost', leaseDurationSeconds: 8 },
    }) as { metadata: { resourceVersion: string } };
    const renewed = await kubeRequest(mkc, 'PATCH', leasePath(ghost), { spec: { renewTime: new Date().toISOString().replace('Z', '000Z') } }, 'application/merge-patch+json') as { metadata: { resourceVersion: string } };
    const client = new KubeClient(mkc);
    const glog: string[] = [];
    try {
      const leases = new FleetLeases(client, SYSTEM, 'gc-test', 8000, (m) => glog.push(m));
      expect(await leases.collectPresence([{ name: ghost, holder: 'ghost', resourceVersion: created.metadata.resourceVersion, unchangedMs: 40_000 }])).to.deep.equal([]);
      expect(glog.join('\n')).to.include(`kept the presence Lease ${ghost}: replica ghost renewed it`);
      expect(await exists(ghost)).to.equal(true);
      // The next request on the same connection is read intact after the body.
      expect((await client.request<{ items: unknown[] }>('GET', `/apis/coordination.k8s.io/v1/namespaces/${SYSTEM}/leases`)).items.length).to.be.greaterThan(0);
      expect(await leases.collectPresence([{ name: ghost, holder: 'ghost', resourceVersion: renewed.metadata.resourceVersion, unchangedMs: 40_000 }])).to.deep.equal([ghost]);
      expect(await exists(ghost)).to.equal(false);
      // Already gone: no error, nothing deleted.
      expect(await leases.collectPresence([{ name: ghost, holder: 'ghost', resourceVersion: renewed.metadata.resourceVersion, unchangedMs: 40_000 }])).to.deep.equal([]);
      expect(glog.filter((l) => l.includes('failed'))).to.deep.equal([]);
    } finally {
      client.close();
    }
  });
});
