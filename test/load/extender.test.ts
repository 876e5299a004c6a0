import { expect } from 'chai';
import { extenderRoutes } from '../../src/extender/routes.js';
import { DemandIntake } from '../../src/provisioning/demand-intake.js';
import { systemClock } from '../../src/provisioning/clock.js';
import { extenderArgs, extenderState } from './fixtures.js';
import { fmt, load, startChild, type ChildServer, type LoadResult } from './load-kit.js';

/**
 * The extender at 5,000 nodes: filter and prioritize over TLS on loopback, one call at
 * a time (kube-scheduler calls an extender sequentially per pod), in NodeNames mode
 * (nodeCacheCapable: true, the shipped choice) and, for comparison, full-NodeList mode.
 * Also the handler alone in-process (parse + compute + serialise, no HTTP/TLS).
 */
const NODES = 5000;
const SECONDS = 6;

describe('load: extender at 5,000 nodes', function () {
  this.timeout(600_000);
  let server: ChildServer;
  const results: Record<string, LoadResult & { bytes: number }> = {};

  before(async () => {
    server = await startChild('headroom', NODES);
    for (const mode of ['names', 'nodes'] as const) {
      const body = JSON.stringify(extenderArgs(NODES, mode));
      for (const verb of ['filter', 'prioritize']) {
        const url = `${server.url}/scheduler/${verb}`;
        await load({ url, caPem: server.caPem, connections: 1, durationSec: 1, bodies: [body] });
        results[`${mode} ${verb}`] = { ...(await load({ url, caPem: server.caPem, connections: 1, durationSec: SECONDS, bodies: [body] })), bytes: body.length };
      }
    }
    console.log(`\n  extender, ${NODES} nodes, TLS on loopback, sequential calls:`);
    for (const [name, r] of Object.entries(results)) {
      console.log(`  ${name.padEnd(18)} request ${fmt(r.bytes / 1e6, 2)} MB  calls/s ${fmt(r.rps, 0).padStart(5)}  p50 ${fmt(r.p50)}  p90 ${fmt(r.p90)}  p99 ${fmt(r.p99)}  max ${fmt(r.max)} ms  errors ${r.errors + r.non2xx}`);
    }
  });

  after(async () => {
    await server?.stop();
  });

  it('answers every call without errors', () => {
    for (const [name, r] of Object.entries(results)) {
      expect(r.errors + r.non2xx, name).to.equal(0);
      expect(r.requests, name).to.be.greaterThan(0);
    }
  });

  it('keeps filter and prioritize p99 at or under 5 ms per call in NodeNames mode', () => {
    expect(results['names filter']!.p99).to.be.at.most(5);
    expect(results['names prioritize']!.p99).to.be.at.most(5);
  });

  it('reports the handler cost alone (in-process)', () => {
    const state = extenderState(NODES);
    const [filter, prioritize] = extenderRoutes({ state: () => state, intake: new DemandIntake(10), clock: systemClock });
    const lines: string[] = [];
    for (const mode of ['names', 'nodes'] as const) {
      const body = JSON.stringify(extenderArgs(NODES, mode));
      for (const route of [filter!, prioritize!]) {
        const times: number[] = [];
        const run = () => JSON.stringify(route.handle(JSON.parse(body)));
        for (let i = 0; i < 5; i++) run();
        for (let i = 0; i < 50; i++) {
          const t = process.hrtime.bigint();
          run();
          times.push(Number(process.hrtime.bigint() - t) / 1e6);
        }
        times.sort((a, b) => a - b);
        lines.push(`  ${`${mode} ${route.path.split('/').pop()}`.padEnd(18)} median ${fmt(times[25]!)} ms  p90 ${fmt(times[45]!)} ms`);
        expect(times[25]).to.be.greaterThan(0);
      }
    }
    console.log(`\n  extender handler alone (JSON.parse + compute + JSON.stringify), ${NODES} nodes:\n${lines.join('\n')}`);
  });
});
