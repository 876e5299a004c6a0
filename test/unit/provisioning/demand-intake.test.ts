import { expect } from 'chai';
import { DemandIntake, type DemandRecord } from '../../../src/provisioning/demand-intake.js';
import type { SchedulingPod } from '../../../src/scheduling/scheduling-pod.js';

const rec = (i: number): DemandRecord => ({ source: 'webhook', observedAt: i, pod: { key: `ns/p${i}` } as SchedulingPod });

describe('DemandIntake', () => {
  it('queues in order and drains oldest first', () => {
    const q = new DemandIntake(10);
    for (let i = 0; i < 5; i++) q.record(rec(i));
    expect(q.drain(2).map((r) => r.observedAt)).to.deep.equal([0, 1]);
    expect(q.drain().map((r) => r.observedAt)).to.deep.equal([2, 3, 4]);
    expect(q.size).to.equal(0);
  });

  it('is bounded: drops the oldest and counts drops', () => {
    const q = new DemandIntake(3);
    for (let i = 0; i < 7; i++) q.record(rec(i));
    expect(q.size).to.equal(3);
    expect(q.dropped).to.equal(4);
    expect(q.received).to.equal(7);
    expect(q.drain().map((r) => r.observedAt)).to.deep.equal([4, 5, 6]);
  });

  it('notifies subscribers synchronously, isolates a throwing one, and unsubscribes', () => {
    const q = new DemandIntake(3);
    const seen: number[] = [];
    q.subscribe(() => {
      throw new Error('boom');
    });
    const off = q.subscribe((r) => seen.push(r.observedAt));
    q.record(rec(1));
    off();
    q.record(rec(2));
    expect(seen).to.deep.equal([1]);
    expect(q.listenerErrors).to.equal(2);
    expect(q.size).to.equal(2);
  });

  it('is bounded in bytes, not just in count: drops the oldest past the byte budget (issue 10 defect 2)', () => {
    const big = (i: number): DemandRecord => ({ source: 'webhook', observedAt: i, pod: { key: `ns/p${i}`, labels: { pad: 'x'.repeat(1000) } } as unknown as SchedulingPod });
    const q = new DemandIntake(1000, { bytes: 10_000 });
    for (let i = 0; i < 100; i++) q.record(big(i));
    expect(q.bytes).to.be.at.most(10_000);
    expect(q.size).to.be.within(5, 10);
    expect(q.dropped).to.equal(100 - q.size);
    expect(q.drain().map((r) => r.observedAt).at(-1)).to.equal(99);
    expect(q.bytes).to.equal(0);
  });

  it('refuses (and counts) a record bigger than the per-record bound', () => {
    const q = new DemandIntake(10, { recordBytes: 2000 });
    q.record({ source: 'webhook', observedAt: 1, pod: { key: 'ns/huge', labels: { pad: 'x'.repeat(5000) } } as unknown as SchedulingPod });
    q.record(rec(2));
    expect(q.oversized).to.equal(1);
    expect(q.drain().map((r) => r.observedAt)).to.deep.equal([2]);
  });

  it('rejects a non-positive capacity', () => {
    expect(() => new DemandIntake(0)).to.throw(/capacity/);
  });
});
