import { expect } from 'chai';
import type { V1Node } from '@kubernetes/client-node';
import type { Controller } from '../../src/controller/controller.js';
import { eventually } from '../harness/wait.js';
import type { ControlPlane } from '../harness/control-plane.js';
import { sharedControlPlane } from './hooks.js';
import { faultScenario, type FaultScenario } from './fault-scenario.js';

/**
 * Issue 17 / ADR 0120: the runaway back-off survives a restart. Every new node of the
 * group is born with a NoExecute taint (as in chaos-runaway.test.ts), so a scale-up for
 * the pending pods helps none of them. The controller that wrote the scale-up is killed
 * before it can judge it (its new node has not been Ready for the settle time); a new
 * controller starts on the same cluster. It must take over the scale-up awaiting
 * judgement from the group's annotation, hold the group while the node settles, judge it
 * not helping (ScaleUpDidNotHelp), and add no node for the same pods. Before ADR 0120 the
 * new controller forgot the scale-up and added more useless nodes at once.
 */
const CHAOS_TAINT = { key: 'chaos.headroom.dev/unusable', value: 'true', effect: 'NoExecute' };
const MEMORY_ANNOTATION = 'headroom.dev/scale-up-memory';
const SETTLE_MS = 10_000;
/** How long the second controller is watched: past the settle time and several cycles. */
const WATCH_MS = 45_000;

describe('chaos: the runaway back-off survives a controller restart (shared control plane, ~1.5 min)', function () {
  let cp: ControlPlane;
  let s: FaultScenario | undefined;

  before(async function () {
    this.timeout(180_000);
    cp = await sharedControlPlane();
  });
  after(async function () {
    this.timeout(60_000);
    await s?.cleanup();
  });

  it('a controller started after the one that wrote a useless scale-up was killed judges it and adds no node for the same pods', async function () {
    this.timeout(240_000);
    const chaos = { on: false };
    s = await faultScenario({ adminKc: cp.kubeConfig(), prefix: 'restart-memory', fixture: { bootDelayMs: 1000, bootTaints: () => (chaos.on ? [CHAOS_TAINT] : []) } });
    const scenario = s;
    await scenario.createGroup({ name: 'md', replicas: 1, min: 1, max: 40, cpu: '4', memory: '16Gi' });
    const nodeNames = async () => new Set((await scenario.client.get<{ items: V1Node[] }>('/api/v1/nodes', { labelSelector: scenario.nodeSelector })).items.map((n) => n.metadata!.name!));
    const healthy = await eventually('the group\'s first (healthy) node', async () => {
      const names = await nodeNames();
      return names.size > 0 ? names : undefined;
    }, { timeoutMs: 60_000 });
    chaos.on = true;
    const options = { provisioning: { scaleUpEffect: { settleMs: SETTLE_MS } } };

    const first: Controller = await scenario.startController(options);
    await scenario.createPods('p', 12, '1');
    const written = await eventually('the first controller\'s scale-up', async () => {
      const r = await scenario.replicas('md');
      return r > 1 ? r : undefined;
    }, { timeoutMs: 60_000 });
    first.kill();
    const md = await scenario.client.get<{ metadata: { annotations?: Record<string, string> } }>(`/apis/cluster.x-k8s.io/v1beta2/namespaces/${scenario.ns}/machinedeployments/md`);
    const kept = JSON.parse(md.metadata.annotations?.[MEMORY_ANNOTATION] ?? '{}') as { scaleUps?: Array<{ pods: string[] }> };
    expect(kept.scaleUps?.length, 'the scale-up is kept on the group before it is written').to.be.at.least(1);
    // Its useless nodes come up (tainted from birth) while no controller runs.
    const tainted = await eventually('the tainted new nodes Ready', async () => {
      const items = (await scenario.client.get<{ items: V1Node[] }>('/api/v1/nodes', { labelSelector: scenario.nodeSelector })).items
        .filter((n) => !healthy.has(n.metadata!.name!) && n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'));
      return items.length >= written - 1 ? items.map((n) => n.metadata!.name!) : undefined;
    }, { timeoutMs: 60_000 });

    await scenario.startController(options);
    const startedAt = Date.now();
    let peak = written;
    while (Date.now() - startedAt < WATCH_MS) {
      peak = Math.max(peak, await scenario.replicas('md'));
      await new Promise((r) => setTimeout(r, 1000));
    }
    const created = [...await nodeNames()].filter((n) => !healthy.has(n));
    const events = (await scenario.client.get<{ items: Array<{ reason: string; note?: string; regarding: { name: string } }> }>(`/apis/events.k8s.io/v1/namespaces/${scenario.ns}/events`))
      .items.filter((e) => e.regarding.name === 'md' && e.reason === 'ScaleUpDidNotHelp');
    const pending = (await scenario.client.get<{ items: Array<{ spec?: { nodeName?: string } }> }>(`/api/v1/namespaces/${scenario.ns}/pods`)).items.filter((p) => !p.spec?.nodeName).length;
    console.log(`      [measure] restart: the first controller scaled md 1 -> ${written} and was killed; ${tainted.length} tainted node(s) Ready; over ${WATCH_MS / 1000} s the second controller's peak replicas ${peak}, ${created.length} non-healthy node(s) in all, ${events.length} ScaleUpDidNotHelp event(s), ${pending} pod(s) pending: ${events[0]?.note ?? ''}`);
    expect(peak, 'the second controller added no node for the same pods').to.equal(written);
    expect(created.length, 'no tainted node beyond the first controller\'s').to.equal(written - 1);
    expect(events.length, 'the second controller judged the first one\'s scale-up').to.be.at.least(1);
    expect(events[0]!.note).to.contain(CHAOS_TAINT.key);
    expect(scenario.invariants.violations).to.deep.equal([]);
  });
});
