import { expect } from 'chai';
import fc from 'fast-check';
import { presenceAlive, presenceSuspectMs } from '../../../src/fleet/presence.js';

describe('fleet presence', () => {
  it('suspects a replica after two and a half renew periods, never later than the lease duration', () => {
    expect(presenceSuspectMs(2000, 8000)).to.equal(5000);
    expect(presenceSuspectMs(4000, 8000)).to.equal(8000);
  });

  it('a replica renewing each period stays alive; one that stopped is suspected within the suspicion time', () => {
    const suspect = presenceSuspectMs(2000, 8000);
    // Renewed at 0 (seen at once), then silent.
    const p = { holder: 'r1', seenAt: 0, renewedAt: 0 };
    expect(presenceAlive(p, 2000, suspect, 2000)).to.equal(true);
    expect(presenceAlive(p, 4999, suspect, 2000)).to.equal(true);
    expect(presenceAlive(p, 5000, suspect, 2000)).to.equal(false);
    // Each renewal seen resets the clock.
    expect(presenceAlive({ ...p, seenAt: 4000, renewedAt: 4000 }, 8000, suspect, 2000)).to.equal(true);
  });

  it('a record first seen long after its renewTime is a dead replica now (skew allowed)', () => {
    const p = { holder: 'r1', seenAt: 100_000, renewedAt: 100_000 - 7001 };
    expect(presenceAlive(p, 100_000, 5000, 2000)).to.equal(false);
    expect(presenceAlive({ ...p, renewedAt: 100_000 - 7000 }, 100_000, 5000, 2000)).to.equal(true);
    // No renewTime: judged on our clock only.
    expect(presenceAlive({ ...p, renewedAt: NaN }, 100_000, 5000, 2000)).to.equal(true);
  });

  it('no holder is never alive', () => {
    expect(presenceAlive({ holder: '', seenAt: 0, renewedAt: 0 }, 0, 5000, 2000)).to.equal(false);
  });

  it('suspicion comes no later than the lease duration after the last renewal seen (property)', () => {
    fc.assert(fc.property(fc.integer({ min: 100, max: 10_000 }), fc.integer({ min: 1, max: 30_000 }), fc.integer({ min: 0, max: 1e9 }), (every, lease, seen) => {
      const suspect = presenceSuspectMs(every, lease);
      expect(suspect).to.be.at.most(lease);
      expect(presenceAlive({ holder: 'x', seenAt: seen, renewedAt: seen }, seen + lease, suspect, 2000)).to.equal(false);
    }), { numRuns: 300 });
  });
});
