import { expect } from 'chai';
import { FutureDemand, upperBound } from '../../../src/sim/future-demand.js';
import { POLICY_FACTORIES, simulationSnapshot } from '../../../src/sim/policies.js';
import type { PolicyName } from '../../../src/sim/result.js';
import { runTrace } from '../../../src/sim/run.js';
import { group, podTemplate, trace } from './fixtures.js';

/** A step up at 20 min, a noisy level, a step down, and a CronJob fan-out: demand no reactive policy can meet in time. */
function rises() {
  return trace('rises', '2h', [
    { ...group({ name: 'small', cpu: '2', memory: '8Gi', price: '0.1', replicas: 1, min: 1 }), bootDelay: { min: '60s', max: '3m' } },
    group({ name: 'medium', cpu: '4', memory: '16Gi', price: '0.2', boot: '90s' }),
  ], [
    {
      kind: 'Deployment', name: 'web', template: podTemplate('web', '500m', '1Gi'),
      replicas: { points: [{ at: '0s', replicas: 2 }, { at: '20m', replicas: 40 }, { at: '80m', replicas: 10 }], interpolation: 'step', noise: { stddev: 2 }, every: '30s' },
    },
    { kind: 'CronJob', name: 'batch', schedule: '45 * * * *', completions: 20, parallelism: 20, duration: '5m', template: podTemplate('batch', '1', '2Gi') },
  ]);
}

describe('simulation: the oracle policy', function () {
  this.timeout(120_000);

  it('reads the future the workload driver will play: replica steps and job starts', () => {
    const t = rises();
    const f = new FutureDemand(t, 1);
    // Before the step at 20 min: the step's pods are ahead; the CronJob at 45 min is 20 pods.
    const before = f.extraPods(19 * 60_000, 21 * 60_000);
    expect(before[0]).to.be.within(33, 45);
    expect(f.extraPods(44 * 60_000, 45 * 60_000)[1]).to.equal(20);
    expect(f.extraPods(45 * 60_000, 46 * 60_000)[1]).to.equal(0);
    expect(f.rises).to.include(45 * 60_000);
    expect(upperBound({ kind: 'normal', mean: 90_000, stddev: 20_000, min: 45_000, max: 240_000 })).to.equal(170_000);
    expect(upperBound({ kind: 'uniform', min: 1, max: 5 })).to.equal(5);
  });

  it('has pods find Ready nodes as they are created, at about reactive\'s cost', async () => {
    const t = rises();
    const names: PolicyName[] = ['oracle', 'reactive'];
    const r = await runTrace(t, { seed: 1, buildSnapshot: simulationSnapshot, policies: names.map((name) => ({ name, factory: POLICY_FACTORIES[name] })) });
    const oracle = r.policies.oracle!.summary;
    const reactive = r.policies.reactive!.summary;
    // Reactive waits a boot for every rise; the oracle asked one boot time ahead.
    expect(reactive.pendingPodSeconds).to.be.greaterThan(2000);
    expect(oracle.pendingPodSeconds).to.be.lessThan(reactive.pendingPodSeconds * 0.05);
    // Only the kube-scheduler placing differently from the packer leaves a few pods short.
    expect(oracle.pendingSeconds.p95).to.equal(0);
    expect(oracle.waitedPods).to.be.at.most(reactive.waitedPods / 10);
    // It pays for nodes booting ahead, no more: within a few percent of reactive's, and above the floor.
    expect(oracle.cost).to.be.at.least(oracle.costFloor);
    expect(oracle.cost).to.be.lessThan(reactive.cost * 1.15);
    expect(r.policies.oracle!.notes.join()).to.include('reads the trace\'s future');
  });

  it('reports pending and cost per simulated day that add up to the totals', async () => {
    const t = { ...rises(), duration: 30 * 3_600_000 };
    const r = await runTrace(t, { seed: 2, buildSnapshot: simulationSnapshot, policies: [{ name: 'reactive', factory: POLICY_FACTORIES.reactive }] });
    const s = r.policies.reactive!.summary;
    expect(s.perDay.cost).to.have.length(2);
    expect(s.perDay.pendingPodSeconds).to.have.length(2);
    const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
    expect(sum(s.perDay.cost)).to.be.closeTo(s.cost, 0.02);
    expect(sum(s.perDay.pendingPodSeconds)).to.be.closeTo(s.pendingPodSeconds, 0.5);
    // The second day is 6 h: cheaper than the first 24 h.
    expect(s.perDay.cost[1]!).to.be.lessThan(s.perDay.cost[0]!);
  });
});
