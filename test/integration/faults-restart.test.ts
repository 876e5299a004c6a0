import { expect } from 'chai';
import { startControlPlane, type ControlPlane } from '../harness/control-plane.js';
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
describe('faults: kube-apiserver and etcd restarted mid scale-up (private control plane, ~1-2 min)', function () {
  let cp: ControlPlane;

  before(async function () {
    this.timeout(240_000);
    cp = await startControlPlane({ scheduler: true, kwok: true });
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
});
