import { expect } from 'chai';
import { Batcher } from '../../../src/provisioning/batcher.js';
import { ManualClock } from './manual-clock.js';

describe('Batcher (idle / max window)', () => {
  it('flushes once after the idle gap following the last trigger', async () => {
    const clock = new ManualClock();
    const flushes: number[] = [];
    const b = new Batcher(clock, { idleMs: 1000, maxMs: 10_000 }, async () => { flushes.push(clock.now()); });
    const t0 = clock.now();
    b.trigger();
    await clock.advance(600);
    b.trigger();
    await clock.advance(600);
    expect(flushes).to.deep.equal([]);
    await clock.advance(500);
    expect(flushes).to.deep.equal([t0 + 1600]);
  });

  it('never waits longer than max while triggers keep coming', async () => {
    const clock = new ManualClock();
    const flushes: number[] = [];
    const b = new Batcher(clock, { idleMs: 1000, maxMs: 3000 }, async () => { flushes.push(clock.now()); });
    const t0 = clock.now();
    for (let i = 0; i < 10; i++) {
      b.trigger();
      await clock.advance(500);
    }
    expect(flushes[0]).to.equal(t0 + 3000);
  });

  it('never overlaps flushes: triggers during a flush open the next window afterwards', async () => {
    const clock = new ManualClock();
    let release!: () => void;
    let running = 0;
    let maxRunning = 0;
    let count = 0;
    const b = new Batcher(clock, { idleMs: 100, maxMs: 1000 }, async () => {
      running++;
      maxRunning = Math.max(maxRunning, running);
      count++;
      if (count === 1) await new Promise<void>((r) => { release = r; });
      running--;
    });
    b.trigger();
    await clock.advance(100);
    expect(count).to.equal(1);
    b.trigger();
    b.trigger();
    await clock.advance(500);
    expect(count).to.equal(1);
    release();
    await clock.advance(0);
    await clock.advance(100);
    expect(count).to.equal(2);
    expect(maxRunning).to.equal(1);
  });

  it('rejects an idle window longer than the max window', () => {
    expect(() => new Batcher(new ManualClock(), { idleMs: 5000, maxMs: 1000 }, async () => {})).to.throw(/idle/);
  });
});
