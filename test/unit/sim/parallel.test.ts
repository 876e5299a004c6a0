import { expect } from 'chai';
import { loadBuiltinTrace } from '../../../src/sim/builtin.js';
import { runParallel } from '../../../src/sim/parallel.js';
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
});
