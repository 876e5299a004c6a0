import { expect } from 'chai';
import type { V1Node } from '@kubernetes/client-node';
import { Registry } from 'prom-client';
import { Informer } from '../../src/kube/informer.js';
import { eventually } from '../harness/wait.js';
import type { ControlPlane } from '../harness/control-plane.js';
import { sharedControlPlane } from './hooks.js';
import { faultScenario, type FaultScenario } from './fault-scenario.js';

/**
 * Issue 17, chaos as Karpenter tests it ("runaway scale-up"): every node the group
 * brings up carries a NoExecute taint from birth (Karpenter's chaos suite adds it with a
 * taint controller), so it helps no pending pod. The group starts with one
 * healthy, untainted node, so the shape Headroom learns from the group's Ready nodes
 * does not carry the taint: on capacity alone every cycle would add nodes for the same
 * pods. What bounds the count is the back-off (scale-up-effect.ts): the scale-up is
 * judged not helping (a ScaleUpDidNotHelp Event, headroom_scale_ups_ineffective_total)
 * and the group stops growing. Over 5 minutes, once with emptiness (WhenEmpty) and once
 * with consolidation (WhenEmptyOrUnderutilized), both at once, each in its own namespace
 * with its own in-process controller. 12 one-cpu pods; the healthy node takes 3, the
 * rest need 3 more four-cpu nodes; the group's max is 40.
 * HEADROOM_CHAOS_MINUTES=N runs longer (or shorter).
 */
const MINUTES = Number(process.env.HEADROOM_CHAOS_MINUTES ?? 5);
const CHAOS_TAINT = { key: 'chaos.headroom.dev/unusable', value: 'true', effect: 'NoExecute' };
/** The healthy node plus twice the nodes the pods need; a runaway reaches the group's max (40). */
const NODE_BOUND = 7;
/** Nodes created over the run: one scale-up, and one more after a back-off ends; a runaway adds a few every cycle. */
const CREATED_BOUND = 6;

/** Whether a scenario's fixture taints new nodes yet (off until the healthy node exists). */
interface ChaosSwitch { on: boolean }

async function runaway(s: FaultScenario, policy: 'WhenEmpty' | 'WhenEmptyOrUnderutilized', chaos: ChaosSwitch) {
  await s.client.request('POST', '/apis/headroom.dev/v1alpha1/nodepools', {
    body: {
      apiVersion: 'headroom.dev/v1alpha1', kind: 'NodePool', metadata: { name: s.ns },
      spec: { nodeGroupSelector: { matchLabels: { pool: s.ns } }, disruption: { consolidationPolicy: policy, consolidateAfter: '5s' } },
    },
  });
  await s.createGroup({ name: 'md', replicas: 1, min: 1, max: 40, cpu: '4', memory: '16Gi', labels: { pool: s.ns } });
  const healthy = await eventually('the group\'s first (healthy) node', async () => {
    const list = await s.client.get<{ items: V1Node[] }>('/api/v1/nodes', { labelSelector: s.nodeSelector });
    return list.items.length > 0 ? new Set(list.items.map((n) => n.metadata!.name!)) : undefined;
  }, { timeoutMs: 60_000 });
  // Every later node of the group is born with the NoExecute taint (the fixture's
  // bootTaints: Karpenter's chaos taint controller, without the window in which
  // kube-scheduler could bind a pod before the taint lands).
  chaos.on = true;
  const nodes = new Informer<V1Node>(s.client, { group: '', version: 'v1', plural: 'nodes', labelSelector: s.nodeSelector });
  const created = new Set<string>();
  nodes.onChange((ch) => {
    const name = (ch.object as V1Node | undefined)?.metadata?.name;
    if (name && ch.type !== 'DELETED' && !healthy.has(name)) created.add(name);
  });
  nodes.start();
  await nodes.waitForSync();
  const registry = new Registry();
  await s.startController({ disruption: { intervalMs: 2000 }, registry });
  await s.createPods('p', 12, '1');
  const samples: number[] = [];
  const end = Date.now() + MINUTES * 60_000;
  while (Date.now() < end) {
    samples.push(nodes.list().length);
    await new Promise((r) => setTimeout(r, 2000));
  }
  nodes.stop();
  const ineffective = ((await registry.getSingleMetric('headroom_scale_ups_ineffective_total')?.get())?.values ?? []).reduce((a, v) => a + v.value, 0);
  const events = (await s.client.get<{ items: Array<{ reason: string; note?: string; regarding: { name: string } }> }>(`/apis/events.k8s.io/v1/namespaces/${s.ns}/events`))
    .items.filter((e) => e.regarding.name === 'md' && e.reason === 'ScaleUpDidNotHelp');
  return {
    peak: Math.max(...samples), created: created.size, last: samples.at(-1) ?? 0, peakReplicas: s.invariants.peakReplicas.get('md') ?? 0,
    ineffective, events: events.length, firstNote: events[0]?.note ?? '',
  };
}

