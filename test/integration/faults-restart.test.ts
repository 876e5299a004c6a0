import { expect } from 'chai';
import type { V1Pod } from '@kubernetes/client-node';
import { startControlPlane, type ControlPlane } from '../harness/control-plane.js';
import { TcpProxy } from '../harness/tcp-proxy.js';
import { eventually } from '../harness/wait.js';
import { faultScenario, TEST_LEASE } from './fault-scenario.js';

/**
 * Issue 17, faults on the real control plane: kube-apiserver and etcd killed (SIGKILL)
 * and restarted in place in the middle of a scale-up. A private control plane (the
 * shared one serves every other file). The controller leads on a Lease, the fixture's
 * Machines take 2 s to boot, and the InvariantChecker watches throughout: replicas in
 * [min, max], never more than the pods need (capacity provisioned twice), and every
 * pod ends Running.
 *
 * Each case: 16 pods of 1 cpu (4 nodes of 4 cpu), the fault as soon as the first
 * scale-up is written (nodes still booting), then 8 more pods while the component is
 * down or just back: 24 pods, 6 nodes needed.
 */
const COMPACTION_S = 2;

describe('faults: kube-apiserver and etcd restarted mid scale-up (private control plane, ~1-2 min)', function () {
  let cp: ControlPlane;

  before(async function () {
    this.timeout(240_000);
    // kube-apiserver compacts etcd every 2 s (5 min by default), so a resourceVersion a
    // client held before a few seconds of writes is soon gone from etcd (the 410 case).
    cp = await startControlPlane({ scheduler: true, kwok: true, apiServerArgs: [`--etcd-compaction-interval=${COMPACTION_S}s`] });
  });
  after(async function () {
    this.timeout(60_000);
    await cp?.stop();
  });

  for (const component of ['kube-apiserver', 'etcd'] as const) {
    it(`${component} SIGKILLed and restarted 4 s later mid scale-up: 24 pods Running on exactly 6 nodes, invariants held`, async function () {
      this.timeout(180_000);
      const s = await faultScenario({ adminKc: cp.kubeConfig(), prefix: `fault-${component}`, fixture: { bootDelayMs: 2000 }, invariants: { needed: { md: 6 } } });
      try {
        await s.createGroup({ name: 'md', replicas: 0, min: 0, max: 10, cpu: '4', memory: '16Gi' });
        const ctl = await s.startController({ leaderElection: { namespace: s.ns, identity: 'a', ...TEST_LEASE } });
        await eventually('a to lead', async () => ctl.isLeader(), { timeoutMs: 30_000, intervalMs: 50 });
        await s.createPods('first', 16, '1');
        await eventually('the first scale-up', async () => (await s.replicas('md')) > 0, { timeoutMs: 30_000, intervalMs: 50 });
        const replicasAtFault = await s.replicas('md');
        const restart = cp.restartCore(component, { downMs: 4000 });
        // The second wave arrives while the component is down: the client retries until it is back.
        await new Promise((r) => setTimeout(r, 1000));
        await eventually('the second wave created', async () => { await s.createPods('second', 8, '1'); return true; }, { timeoutMs: 60_000, intervalMs: 500 });
        const { readyAfterMs } = await restart;
        const startedAt = Date.now();
        const pods = await s.invariants.allPodsRunning(120_000, 24).catch((err: Error) => { throw new Error(`${err.message}\n${s.logs.slice(-20).join('\n')}`); });
        const final = await s.replicas('md');
        console.log(`      [measure] ${component} restart: replicas at the fault ${replicasAtFault}, API ready again ${readyAfterMs} ms after the kill, 24 pods Running ${Date.now() - startedAt} ms later; replicas ${final} (peak ${s.invariants.peakReplicas.get('md')}), violations ${s.invariants.violations.length}`);
        expect(pods).to.have.length(24);
        expect(final).to.equal(6);
        expect(s.invariants.violations).to.deep.equal([]);
        expect(s.invariants.peakReplicas.get('md')).to.equal(6);
      } finally {
        await s.cleanup();
      }
    });
  }

  /**
   * A forced `410 Gone`: the controller reaches the apiserver through a TCP proxy that
   * goes silent, so it sees nothing while pods are created and one is deleted; etcd's
   * history is compacted past every resourceVersion it holds (the apiserver's own
   * compaction, every 2 s here), and kube-apiserver restarts, so its watch cache starts
   * after them too. Its watches resume from a compacted resourceVersion, get 410, and
   * must relist, replacing the cache: the deleted pod gone, the new ones there and
   * provisioned for.
   */
  it('a 410 Gone in the running controller (blind while pods change, etcd compacted, apiserver restarted): it relists, its cache equals the cluster, and 12 pods end Running on exactly 3 nodes', async function () {
    this.timeout(180_000);
    const proxy = await TcpProxy.start(new URL(cp.server));
    const s = await faultScenario({ adminKc: cp.kubeConfig(), prefix: 'fault-gone', fixture: { bootDelayMs: 1000 }, invariants: { needed: { md: 3 } } });
    try {
      await s.createGroup({ name: 'md', replicas: 0, min: 0, max: 10, cpu: '4', memory: '16Gi' });
      // Fits no node of the group (never provisioned for), and is deleted while the controller is blind.
      await s.createPods('doomed', 1, '64');
      const ctl = await s.startController({ workload: proxy.kubeConfig(cp.kubeConfig()) });
      const podInformer = () => ctl.cache.informerStats().find((i) => i.resource.includes('pods'))!;
      await eventually('the doomed pod in the controller\'s cache', async () => ctl.cache.objects().pods.some((p) => p.metadata?.name === 'doomed-0'), { timeoutMs: 30_000 });
      const relistsBefore = podInformer().relists;
      proxy.stall();
      await s.createPods('p', 12, '1');
      await s.client.request('DELETE', `/api/v1/namespaces/${s.ns}/pods/doomed-0`, { query: { gracePeriodSeconds: 0 } });
      // Two compaction periods: etcd's history now starts after everything the controller saw.
      await new Promise((r) => setTimeout(r, 2.5 * COMPACTION_S * 1000));
      const { readyAfterMs } = await cp.restartCore('kube-apiserver', { downMs: 1000 });
      const back = Date.now();
      proxy.resume();
      proxy.drop();
      await eventually('the pod informer relisted after 410 Gone', async () => podInformer().relists > relistsBefore, { timeoutMs: 60_000, intervalMs: 100 });
      const relistMs = Date.now() - back;
      const pods = await s.invariants.allPodsRunning(120_000, 12).catch((err: Error) => { throw new Error(`${err.message}\n${s.logs.slice(-20).join('\n')}`); });
      const live = (await s.client.get<{ items: V1Pod[] }>(`/api/v1/namespaces/${s.ns}/pods`)).items.map((p) => p.metadata!.name!).sort();
      const cached = ctl.cache.objects().pods.filter((p) => p.metadata?.namespace === s.ns).map((p) => p.metadata!.name!).sort();
      const relists = ctl.cache.informerStats().filter((i) => i.relists > 0).map((i) => `${i.resource} ${i.relists}`);
      console.log(`      [measure] 410 Gone: etcd compacted every ${COMPACTION_S} s, API ready ${readyAfterMs} ms after the kill; pods relisted ${relistMs} ms after it was back; relists: ${relists.join(', ')}; 12 pods Running ${Date.now() - back} ms after; replicas ${await s.replicas('md')}; violations ${s.invariants.violations.length}`);
      expect(podInformer().relists, 'relists after 410 Gone').to.be.greaterThan(relistsBefore);
      expect(cached, 'the controller\'s cache after the relist').to.deep.equal(live);
      expect(cached).to.not.include('doomed-0');
      expect(pods).to.have.length(12);
      expect(await s.replicas('md')).to.equal(3);
      expect(s.invariants.violations).to.deep.equal([]);
    } finally {
      await s.cleanup();
      await proxy.close();
    }
  });
});
