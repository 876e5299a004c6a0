import { expect } from 'chai';
import fc from 'fast-check';
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import { EmptyTracker } from '../../../src/disruption/empty-tracker.js';
import { fnv1a, NodeOccupancy } from '../../../src/disruption/node-occupancy.js';
import { SettledTracker } from '../../../src/disruption/settled-tracker.js';
import { occupiesNode } from '../../../src/disruption/validation.js';

const node = (name: string, beat = 0): V1Node => ({ apiVersion: 'v1', kind: 'Node', metadata: { name, resourceVersion: String(beat) } });
const pod = (name: string, nodeName: string | undefined, ownerKind = 'ReplicaSet', phase = 'Running', uid = `uid-${name}`): V1Pod => ({
  apiVersion: 'v1', kind: 'Pod',
  metadata: { name, namespace: 'default', uid, ownerReferences: [{ apiVersion: 'v1', kind: ownerKind, name: 'o', uid: 'o', controller: true }] },
  spec: { ...(nodeName ? { nodeName } : {}), containers: [] }, status: { phase },
});

/** Both trackers fed through one occupancy, as the Disruptor feeds them. */
function trackers() {
  const occupancy = new NodeOccupancy();
  const empty = new EmptyTracker();
  const settled = new SettledTracker();
  return {
    empty, settled,
    observe(nodes: V1Node[], pods: V1Pod[], now: number) {
      const changed = occupancy.update(nodes, pods);
      empty.observe(occupancy, changed, now);
      settled.observe(occupancy, changed, now);
      return changed;
    },
  };
}

/** The trackers as they were before (a whole pass over every pod and node at each look): the reference. */
class WholePassTrackers {
  readonly emptySince = new Map<string, number>();
  readonly settled = new Map<string, { sig: string; since: number }>();
  observe(nodes: V1Node[], pods: V1Pod[], now: number): void {
    const acc = new Map<string, { count: number; sum: number }>();
    for (const p of pods) {
      const bound = p.spec?.nodeName;
      if (!bound || !occupiesNode(p)) continue;
      const a = acc.get(bound) ?? { count: 0, sum: 0 };
      a.count++;
      a.sum = (a.sum + fnv1a(p.metadata?.uid ?? `${p.metadata?.namespace}/${p.metadata?.name}`)) >>> 0;
      acc.set(bound, a);
    }
    const present = new Set<string>();
    for (const n of nodes) {
      const name = n.metadata!.name!;
      present.add(name);
      const a = acc.get(name);
      if (a) this.emptySince.delete(name);
      else if (!this.emptySince.has(name)) this.emptySince.set(name, now);
      const sig = a ? `${a.count}:${a.sum}` : '';
      const cur = this.settled.get(name);
      if (!cur || cur.sig !== sig) this.settled.set(name, { sig, since: now });
    }
    for (const name of this.emptySince.keys()) if (!present.has(name)) this.emptySince.delete(name);
    for (const name of this.settled.keys()) if (!present.has(name)) this.settled.delete(name);
  }
}

const sorted = (m: ReadonlyMap<string, number>) => [...m].sort(([a], [b]) => a.localeCompare(b));

