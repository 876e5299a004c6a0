import { expect } from 'chai';
import fc from 'fast-check';
import { PRESENCE_GC_AFTER_LEASES, presenceToCollect, type PresenceRecord } from '../../../src/fleet/presence-gc.js';

const LEASE = 8000;
const rec = (name: string, holder: string, seenAt: number, over: Partial<PresenceRecord> = {}): PresenceRecord => ({ name, holder, resourceVersion: `rv-${name}`, seenAt, durationMs: LEASE, ...over });

describe('fleet presence Lease collection', () => {
  it('collects a dead replica\'s presence unchanged for five lease durations, not a moment before', () => {
    const presence = [rec('p-a', 'a', 0), rec('p-dead', 'dead', 0)];
    const at = (now: number) => presenceToCollect({ self: 'a', alive: ['a'], presence, leaseDurationMs: LEASE, now });
    expect(PRESENCE_GC_AFTER_LEASES).to.equal(5);
    expect(at(5 * LEASE - 1)).to.deep.equal([]);
    expect(at(5 * LEASE)).to.deep.equal([{ name: 'p-dead', holder: 'dead', resourceVersion: 'rv-p-dead', unchangedMs: 5 * LEASE }]);
  });

  it('never collects its own presence nor that of a replica counted alive, however old the record looks', () => {
    const presence = [rec('p-a', 'a', 0), rec('p-b', 'b', 0)];
    expect(presenceToCollect({ self: 'a', alive: ['a', 'b'], presence, leaseDurationMs: LEASE, now: 1e9 })).to.deep.equal([]);
    // Self is never collected even when the caller forgot to count it alive.
    expect(presenceToCollect({ self: 'a', alive: [], presence: [rec('p-a', 'a', 0)], leaseDurationMs: LEASE, now: 1e9 })).to.deep.equal([]);
  });

  it('only the lowest live identity collects: the others would race it to 404s and 409s', () => {
    const presence = [rec('p-dead', 'dead', 0)];
    expect(presenceToCollect({ self: 'b', alive: ['a', 'b'], presence, leaseDurationMs: LEASE, now: 1e9 })).to.deep.equal([]);
    expect(presenceToCollect({ self: 'a', alive: ['b', 'a'], presence, leaseDurationMs: LEASE, now: 1e9 }).map((d) => d.name)).to.deep.equal(['p-dead']);
  });

  it('waits on the longer of the written lease duration and its own (a replica run with longer Leases)', () => {
    const presence = [rec('p-slow', 'slow', 0, { durationMs: 30_000 })];
    const at = (now: number) => presenceToCollect({ self: 'a', alive: ['a'], presence, leaseDurationMs: LEASE, now }).length;
    expect(at(5 * 30_000 - 1)).to.equal(0);
    expect(at(5 * 30_000)).to.equal(1);
    // No duration written: its own.
    expect(presenceToCollect({ self: 'a', alive: ['a'], presence: [rec('p-x', 'x', 0, { durationMs: 0 })], leaseDurationMs: LEASE, now: 5 * LEASE })).to.have.length(1);
  });

  it('a record renewed since is seen anew and waits again; one without a resourceVersion cannot be preconditioned and stays', () => {
    expect(presenceToCollect({ self: 'a', alive: ['a'], presence: [rec('p-back', 'back', 100_000)], leaseDurationMs: LEASE, now: 100_000 + 5 * LEASE - 1 })).to.deep.equal([]);
    expect(presenceToCollect({ self: 'a', alive: ['a'], presence: [rec('p-x', 'x', 0, { resourceVersion: '' })], leaseDurationMs: LEASE, now: 1e9 })).to.deep.equal([]);
  });

  it('an emptied presence Lease (no holder) is collected like a dead one; the result is in name order', () => {
    const presence = [rec('p-z', 'z', 0), rec('p-empty', '', 0), rec('p-m', 'm', 0)];
    expect(presenceToCollect({ self: 'a', alive: ['a'], presence, leaseDurationMs: LEASE, now: 1e9 }).map((d) => d.name)).to.deep.equal(['p-empty', 'p-m', 'p-z']);
  });

  it('never collects what was unchanged for less than the lease duration times the factor, nor any live or own record (property)', () => {
    const id = fc.constantFrom('a', 'b', 'c', 'd', 'e');
    fc.assert(fc.property(
      id, fc.array(id), fc.array(fc.record({ holder: id, seenAt: fc.integer({ min: 0, max: 1e6 }), durationMs: fc.integer({ min: 0, max: 60_000 }) })), fc.integer({ min: 1000, max: 60_000 }), fc.integer({ min: 0, max: 2e6 }),
      (self, alive, recs, lease, now) => {
        const presence = recs.map((r, i) => ({ ...r, name: `p${i}`, resourceVersion: String(i) }));
        for (const d of presenceToCollect({ self, alive, presence, leaseDurationMs: lease, now })) {
          const p = presence.find((x) => x.name === d.name)!;
          expect(p.holder).to.not.equal(self);
          expect(alive).to.not.include(p.holder);
          expect(now - p.seenAt).to.be.at.least(PRESENCE_GC_AFTER_LEASES * Math.max(lease, p.durationMs));
          expect(d.resourceVersion).to.equal(p.resourceVersion);
        }
      },
    ), { numRuns: 300 });
  });
});
