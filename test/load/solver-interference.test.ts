import { expect } from 'chai';
import { admissionReview } from './fixtures.js';
import { fmt, load, median, startChild, type ChildServer, type LoadResult } from './load-kit.js';

/**
 * Does a 20k-pod solve on the worker pool disturb the webhook? The webhook process
 * also runs a SolverPool (ADR 0032, 0033); at a steady 1,000 req/s we compare webhook
 * latency with the pool idle and with 20k-pod solves running back to back, in
 * alternating rounds: once solving the same snapshot objects (a quiet cluster: the
 * controller's snapshots reuse unchanged objects) and once with 1,000 of the 20,000
 * pending pods replaced by new objects before every solve (heavy churn). Target: p90
 * moves by no more than 2 ms.
 */
const ROUNDS = 2;
const SECONDS = 10;
const CHURN = 1000;
const bodies = Array.from({ length: 1000 }, (_, i) => JSON.stringify(admissionReview(i)));

type Phase = 'idle' | 'solving' | 'churn';

describe('load: webhook latency while a 20k-pod solve runs on the worker pool', function () {
  this.timeout(900_000);
  let server: ChildServer;
  const results: Record<Phase, LoadResult[]> = { idle: [], solving: [], churn: [] };
  const solves: Record<Exclude<Phase, 'idle'>, number[]> = { solving: [], churn: [] };
  const p90 = (phase: Phase) => median(results[phase].map((r) => r.p90));

  before(async () => {
    server = await startChild('headroom', 0, { HEADROOM_LOAD_SOLVER: '1' });
    const url = `${server.url}/mutate/pods`;
    const steady = () => load({ url, caPem: server.caPem, connections: 16, durationSec: SECONDS, overallRate: 1000, bodies });
    await load({ url, caPem: server.caPem, connections: 8, durationSec: 2, bodies });
    const solving = async (phase: 'solving' | 'churn', churn: number) => {
      expect(await server.command(`solve-start ${churn}`)).to.equal('solving');
      results[phase].push(await steady());
      solves[phase].push(Number((await server.command('solve-stop')).split(' ')[1]));
    };
    for (let r = 0; r < ROUNDS; r++) {
      results.idle.push(await steady());
      await solving('solving', 0);
      results.idle.push(await steady());
      await solving('churn', CHURN);
    }
    const row = (name: string, rs: LoadResult[]) =>
      `${name.padEnd(40)} rps ${fmt(median(rs.map((x) => x.rps)), 0)}  p50 ${fmt(median(rs.map((x) => x.p50)))}  p90 ${fmt(median(rs.map((x) => x.p90)))}  p99 ${fmt(median(rs.map((x) => x.p99)))} ms`;
    console.log(`\n  webhook at 1000 req/s, medians of ${2 * ROUNDS} idle and ${ROUNDS} solving rounds of ${SECONDS} s each`);
    console.log(`  (20k-pod solves completed while loaded: same objects ${solves.solving.join(', ')}; with churn ${solves.churn.join(', ')}):`);
    console.log(`  ${row('pool idle', results.idle)}`);
    console.log(`  ${row('20k-pod solves, same objects', results.solving)}`);
    console.log(`  ${row(`20k-pod solves, ${CHURN} new pods each`, results.churn)}`);
    console.log(`  p90 moved by ${fmt(p90('solving') - p90('idle'))} ms (same objects), ${fmt(p90('churn') - p90('idle'))} ms (churn)`);
  });

  after(async () => {
    await server?.stop();
  });

  it('actually solved while under load, without errors', () => {
    for (const n of [...solves.solving, ...solves.churn]) expect(n).to.be.greaterThan(0);
    for (const r of Object.values(results).flat()) expect(r.errors + r.non2xx).to.equal(0);
  });

  it('moves webhook p90 by no more than 2 ms while solving the same objects', () => {
    expect(p90('solving') - p90('idle')).to.be.at.most(2);
  });

  it(`moves webhook p90 by no more than 2 ms while ${CHURN} of the 20k pods are new in every solve`, () => {
    expect(p90('churn') - p90('idle')).to.be.at.most(2);
  });
});
