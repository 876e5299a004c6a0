import { expect } from 'chai';
import fc from 'fast-check';
import { assignShards, decideShards, type FleetReplica } from '../../../src/fleet/shards.js';

const clusterKeys = fc.uniqueArray(fc.integer({ min: 0, max: 60 }).map((i) => `ns/c${i}`), { maxLength: 40 });
const replicaIds = fc.uniqueArray(fc.integer({ min: 0, max: 9 }).map((i) => `r${i}`), { minLength: 1, maxLength: 6 });

/** Clusters, replicas, and holders drawn among the replicas and some dead ones. */
const world = fc.tuple(clusterKeys, replicaIds).chain(([clusters, ids]) => fc.tuple(
  fc.constant(clusters), fc.constant(ids),
  fc.array(fc.option(fc.constantFrom(...ids, 'dead-1', 'dead-2'), { nil: undefined }), { minLength: clusters.length, maxLength: clusters.length }),
)).map(([clusters, ids, hs]) => {
  const holders = new Map<string, string>();
  clusters.forEach((c, i) => { if (hs[i] !== undefined) holders.set(c, hs[i]!); });
  return { clusters, ids, holders };
});

function counts(target: Map<string, string>): Map<string, number> {
  const out = new Map<string, number>();
  for (const r of target.values()) out.set(r, (out.get(r) ?? 0) + 1);
  return out;
}

