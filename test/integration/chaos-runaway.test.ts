import { expect } from 'chai';
import type { V1Node } from '@kubernetes/client-node';
import { Informer } from '../../src/kube/informer.js';
import type { ControlPlane } from '../harness/control-plane.js';
import { sharedControlPlane } from './hooks.js';
import { faultScenario, type FaultScenario } from './fault-scenario.js';

/**
 * Issue 17, chaos as Karpenter tests it ("runaway scale-up"): every node the group
 * brings up is tainted NoExecute at once by the test (Karpenter's chaos suite does the
 * same with a taint controller), so it helps no pending pod. Over 5 minutes the live
 * node count must stay bounded: Headroom must not keep adding nodes for pods that the
 * new nodes cannot take. Once with emptiness (WhenEmpty) and once with consolidation
 * (WhenEmptyOrUnderutilized), both at once, each in its own namespace with its own
 * in-process controller. 12 one-cpu pods need 3 four-cpu nodes; the group's max is 40.
 * HEADROOM_CHAOS_MINUTES=N runs longer (or shorter).
 */
const MINUTES = Number(process.env.HEADROOM_CHAOS_MINUTES ?? 5);
const CHAOS_TAINT = { key: 'chaos.headroom.dev/unusable', value: 'true', effect: 'NoExecute' };
/** Twice what the pods need; a runaway reaches the group's max (40). */
const NODE_BOUND = 6;

async function runaway(s: FaultScenario, policy: 'WhenEmpty' | 'WhenEmptyOrUnderutilized') {
  await s.client.request('POST', '/apis/headroom.dev/v1alpha1/nodepools', {
    body: {
      apiVersion: 'headroom.dev/v1alpha1', kind: 'NodePool', metadata: { name: s.ns },
      spec: { nodeGroupSelector: { matchLabels: { pool: s.ns } }, disruption: { consolidationPolicy: policy, consolidateAfter: '5s' } },
    },
  });
  await s.createGroup({ name: 'md', replicas: 0, min: 0, max: 40, cpu: '4', memory: '16Gi', labels: { pool: s.ns } });
  // The taint controller: every node of the group gets the NoExecute taint as soon as it appears.
  const nodes = new Informer<V1Node>(s.client, { group: '', version: 'v1', plural: 'nodes', labelSelector: s.nodeSelector });
  const created = new Set<string>();
  nodes.onChange((ch) => {
    const n = ch.object as V1Node | undefined;
    const name = n?.metadata?.name;
    if (!n || !name || ch.type === 'DELETED') return;
    created.add(name);
    if (n.spec?.taints?.some((t) => t.key === CHAOS_TAINT.key)) return;
    void s.client.request('PATCH', `/api/v1/nodes/${name}`, {
      contentType: 'application/merge-patch+json', body: { spec: { taints: [...(n.spec?.taints ?? []), CHAOS_TAINT] } },
    }).catch(() => undefined);
  });
  nodes.start();
  await nodes.waitForSync();
  const ctl = await s.startController({ disruption: { intervalMs: 2000 } });
  await s.createPods('p', 12, '1');
  const samples: number[] = [];
  const end = Date.now() + MINUTES * 60_000;
  while (Date.now() < end) {
    samples.push(nodes.list().length);
    await new Promise((r) => setTimeout(r, 2000));
  }
  nodes.stop();
  void ctl;
  return { peak: Math.max(...samples), created: created.size, last: samples.at(-1) ?? 0, peakReplicas: s.invariants.peakReplicas.get('md') ?? 0 };
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

  it(`the live node count stays at most ${NODE_BOUND} over ${MINUTES} min with emptiness and with consolidation (max size 40)`, async function () {
    this.timeout(MINUTES * 60_000 + 180_000);
    const [empty, consolidate] = await Promise.all(['chaos-empty', 'chaos-consolidate'].map((prefix) => faultScenario({ adminKc: cp.kubeConfig(), prefix, fixture: { bootDelayMs: 1000 } })));
    scenarios.push(empty!, consolidate!);
    const [a, b] = await Promise.all([runaway(empty!, 'WhenEmpty'), runaway(consolidate!, 'WhenEmptyOrUnderutilized')]);
    console.log(`      [measure] runaway, emptiness: peak ${a.peak} live nodes (peak replicas ${a.peakReplicas}), ${a.created} nodes created in ${MINUTES} min, ${a.last} at the end; consolidation: peak ${b.peak} (peak replicas ${b.peakReplicas}), ${b.created} created, ${b.last} at the end`);
    expect(a.peak, 'emptiness: live nodes').to.be.at.most(NODE_BOUND);
    expect(b.peak, 'consolidation: live nodes').to.be.at.most(NODE_BOUND);
    expect(empty!.invariants.violations).to.deep.equal([]);
    expect(consolidate!.invariants.violations).to.deep.equal([]);
  });
});
