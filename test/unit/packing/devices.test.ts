import { expect } from 'chai';
import fc from 'fast-check';
import { deviceAllowance, deviceStaticReason, takeDevices } from '../../../src/packing/devices.js';
import type { DraTable, PodDevices } from '../../../src/scheduling/dra/pod-devices.js';
import type { Resources } from '../../../src/scheduling/resources.js';

/**
 * The packers' device arithmetic (src/packing/devices.ts) runs on a plan cached per
 * claim set, with a closed form for one signature. Held here to the direct algorithm it
 * replaced: a greedy walk over the need, most constrained signature first, recomputed
 * for every question.
 */

type Need = Array<[string, number]>;
function needFor(dra: PodDevices, n: number, placed: ReadonlySet<string> | undefined): Need {
  const need = new Map<string, number>();
  for (const sig in dra.own) need.set(sig, (need.get(sig) ?? 0) + dra.own[sig]! * n);
  for (const s of dra.shared) {
    if (placed?.has(s.claim)) continue;
    for (const sig in s.devices) need.set(sig, (need.get(sig) ?? 0) + s.devices[sig]!);
  }
  return [...need];
}
function assign(need: Need, free: Resources, table: DraTable, apply: boolean): boolean {
  const scratch: Resources = apply ? free : {};
  const get = (k: string) => (k in scratch ? scratch[k]! : free[k] ?? 0);
  const order = need.slice().sort((a, b) => (table.atomsOf[a[0]]?.length ?? 0) - (table.atomsOf[b[0]]?.length ?? 0));
  for (const [sig, count] of order) {
    let left = count;
    for (const atom of table.atomsOf[sig] ?? []) {
      const have = get(atom);
      if (have <= 0) continue;
      const take = have < left ? have : left;
      scratch[atom] = have - take;
      left -= take;
      if (left === 0) break;
    }
    if (left > 0) return false;
  }
  return true;
}
function referenceAllowance(dra: PodDevices, free: Resources, t: DraTable, placed: ReadonlySet<string> | undefined, max: number): number {
  if (!assign(needFor(dra, 1, placed), free, t, false)) return 0;
  if (Object.keys(dra.own).length === 0) return max;
  let lo = 1;
  let hi = max;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (assign(needFor(dra, mid, placed), free, t, false)) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

const SIGS = ['s0', 's1', 's2'];
const ATOMS = ['devices.headroom.dev/0', 'devices.headroom.dev/1', 'devices.headroom.dev/0.1', 'devices.headroom.dev/1.2', 'devices.headroom.dev/0.1.2'];
const arbTable = fc.tuple(...SIGS.map(() => fc.subarray(ATOMS))).map((lists): DraTable => ({
  atomsOf: Object.fromEntries(SIGS.map((s, i) => [s, lists[i]!])), describe: Object.fromEntries(SIGS.map((s) => [s, `class ${s}`])),
}));
const arbCounts = fc.dictionary(fc.constantFrom(...SIGS), fc.integer({ min: 1, max: 4 }), { maxKeys: 2 });
const arbDevices = fc.record({
  own: arbCounts,
  shared: fc.array(fc.record({ claim: fc.constantFrom('ns/a', 'ns/b', 'ns/c'), devices: arbCounts }), { maxLength: 2 }),
}).map((d): PodDevices => ({ ...d, pinned: [] }));
const arbFree = fc.dictionary(fc.constantFrom(...ATOMS), fc.integer({ min: -1, max: 9 }));
const arbPlaced = fc.option(fc.subarray(['ns/a', 'ns/b', 'ns/c']).map((xs) => new Set(xs)), { nil: undefined });

describe('packer device arithmetic', () => {
  it('deviceAllowance, deviceStaticReason and takeDevices agree with the direct algorithm', () => {
    fc.assert(fc.property(arbTable, arbDevices, arbFree, arbPlaced, fc.integer({ min: 1, max: 20 }), (table, dra, free, placed, max) => {
      // Asked twice: the second answer comes from the cached plan.
      for (let k = 0; k < 2; k++) {
        expect(deviceAllowance(dra, free, table, placed, max)).to.equal(referenceAllowance(dra, free, table, placed, max));
        const fitsOne = assign(needFor(dra, 1, undefined), free, table, false);
        const reason = deviceStaticReason(dra, free, {}, undefined, undefined, table);
        expect(reason === undefined).to.equal(fitsOne);
        if (reason !== undefined) expect(reason).to.match(/^insufficient DRA devices \(/);
      }
      const n = deviceAllowance(dra, free, table, placed, max);
      if (n > 0) {
        const mine = { ...free };
        const theirs = { ...free };
        const used: Resources = {};
        takeDevices(dra, n, mine, used, table, new Set(placed));
        assign(needFor(dra, n, placed), theirs, table, true);
        expect(mine).to.deep.equal(theirs);
        for (const k in used) expect(used[k]).to.equal((free[k] ?? 0) - mine[k]!);
      }
    }), { numRuns: 2000 });
  });

  it('a new table for the same claims is not answered from the old one', () => {
    const dra: PodDevices = { own: { s0: 2 }, shared: [], pinned: [] };
    const free = { 'devices.headroom.dev/0': 2, 'devices.headroom.dev/1': 2 };
    const t1: DraTable = { atomsOf: { s0: ['devices.headroom.dev/0'] }, describe: { s0: 'a' } };
    const t2: DraTable = { atomsOf: { s0: ['devices.headroom.dev/0', 'devices.headroom.dev/1'] }, describe: { s0: 'b' } };
    expect(deviceAllowance(dra, free, t1, undefined, 10)).to.equal(1);
    expect(deviceAllowance(dra, free, t2, undefined, 10)).to.equal(2);
    expect(deviceStaticReason({ own: { s0: 3 }, shared: [], pinned: [] }, free, {}, undefined, undefined, t1)).to.equal('insufficient DRA devices (3 × a)');
  });
});
