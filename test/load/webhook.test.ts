import { expect } from 'chai';
import { admissionReview } from './fixtures.js';
import { fmt, load, median, startChild, type ChildServer, type LoadResult } from './load-kit.js';

/**
 * The webhook side by side with a bare node:https server that only parses the review
 * and answers allowed: the floor of what this machine does. Both over TLS on loopback,
 * each in its own process, runs interleaved (floor, webhook, floor, webhook, ...) so
 * the noise of a shared machine falls on both alike. Bounded: ~2 minutes.
 */
const ROUNDS = Number(process.env.HEADROOM_LOAD_ROUNDS ?? 2);
const SATURATION_SEC = 8;
const STEADY_SEC = 10;
const bodies = Array.from({ length: 1000 }, (_, i) => JSON.stringify(admissionReview(i)));

describe('load: webhook vs floor', function () {
  this.timeout(600_000);
  let floor: ChildServer;
  let headroom: ChildServer;
  const results: Record<'floorSat' | 'webhookSat' | 'floorSteady' | 'webhookSteady', LoadResult[]> = {
    floorSat: [], webhookSat: [], floorSteady: [], webhookSteady: [],
  };

  before(async () => {
    [floor, headroom] = await Promise.all([startChild('floor'), startChild('headroom')]);
    const url = `${headroom.url}/mutate/pods`;
    // Warm up both (JIT, TLS session setup).
    await load({ url, caPem: headroom.caPem, connections: 8, durationSec: 2, bodies });
    await load({ url: floor.url, caPem: floor.caPem, connections: 8, durationSec: 2, bodies });
    for (let r = 0; r < ROUNDS; r++) {
      results.floorSat.push(await load({ url: floor.url, caPem: floor.caPem, connections: 64, durationSec: SATURATION_SEC, bodies }));
      results.webhookSat.push(await load({ url, caPem: headroom.caPem, connections: 64, durationSec: SATURATION_SEC, bodies }));
      results.floorSteady.push(await load({ url: floor.url, caPem: floor.caPem, connections: 16, durationSec: STEADY_SEC, overallRate: 1000, bodies }));
      results.webhookSteady.push(await load({ url, caPem: headroom.caPem, connections: 16, durationSec: STEADY_SEC, overallRate: 1000, bodies }));
    }
    const row = (name: string, rs: LoadResult[]) =>
      `${name.padEnd(22)} rps ${fmt(median(rs.map((r) => r.rps)), 0).padStart(6)}  p50 ${fmt(median(rs.map((r) => r.p50)))}  p90 ${fmt(median(rs.map((r) => r.p90)))}  p99 ${fmt(median(rs.map((r) => r.p99)))}  max ${fmt(Math.max(...rs.map((r) => r.max)))} ms  errors ${rs.reduce((s, r) => s + r.errors + r.non2xx, 0)}`;
    console.log(`\n  webhook load (TLS, loopback, medians of ${ROUNDS} rounds):`);
    console.log(`  ${row('floor, 64 conns', results.floorSat)}`);
    console.log(`  ${row('webhook, 64 conns', results.webhookSat)}`);
    console.log(`  ${row('floor, 1000 req/s', results.floorSteady)}`);
    console.log(`  ${row('webhook, 1000 req/s', results.webhookSteady)}`);
  });

  after(async () => {
    await Promise.all([floor?.stop(), headroom?.stop()]);
  });

  it('has zero errors and non-2xx answers', () => {
    for (const [name, rs] of Object.entries(results)) {
      for (const r of rs) expect(r.errors + r.non2xx, name).to.equal(0);
    }
  });

  it('sustains at least 3,000 req/s and half the floor at saturation (64 connections)', () => {
    const webhook = median(results.webhookSat.map((r) => r.rps));
    const floorRps = median(results.floorSat.map((r) => r.rps));
    expect(webhook).to.be.at.least(3000);
    expect(webhook / floorRps).to.be.at.least(0.5);
  });

  it('keeps p90 within 3 ms of the floor at a steady 1,000 req/s', () => {
    const webhook = results.webhookSteady;
    const floorRs = results.floorSteady;
    for (const r of [...webhook, ...floorRs]) expect(r.rps).to.be.at.least(900);
    expect(median(webhook.map((r) => r.p90)) - median(floorRs.map((r) => r.p90))).to.be.at.most(3);
  });
});
