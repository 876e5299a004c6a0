import { expect } from 'chai';
import { solve } from '../../../src/packing/solve.js';
import { SIM_DISRUPTION, headroomPolicy } from '../../../src/sim/policies/headroom.js';
import { policyFactory, simulationSnapshot } from '../../../src/sim/policies.js';
import type { PolicyFactory } from '../../../src/sim/policy.js';
import type { PolicyName, PolicyRun } from '../../../src/sim/result.js';
import { runTrace } from '../../../src/sim/run.js';
import type { Trace } from '../../../src/sim/trace.js';
import { group, podTemplate, trace } from '../sim/fixtures.js';

/**
 * Underutilisation consolidation end to end in the simulator: the Disruptor (as the
 * headroom policy runs it, and as reactive runs it with Karpenter's settings) on the
 * in-process cluster, with the simulated kube-scheduler re-placing evicted pods.
 */

const headroom = headroomPolicy({ solve: (s) => solve(s), disruption: SIM_DISRUPTION, prediction: false });

async function run(t: Trace, name: PolicyName, factory: PolicyFactory): Promise<PolicyRun> {
  const r = await runTrace(t, { seed: 1, policies: [{ name, factory }], buildSnapshot: simulationSnapshot });
  return r.policies[name]!;
}

/** `replicas` one-cpu pods of web, from the start, for `duration`. */
function steady(replicas: number, groups: Record<string, unknown>[], duration = '20m'): Trace {
  return trace('steady', duration, groups, [{
    kind: 'Deployment', name: 'web', template: podTemplate('web', '1', '1Gi'),
    replicas: { points: [{ at: '0s', replicas }], interpolation: 'step', every: '1m' },
  }]);
}

describe('consolidation in the simulator', function () {
  this.timeout(60_000);

  for (const [name, factory] of [['headroom', headroom], ['reactive', policyFactory('reactive')]] as const) {
    it(`${name}: two half-empty nodes are consolidated to one, its pods re-placed with no new node`, async () => {
      // Two Ready 4-cpu nodes; the scheduler spreads the four pods two and two.
      const t = steady(4, [group({ name: 'md', cpu: '4', memory: '16Gi', price: '0.2', replicas: 2 })]);
      const r = await run(t, name, factory);
      const downs = r.actions.filter((a) => a.to < a.from);
      const ups = r.actions.filter((a) => a.to > a.from);
      expect(ups).to.deep.equal([]);
      expect(downs).to.have.length(1);
      expect(downs[0]!.reason).to.match(/underutilized/);
      expect(r.summary.evictions).to.equal(2);
      // The evicted pods found room at once on the node that stayed.
      expect(r.summary.pendingSeconds.max).to.be.below(1);
    });
  }

  it('headroom: replaces an expensive node with a cheaper one, scaling it up first and removing the old node once it is Ready', async () => {
    const t = steady(1, [
      group({ name: 'big', cpu: '16', memory: '64Gi', price: '0.8', replicas: 1 }),
      group({ name: 'small', cpu: '2', memory: '8Gi', price: '0.1', boot: '60s' }),
    ]);
    const r = await run(t, 'headroom', headroom);
    const up = r.actions.find((a) => a.to > a.from);
    const down = r.actions.find((a) => a.to < a.from);
    expect(up?.group).to.match(/small$/);
    expect(down?.group).to.match(/big$/);
    // Removed only after the replacement booted (60 s), never before it was asked for.
    expect(down!.at - up!.at).to.be.at.least(60);
    expect(r.summary.evictions).to.equal(1);
    expect(r.summary.pendingSeconds.max).to.be.below(1);
    // Paid: big until the swap, small after it, far less than big all along.
    expect(r.summary.cost).to.be.below((0.8 * 20) / 60);
  });

  it('headroom: keeps a node whose pods have nowhere else to go', async () => {
    const t = steady(6, [group({ name: 'md', cpu: '4', memory: '16Gi', price: '0.2', replicas: 2 })]);
    const r = await run(t, 'headroom', headroom);
    expect(r.actions).to.deep.equal([]);
    expect(r.summary.evictions).to.equal(0);
  });
});