describe('NodeOccupancy and the empty and settled trackers', () => {
  it('remember since when each node has had only DaemonSet, mirror or finished pods, and forget nodes that are gone', () => {
    const t = trackers();
    const nodes = [node('a'), node('b'), node('c')];
    t.observe(nodes, [pod('web', 'a'), pod('ds', 'b', 'DaemonSet'), pod('done', 'c', 'Job', 'Succeeded')], 100);
    expect(sorted(t.empty.emptySince())).to.deep.equal([['b', 100], ['c', 100]]);
    // Still empty later: the first time is kept. a empties now.
    t.observe(nodes, [pod('ds', 'b', 'DaemonSet'), pod('mirror', 'a', 'Node')], 200);
    expect(Object.fromEntries(t.empty.emptySince())).to.deep.equal({ a: 200, b: 100, c: 100 });
    // A pod lands on b; c goes away.
    t.observe([node('a'), node('b')], [pod('web2', 'b')], 300);
    expect(Object.fromEntries(t.empty.emptySince())).to.deep.equal({ a: 200 });
    expect(Object.fromEntries(t.settled.settledSince())).to.deep.equal({ a: 200, b: 300 });
  });

  it('fold in only what changed: heartbeats, status updates and a pod that came and went between two looks change nothing', () => {
    const t = trackers();
    const pods = [pod('web', 'a'), pod('db', 'b')];
    t.observe([node('a'), node('b')], pods, 100);
    // Heartbeats (new Node objects, same names), new versions of the same pods and an unbound pod.
    expect([...t.observe([node('a', 1), node('b', 1)], [pod('web', 'a'), pod('db', 'b'), pod('pending', undefined)], 200)]).to.deep.equal([]);
    // A pod lands on a: only a is looked at, and its pods changed.
    expect([...t.observe([node('a', 2), node('b', 2)], [pod('web', 'a'), pod('db', 'b'), pod('pending', 'a')], 300)]).to.deep.equal(['a']);
    expect(Object.fromEntries(t.settled.settledSince())).to.deep.equal({ a: 300, b: 100 });
    // web is replaced by a pod of the same name (a new uid): a's pods changed.
    expect([...t.observe([node('a', 2), node('b', 2)], [pod('web', 'a', 'ReplicaSet', 'Running', 'uid-web-2'), pod('db', 'b'), pod('pending', 'a')], 400)]).to.deep.equal(['a']);
    expect(Object.fromEntries(t.settled.settledSince())).to.deep.equal({ a: 400, b: 100 });
  });

  it('equal the whole-pass trackers after any changes, looked at any time (seeded)', () => {
    const change = fc.oneof(
      { weight: 5, arbitrary: fc.record({ t: fc.constant('pod' as const), name: fc.integer({ min: 0, max: 15 }), node: fc.option(fc.integer({ min: 0, max: 5 })),
        owner: fc.constantFrom('ReplicaSet', 'DaemonSet', 'Node', 'Job'), phase: fc.constantFrom('Pending', 'Running', 'Succeeded', 'Failed'), uid: fc.integer({ min: 0, max: 2 }) }) },
      { weight: 2, arbitrary: fc.record({ t: fc.constant('deletePod' as const), name: fc.integer({ min: 0, max: 15 }) }) },
      { weight: 2, arbitrary: fc.record({ t: fc.constant('node' as const), name: fc.integer({ min: 0, max: 5 }) }) },
      { weight: 1, arbitrary: fc.record({ t: fc.constant('deleteNode' as const), name: fc.integer({ min: 0, max: 5 }) }) },
      { weight: 1, arbitrary: fc.record({ t: fc.constant('relist' as const), seed: fc.integer() }) },
    );
    fc.assert(fc.property(fc.array(fc.array(change, { maxLength: 10 }), { minLength: 1, maxLength: 30 }), (steps) => {
      const pods = new Map<string, V1Pod>();
      const nodes = new Map<string, V1Node>();
      const incremental = trackers();
      const reference = new WholePassTrackers();
      let beat = 0;
      let now = 0;
      for (const step of steps) {
        let relist: number | undefined;
        for (const c of step) {
          if (c.t === 'pod') pods.set(`p${c.name}`, pod(`p${c.name}`, c.node === null ? undefined : `n${c.node}`, c.owner, c.phase, `u${c.name}-${c.uid}`));
          else if (c.t === 'deletePod') pods.delete(`p${c.name}`);
          else if (c.t === 'node') nodes.set(`n${c.name}`, node(`n${c.name}`, beat++));
          else if (c.t === 'deleteNode') nodes.delete(`n${c.name}`);
          else relist = c.seed;
        }
        let podList = [...pods.values()];
        let nodeList = [...nodes.values()];
        if (relist !== undefined) {
          // A relist: copies of every object, in another order.
          const order = <T>(xs: T[]) => xs.map((x, i) => ({ x: structuredClone(x), r: Math.imul(i + 1, relist! | 1) >>> 0 })).sort((a, b) => a.r - b.r).map((e) => e.x);
          podList = order(podList);
          nodeList = order(nodeList);
          pods.clear();
          for (const p of podList) pods.set(p.metadata!.name!, p);
          nodes.clear();
          for (const n of nodeList) nodes.set(n.metadata!.name!, n);
        }
        now += 1000;
        incremental.observe(nodeList, podList, now);
        reference.observe(nodeList, podList, now);
        expect(sorted(incremental.empty.emptySince())).to.deep.equal(sorted(reference.emptySince));
        expect(sorted(incremental.settled.settledSince())).to.deep.equal(sorted(new Map([...reference.settled].map(([k, v]) => [k, v.since]))));
      }
    }), { seed: 1729, numRuns: 400 });
  });
});