describe(`chaos: runaway scale-up, every new node NoExecute-tainted (emptiness and consolidation at once, shared control plane, ${MINUTES} min)`, function () {
  let cp: ControlPlane;
  const scenarios: FaultScenario[] = [];

  before(async function () {
    this.timeout(180_000);
    cp = await sharedControlPlane();
  });
  after(async function () {
    this.timeout(60_000);
    for (const s of scenarios) {
      await s.client.request('DELETE', `/apis/headroom.dev/v1alpha1/nodepools/${s.ns}`).catch(() => {});
      await s.cleanup();
    }
  });

  it(`the group backs off (ScaleUpDidNotHelp, headroom_scale_ups_ineffective_total): at most ${CREATED_BOUND} tainted nodes created and ${NODE_BOUND} live over ${MINUTES} min with emptiness and with consolidation (max size 40)`, async function () {
    this.timeout(MINUTES * 60_000 + 180_000);
    const switches = [{ on: false }, { on: false }] as const;
    const [empty, consolidate] = await Promise.all((['chaos-empty', 'chaos-consolidate'] as const).map((prefix, i) => faultScenario({
      adminKc: cp.kubeConfig(), prefix, fixture: { bootDelayMs: 1000, bootTaints: () => (switches[i]!.on ? [CHAOS_TAINT] : []) },
    })));
    scenarios.push(empty!, consolidate!);
    const [a, b] = await Promise.all([runaway(empty!, 'WhenEmpty', switches[0]), runaway(consolidate!, 'WhenEmptyOrUnderutilized', switches[1])]);
    for (const [name, r] of [['emptiness', a], ['consolidation', b]] as const) {
      console.log(`      [measure] runaway, ${name}: peak ${r.peak} live nodes (peak replicas ${r.peakReplicas}), ${r.created} tainted nodes created in ${MINUTES} min, ${r.last} at the end; ${r.ineffective} ineffective scale-up(s), ${r.events} ScaleUpDidNotHelp event(s): ${r.firstNote}`);
    }
    for (const [name, r] of [['emptiness', a], ['consolidation', b]] as const) {
      expect(r.ineffective, `${name}: scale-ups judged not helping (headroom_scale_ups_ineffective_total)`).to.be.at.least(1);
      expect(r.events, `${name}: ScaleUpDidNotHelp events on the group`).to.be.at.least(1);
      expect(r.firstNote, name).to.contain(CHAOS_TAINT.key);
      expect(r.created, `${name}: tainted nodes created`).to.be.at.most(CREATED_BOUND);
      expect(r.peak, `${name}: live nodes`).to.be.at.most(NODE_BOUND);
    }
    expect(empty!.invariants.violations).to.deep.equal([]);
    expect(consolidate!.invariants.violations).to.deep.equal([]);
  });
});
