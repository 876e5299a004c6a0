import { expect } from 'chai';
import { SolveAbortedError, SolverPool } from '../../../src/packing/solver-pool.js';
import { solve } from '../../../src/packing/solve.js';
import { group, replicas, snapshot } from './snapshot-builders.js';

describe('SolverPool deadline', () => {
  const s = snapshot({ groups: [group('g', { cpu: '2' })], pendingPods: replicas('web', 3, { cpu: '1' }) });

  it('gives up a solve that never returns at its deadline and terminates the worker', async () => {
    const hanging = new SolverPool().start(1, { workerUrl: new URL('./hanging-solver-worker.ts', import.meta.url).href });
    try {
      const t0 = Date.now();
      let err: unknown;
      try { await hanging.solve(s, undefined, 'headroom', { deadlineMs: 300 }); } catch (e) { err = e; }
      expect(err).to.be.instanceOf(SolveAbortedError);
      expect(String(err)).to.contain('deadline passed');
      expect(Date.now() - t0).to.be.below(3000);
      // The spinning thread was terminated: destroy() would otherwise wait for it forever.
      const destroyed = hanging.destroy().then(() => true);
      expect(await Promise.race([destroyed, new Promise((r) => setTimeout(() => r(false), 3000))])).to.equal(true);
    } finally {
      await hanging.destroy();
    }
  });

  it('gives up when its signal aborts, and the pool solves again afterwards on a fresh worker', async () => {
    const pool = new SolverPool().start(1);
    try {
      const ac = new AbortController();
      ac.abort(new Error('leadership lost'));
      let err: unknown;
      try { await pool.solve(s, undefined, 'headroom', { signal: ac.signal }); } catch (e) { err = e; }
      expect(String(err)).to.contain('leadership lost');
      expect(await pool.solve(s, undefined, 'headroom', { deadlineMs: 10_000 })).to.deep.equal(solve(s));
    } finally {
      await pool.destroy();
    }
  });
});
