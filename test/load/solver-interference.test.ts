import { expect } from 'chai';
import { admissionReview } from './fixtures.js';
import { fmt, load, median, startChild, type ChildServer, type LoadResult } from './load-kit.js';

/**
 * Does a 20k-pod solve on the worker pool disturb the webhook? The webhook process
 * also runs a SolverPool (ADR 0032); at a steady 1,000 req/s we compare webhook
 * latency with the pool idle and with 20k-pod solves running back to back, in
 * alternating rounds. Target: p90 moves by no more than 2 ms.
 */
const ROUNDS = 2;
const SECONDS = 10;
const bodies = Array.from({ length: 1000 }, (_, i) => JSON.stringify(admissionReview(i)));

describe('load: webhook latency while a 20k-pod solve runs on the worker pool', function () {
  this.timeout(600_000);
  let server: ChildServer;
  const idle: LoadResult[] = [];
  const solving: LoadResult[] = [];
  const solves: number[] = [];

  before(async () => {
    server = await startChild('headroom', 0, { HEADROOM_LOAD_SOLVER: '1' });
    const url = `${server.url}/mutate/pods`;
    const steady = () => load({ url, caPem: server.caPem, connections: 16, durationSec: SECONDS, overallRate: 1000, bodies });
    await load({ url, caPem: server.caPem, connections: 8, durationSec: 2, bodies });
    for (let r = 0; r < ROUNDS; r++) {
      idle.push(await steady());
      expect(await server.command('solve-start')).to.equal('solving');
      solving.push(await steady());
      solves.push(Number((await server.command('solve-stop')).split(' ')[1]));
    }
    const row = (name: string, rs: LoadResult[]) =>
      `${name.padEnd(26)} rps ${fmt(median(rs.map((x) => x.rps)), 0)}  p50 ${fmt(median(rs.map((x) => x.p50)))}  p90 ${fmt(median(rs.map((x) => x.p90)))}  p99 ${fmt(median(rs.map((x) => x.p99)))} ms`;
    console.log(`\n  webhook at 1000 req/s, medians of ${ROUNDS} rounds of ${SECONDS} s (20k-pod solves completed while loaded: ${solves.join(', ')}):`);
    console.log(`  ${row('pool idle', idle)}`);
    console.log(`  ${row('20k-pod solves running', solving)}`);
  });

  after(async () => {
    await server?.stop();
  });

  it('actually solved while under load, without errors', () => {
    for (const n of solves) expect(n).to.be.greaterThan(0);
    for (const r of [...idle, ...solving]) expect(r.errors + r.non2xx).to.equal(0);
  });

  it('moves webhook p90 by no more than 2 ms', () => {
    expect(median(solving.map((r) => r.p90)) - median(idle.map((r) => r.p90))).to.be.at.most(2);
  });
});
