import { expect } from 'chai';
import type { MachineRef, MachineRemoval, NodeGroupRef } from '../../../src/capi/actuator.js';
import { solve } from '../../../src/packing/solve.js';
import { loadBuiltinTrace } from '../../../src/sim/builtin.js';
import type { SimCluster } from '../../../src/sim/cluster.js';
import { headroomPolicy } from '../../../src/sim/policies/headroom.js';
import { simulationSnapshot } from '../../../src/sim/policies.js';
import type { PolicyFactory } from '../../../src/sim/policy.js';
import type { PolicyRun } from '../../../src/sim/result.js';
import { runTrace } from '../../../src/sim/run.js';
import { SIM_EPOCH } from '../../../src/sim/virtual-clock.js';
import type { Trace } from '../../../src/sim/trace.js';
import { group, podTemplate, trace } from '../sim/fixtures.js';

/**
 * The Disruptor as the simulator's `headroom` policy runs it (next to the
 * Provisioner, on the in-process cluster and the virtual clock). Every
 * deleteMachine is checked against the simulated cluster's own bookkeeping (an
 * oracle independent of the disruptor): the node had no pod, and had had none
 * for at least consolidateAfter (30 s by default).
 */

interface Deletion {
  /** Seconds since the start. */
  at: number;
  node: string;
  pods: number;
  /** How long the simulated cluster says the node had been empty, s. */
  emptyFor: number;
}

function observed(deletions: Deletion[]): PolicyFactory {
  // Emptiness only: the oracle checks removed nodes had no pod. Consolidation of
  // underutilised nodes (the default policy since issue 25) drains first, tested apart.
  const inner = headroomPolicy({ solve: (s) => solve(s), disruption: { defaultConsolidationPolicy: 'WhenEmpty' } });
  return (ctx) => {
    const cluster = ctx.cluster;
    const seen = (m: MachineRef) => {
      const n = m.nodeName ? cluster.nodes.get(m.nodeName) : undefined;
      const now = ctx.clock.now();
      deletions.push({
        at: (now - SIM_EPOCH) / 1000, node: m.nodeName ?? '?', pods: n ? n.pods.size : -1,
        emptyFor: n?.emptySince === undefined ? -1 : (now - n.emptySince) / 1000,
      });
    };
    const deleteMachine = async (g: NodeGroupRef, m: MachineRef, reason: string) => {
      seen(m);
      return cluster.deleteMachine(g, m, reason);
    };
    const deleteMachines = async (g: NodeGroupRef, ms: readonly MachineRemoval[]) => {
      for (const m of ms) seen(m.machine);
      return cluster.deleteMachines(g, ms);
    };
    const proxy = new Proxy(cluster, {
      get(target, prop) {
        if (prop === 'deleteMachine') return deleteMachine;
        if (prop === 'deleteMachines') return deleteMachines;
        const v = Reflect.get(target, prop, target) as unknown;
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      },
    }) as SimCluster;
    return inner({ ...ctx, cluster: proxy });
  };
}

async function run(t: Trace): Promise<{ r: PolicyRun; deletions: Deletion[] }> {
  const deletions: Deletion[] = [];
  const res = await runTrace(t, { seed: 1, policies: [{ name: 'headroom', factory: observed(deletions) }], buildSnapshot: simulationSnapshot });
  return { r: res.policies.headroom!, deletions };
}

function expectSafe(deletions: Deletion[]): void {
  for (const d of deletions) {
    expect(d.pods, `node ${d.node} had pods when removed at ${d.at} s`).to.equal(0);
    expect(d.emptyFor, `node ${d.node} empty for only ${d.emptyFor} s`).to.be.at.least(30);
  }
}

describe('Disruptor in the simulator (headroom policy)', function () {
  this.timeout(60_000);

  it('removes every node 30-40 s after it empties, all in one pass (the default budget lets 10 empty nodes go at once), with no re-provisioning', async () => {
    const t = trace('burst', '30m', [group({ name: 'md', cpu: '4', memory: '16Gi', price: '0.2', boot: '60s' })], [{
      kind: 'Deployment', name: 'web', template: podTemplate('web', '1', '1Gi'),
      replicas: { points: [{ at: '0s', replicas: 0 }, { at: '10s', replicas: 10 }, { at: '10m', replicas: 0 }], interpolation: 'step', every: '5s' },
    }]);
    const { r, deletions } = await run(t);
    const ups = r.actions.filter((a) => a.to > a.from);
    const downs = r.actions.filter((a) => a.to < a.from);
    expect(ups).to.have.length(1);
    expect(ups[0]!.to).to.equal(3);
    expect(downs).to.have.length(3);
    expect(deletions).to.have.length(3);
    expectSafe(deletions);
    // The first pass after 30 s of emptiness takes all three, in one replicas write.
    expect(downs[0]!.at).to.be.within(630, 640);
    expect(downs[2]!.at).to.equal(downs[0]!.at);
    expect(r.summary.scaleActions).to.equal(2);
    expect(r.notes.join('\n')).to.not.match(/no scale-down/);
  });

  it('keeps a node that still runs a pod, and never goes below min size', async () => {
    const t = trace('tail', '30m', [group({ name: 'md', cpu: '4', memory: '16Gi', price: '0.2', boot: '60s', replicas: 2, min: 2 })], [{
      kind: 'Deployment', name: 'web', template: podTemplate('web', '1', '1Gi'),
      replicas: { points: [{ at: '0s', replicas: 0 }, { at: '10s', replicas: 16 }, { at: '10m', replicas: 1 }], interpolation: 'step', every: '5s' },
    }]);
    const { r, deletions } = await run(t);
    expectSafe(deletions);
    const peak = r.summary.peakNodes;
    expect(peak).to.equal(4);
    // Four nodes, one pod left: the two emptied nodes above min size go, nothing else.
    expect(deletions).to.have.length(2);
    const final = r.actions.reduce((n, a) => a.to, 0);
    expect(final).to.equal(2);
    // The remaining pod was never evicted: it ran from the scale-up on, so nothing waited past boot.
    expect(r.summary.pendingSeconds.max).to.be.below(80);
  });

  it('removes only nodes that were empty for 30 s over a busy 40-minute slice of builtin:cron-batch', async () => {
    const t = { ...loadBuiltinTrace('cron-batch'), duration: 40 * 60_000 };
    const { r, deletions } = await run(t);
    expect(deletions.length).to.be.greaterThan(0);
    expectSafe(deletions);
    expect(r.actions.filter((a) => a.to < a.from)).to.have.length(deletions.filter((d) => d.pods === 0).length);
  });
});