function shuffle<T>(xs: readonly T[], seed: number): T[] {
  const out = [...xs];
  let s = seed;
  for (let i = out.length - 1; i > 0; i--) {
    s = (s * 1103515245 + 12345) & 0x7fffffff;
    const j = s % (i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

describe('fleet shard assignment', () => {
  it('gives every selected cluster one live replica, each with floor or ceil of N/R', () => {
    fc.assert(fc.property(world, ({ clusters, ids, holders }) => {
      const target = assignShards(clusters, ids, holders);
      expect([...target.keys()].sort()).to.deep.equal([...clusters].sort());
      for (const r of target.values()) expect(ids).to.include(r);
      const lo = Math.floor(clusters.length / ids.length);
      const hi = Math.ceil(clusters.length / ids.length);
      const n = counts(target);
      for (const id of ids) expect(n.get(id) ?? 0).to.be.within(lo, hi);
    }), { numRuns: 500 });
  });

  it('does not depend on the order the replicas saw the clusters and replicas in', () => {
    fc.assert(fc.property(world, fc.integer({ min: 1, max: 1e6 }), ({ clusters, ids, holders }, seed) => {
      const a = assignShards(clusters, ids, holders);
      const b = assignShards(shuffle(clusters, seed), shuffle(ids, seed + 1), new Map(shuffle([...holders], seed + 2)));
      expect([...b].sort()).to.deep.equal([...a].sort());
    }), { numRuns: 300 });
  });

  it('keeps every cluster with its live holder while that holder is within its share: a balanced fleet never moves', () => {
    fc.assert(fc.property(world, ({ clusters, ids, holders }) => {
      const target = assignShards(clusters, ids, holders);
      // Feed the assignment back as the holders: nothing moves.
      expect([...assignShards(clusters, ids, target)].sort()).to.deep.equal([...target].sort());
      // Moves are only what balance needs: no live holder loses a cluster while under its floor.
      const lo = Math.floor(clusters.length / ids.length);
      const kept = new Map<string, number>();
      for (const [c, h] of holders) if (target.get(c) === h) kept.set(h, (kept.get(h) ?? 0) + 1);
      for (const [c, h] of holders) {
        if (ids.includes(h) && target.get(c) !== h) expect(kept.get(h) ?? 0, `${h} lost ${c}`).to.be.at.least(lo);
      }
    }), { numRuns: 500 });
  });

  it('hands a cluster over only to a replica that contends for it, and releases an unselected one at once', () => {
    const noneContend = (ids: string[]): FleetReplica[] => ids.map((id) => ({ id, contending: new Set() }));
    // r0 holds both; r1 joins: one of them is r1's, but r0 keeps running it until r1 contends.
    let d = decideShards({ self: 'r0', clusters: ['a/x', 'a/y'], replicas: noneContend(['r0', 'r1']), holders: new Map([['a/x', 'r0'], ['a/y', 'r0']]) });
    expect(d.release).to.deep.equal([]);
    expect(d.run).to.deep.equal(['a/x', 'a/y']);
    const moved = [...d.target].find(([, r]) => r === 'r1')![0];
    d = decideShards({
      self: 'r0', clusters: ['a/x', 'a/y'], holders: new Map([['a/x', 'r0'], ['a/y', 'r0']]),
      replicas: [{ id: 'r0', contending: new Set(['a/x', 'a/y']) }, { id: 'r1', contending: new Set([moved]) }],
    });
    expect(d.release).to.deep.equal([moved]);
    expect(d.run).to.have.length(1);
    // A cluster gone from the selection is released even though nobody contends.
    d = decideShards({ self: 'r0', clusters: ['a/x'], replicas: noneContend(['r0']), holders: new Map([['a/x', 'r0'], ['a/gone', 'r0']]) });
    expect(d.release).to.deep.equal(['a/gone']);
    expect(d.run).to.deep.equal(['a/x']);
  });

  it('never lets a replica drop a Lease it holds without releasing it, nor release one to a replica not contending', () => {
    fc.assert(fc.property(world, fc.integer({ min: 0, max: 5 }), fc.integer({ min: 0, max: 1e6 }), ({ clusters, ids, holders }, selfIndex, seed) => {
      const self = ids[selfIndex % ids.length]!;
      const replicas = ids.map((id, i) => ({ id, contending: new Set(clusters.filter((_, j) => ((seed >> ((i + j) % 20)) & 1) === 1)) }));
      const d = decideShards({ self, clusters, replicas, holders });
      const run = new Set(d.run);
      for (const [c, h] of holders) {
        if (h !== self) continue;
        expect(run.has(c) !== d.release.includes(c), `${c}: kept or released, not both, not neither`).to.equal(true);
        if (d.release.includes(c) && clusters.includes(c)) expect(replicas.find((r) => r.id === d.target.get(c))!.contending.has(c)).to.equal(true);
      }
      for (const c of d.run) expect(d.target.get(c) === self || holders.get(c) === self).to.equal(true);
    }), { numRuns: 500 });
  });

  it('converges: replicas that act on their decisions, with Leases as the only licence, end balanced with no cluster held twice', () => {
    fc.assert(fc.property(world, ({ clusters, ids, holders: initial }) => {
      // The lease table: one holder per cluster at most, by construction; dead holders' Leases have expired.
      const lease = new Map([...initial].filter(([, h]) => ids.includes(h)));
      const contending = new Map(ids.map((id) => [id, new Set<string>()]));
      let rounds = 0;
      for (; rounds < 8; rounds++) {
        const replicas = ids.map((id) => ({ id, contending: contending.get(id)! }));
        const decisions = ids.map((self) => [self, decideShards({ self, clusters, replicas, holders: lease })] as const);
        let changed = false;
        for (const [self, d] of decisions) {
          for (const c of d.release) { lease.delete(c); changed = true; }
          const next = new Set(d.run);
          if ([...next].some((c) => !contending.get(self)!.has(c)) || next.size !== contending.get(self)!.size) changed = true;
          contending.set(self, next);
        }
        // A free Lease goes to one contender (the apiserver's optimistic write picks one).
        for (const c of clusters) {
          if (lease.has(c)) continue;
          const who = ids.find((id) => contending.get(id)!.has(c));
          if (who) { lease.set(c, who); changed = true; }
        }
        if (!changed) break;
      }
      expect(rounds, 'settled within a few rounds').to.be.below(8);
      expect([...lease.keys()].sort()).to.deep.equal([...clusters].sort());
      const n = counts(lease);
      for (const id of ids) expect(n.get(id) ?? 0).to.be.within(Math.floor(clusters.length / ids.length), Math.ceil(clusters.length / ids.length));
    }), { numRuns: 300 });
  });
});
