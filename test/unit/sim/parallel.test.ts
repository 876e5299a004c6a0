import { expect } from 'chai';
import { loadBuiltinTrace } from '../../../src/sim/builtin.js';
import { runParallel, startOrder } from '../../../src/sim/parallel.js';
import { POLICY_FACTORIES, simulationSnapshot } from '../../../src/sim/policies.js';
import { runTrace } from '../../../src/sim/run.js';

describe('simulation on worker threads', function () {
  this.timeout(120_000);

  it('gives exactly the in-process results', async () => {
    const t = { ...loadBuiltinTrace('cron-batch'), duration: 45 * 60_000 };
    const policies = ['reactive', 'periodic'] as const;
    const inProcess = await runTrace(t, { seed: 3, policies: policies.map((name) => ({ name, factory: POLICY_FACTORIES[name] })), buildSnapshot: simulationSnapshot });
    const fractions: number[] = [];
    const [parallel] = await runParallel([t], { seed: 3, policies: [...policies], threads: 2, onProgress: (f) => fractions.push(f) });
    for (const p of policies) {
      expect(parallel!.policies[p]!.summary).to.deep.equal(inProcess.policies[p]!.summary);
      expect(parallel!.policies[p]!.series).to.deep.equal(inProcess.policies[p]!.series);
      expect(parallel!.policies[p]!.actions).to.deep.equal(inProcess.policies[p]!.actions);
    }
    expect(fractions.at(-1)).to.equal(1);
  });

  it('starts the longest jobs first, headroom before the baselines of the same length', () => {
    const short = { duration: 60_000 };
    const long = { duration: 3_600_000 };
    const jobs = [
      { trace: short, policy: 'reactive' as const }, { trace: short, policy: 'headroom' as const },
      { trace: long, policy: 'reactive' as const }, { trace: long, policy: 'periodic' as const }, { trace: long, policy: 'headroom' as const },
    ];
    expect(startOrder(jobs)).to.deep.equal([4, 2, 3, 1, 0]);
  });

  it('returns each trace\'s runs in the job order, whatever order they finish in', async () => {
    const base = loadBuiltinTrace('cron-batch');
    const traces = [{ ...base, name: 'short', duration: 10 * 60_000 }, { ...base, name: 'long', duration: 30 * 60_000 }];
    const results = await runParallel(traces, { seed: 1, policies: ['reactive', 'periodic'], threads: 2 });
    expect(results.map((r) => r.trace)).to.deep.equal(['short', 'long']);
    expect(results.map((r) => r.durationSeconds)).to.deep.equal([600, 1800]);
    for (const r of results) expect(Object.keys(r.policies)).to.deep.equal(['reactive', 'periodic']);
  });
});
