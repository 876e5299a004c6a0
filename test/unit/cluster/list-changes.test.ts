import { expect } from 'chai';
import fc from 'fast-check';
import { forEachListChange } from '../../../src/cluster/list-changes.js';

interface Obj { key: string; v: number }

/**
 * A keyed map kept from the changes, as the consumers keep theirs, and the set of
 * objects held, kept from the objects reported (each of prev not in next exactly once,
 * removed or replaced).
 */
function apply(map: Map<string, Obj>, prev: Obj[], next: Obj[], held = new Set(prev)): { removed: number; added: number } {
  let removed = 0;
  let added = 0;
  forEachListChange(prev, next, (o) => o.key, (o) => {
    removed++;
    map.delete(o.key);
    expect(held.delete(o)).to.equal(true);
  }, (o, replaced) => {
    added++;
    map.set(o.key, o);
    if (replaced) expect(held.delete(replaced)).to.equal(true);
    held.add(o);
  });
  expect([...held].sort((a, b) => a.v - b.v)).to.deep.equal([...next].sort((a, b) => a.v - b.v));
  return { removed, added };
}

describe('forEachListChange', () => {
  it('reports only the changed objects of a store kept in insertion order: replaced in place, deleted, appended', () => {
    const a = { key: 'a', v: 1 };
    const b = { key: 'b', v: 1 };
    const c = { key: 'c', v: 1 };
    const b2 = { key: 'b', v: 2 };
    const d = { key: 'd', v: 1 };
    const seen: string[] = [];
    forEachListChange([a, b, c], [a, b2, d], (o) => o.key, (o) => seen.push(`-${o.key}${o.v}`), (o, was) => seen.push(`+${o.key}${o.v}${was ? ` (was ${was.key}${was.v})` : ''}`));
    expect(seen).to.deep.equal(['+b2 (was b1)', '-c1', '+d1']);
    const none: string[] = [];
    const list = [a, b];
    forEachListChange(list, list, (o) => o.key, () => none.push('x'), () => none.push('x'));
    forEachListChange(list, [a, b], (o) => o.key, () => none.push('x'), () => none.push('x'));
    expect(none).to.deep.equal([]);
  });

  it('keeps a keyed map equal to the latest list whatever the changes and the order (seeded)', () => {
    const op = fc.oneof(
      fc.record({ t: fc.constant('put' as const), key: fc.integer({ min: 0, max: 30 }) }),
      fc.record({ t: fc.constant('delete' as const), key: fc.integer({ min: 0, max: 30 }) }),
      fc.record({ t: fc.constant('shuffle' as const), seed: fc.integer() }),
    );
    fc.assert(fc.property(fc.array(fc.array(op, { maxLength: 8 }), { maxLength: 25 }), (steps) => {
      const store = new Map<string, Obj>();
      const kept = new Map<string, Obj>();
      let prev: Obj[] = [];
      let v = 0;
      for (const step of steps) {
        let shuffled: number | undefined;
        for (const o of step) {
          if (o.t === 'put') store.set(`k${o.key}`, { key: `k${o.key}`, v: v++ });
          else if (o.t === 'delete') store.delete(`k${o.key}`);
          else shuffled = o.seed;
        }
        let next = [...store.values()];
        // A relist: the same objects (or new copies) in another order.
        if (shuffled !== undefined) next = next.map((x, i) => ({ x, r: Math.imul(i + 1, shuffled! | 1) >>> 0 })).sort((p, q) => p.r - q.r).map((p) => p.x);
        apply(kept, prev, next);
        expect([...kept.entries()].sort()).to.deep.equal(next.map((o) => [o.key, o] as const).sort());
        prev = next;
      }
    }), { seed: 17, numRuns: 300 });
  });

  it('costs the changes only, in insertion order', () => {
    const list = Array.from({ length: 1000 }, (_, i) => ({ key: `k${i}`, v: 0 }));
    const next = list.filter((_, i) => i !== 500).map((o, i) => (i === 10 ? { ...o, v: 1 } : o)).concat([{ key: 'new', v: 0 }]);
    const counts = apply(new Map(list.map((o) => [o.key, o])), list, next);
    expect(counts).to.deep.equal({ removed: 1, added: 2 });
  });
});
