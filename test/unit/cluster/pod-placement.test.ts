import { expect } from 'chai';
import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import type { V1Pod } from '@kubernetes/client-node';
import { buildSnapshot, type SnapshotIssue } from '../../../src/cluster/build-snapshot.js';
import { loadObjects } from '../../../src/cluster/load-objects.js';
import type { ClusterObjects } from '../../../src/cluster/objects.js';
import { SnapshotBuilder } from '../../../src/cluster/snapshot-builder.js';

// The SnapshotBuilder keeps the pods step from build to build by the changes between
// the pod lists (pod-placement.ts). Whatever the changes, a build must equal a build
// from scratch on copies of the same objects (no memo can apply), issues included.
const example = () => loadObjects(readFileSync(new URL('../../fixtures/example-cluster.yaml', import.meta.url), 'utf8'));
const NODES = ['ip-10-0-1-5.ec2.internal', 'ip-10-0-3-7.ec2.internal', 'gone.internal'];

interface PodSpec { name: number; ns: number; node: number | null; phase: string; cpu: string; owner: string; ephemeral: boolean }

function pod(s: PodSpec, version: number): V1Pod {
  const name = `p${s.name}`;
  return {
    apiVersion: 'v1', kind: 'Pod',
    metadata: {
      name, namespace: `ns${s.ns}`, uid: `${name}-${version}`, resourceVersion: String(version),
      ...(s.owner ? { ownerReferences: [{ apiVersion: 'apps/v1', kind: s.owner, name: 'o', uid: 'o', controller: true }] } : {}),
    },
    spec: {
      ...(s.node !== null ? { nodeName: NODES[s.node] } : {}),
      containers: [{ name: 'c', image: 'i', resources: { requests: { cpu: s.cpu, memory: '64Mi' } } }],
      ...(s.ephemeral ? { volumes: [{ name: 'scratch', ephemeral: { volumeClaimTemplate: { spec: { storageClassName: 'fast', accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } } } }] } : {}),
    },
    status: { phase: s.phase },
  };
}

function build(builder: SnapshotBuilder | undefined, o: ClusterObjects): { snapshot: unknown; issues: SnapshotIssue[] } {
  const issues: SnapshotIssue[] = [];
  const options = { strict: false, onIssue: (i: SnapshotIssue) => issues.push(i) };
  return { snapshot: builder ? builder.build(o, options) : buildSnapshot(structuredClone(o), options), issues };
}

describe('SnapshotBuilder: pods kept from build to build', () => {
  it('equals a build from scratch after any pod changes and relists, issues included (seeded)', function () {
    // Hundreds of seeded builds: 16-30 s on a loaded 2-core machine, over mocha's 20 s.
    this.timeout(90_000);
    const spec = fc.record({
      name: fc.integer({ min: 0, max: 12 }), ns: fc.integer({ min: 0, max: 2 }), node: fc.option(fc.integer({ min: 0, max: 2 })),
      phase: fc.constantFrom('Pending', 'Running', 'Succeeded'), cpu: fc.constantFrom('100m', '2', 'lots'),
      owner: fc.constantFrom('', 'ReplicaSet', 'DaemonSet'), ephemeral: fc.boolean(),
    });
    const change = fc.oneof(
      { weight: 6, arbitrary: spec.map((s) => ({ t: 'put' as const, s })) },
      { weight: 2, arbitrary: fc.integer({ min: 0, max: 12 }).map((name) => ({ t: 'delete' as const, name })) },
      { weight: 1, arbitrary: fc.integer().map((seed) => ({ t: 'relist' as const, seed })) },
    );
    fc.assert(fc.property(fc.array(fc.array(change, { maxLength: 6 }), { minLength: 1, maxLength: 15 }), (steps) => {
      const base = example();
      const store = new Map<string, V1Pod>(base.pods.map((p) => [`${p.metadata!.namespace}/${p.metadata!.name}`, p]));
      const builder = new SnapshotBuilder();
      let version = 0;
      for (const step of steps) {
        let relist: number | undefined;
        for (const c of step) {
          if (c.t === 'put') {
            const p = pod(c.s, version++);
            store.set(`${p.metadata!.namespace}/${p.metadata!.name}`, p);
          } else if (c.t === 'delete') {
            for (const key of [...store.keys()]) if (key.endsWith(`/p${c.name}`)) store.delete(key);
          } else relist = c.seed;
        }
        let pods = [...store.values()];
        if (relist !== undefined) {
          pods = pods.map((p, i) => ({ p: structuredClone(p), r: Math.imul(i + 1, relist! | 1) >>> 0 })).sort((a, b) => a.r - b.r).map((e) => e.p);
          store.clear();
          for (const p of pods) store.set(`${p.metadata!.namespace}/${p.metadata!.name}`, p);
        }
        const objects = { ...base, pods };
        const kept = build(builder, objects);
        const fresh = build(undefined, objects);
        expect(kept.snapshot).to.deep.equal(fresh.snapshot);
        expect(kept.issues).to.deep.equal(fresh.issues);
      }
    }), { seed: 4242, numRuns: 150 });
  });

  it('keeps the pod list of every node whose pods did not change (the very same array)', () => {
    const o = example();
    const builder = new SnapshotBuilder();
    const first = builder.build(o, { strict: false });
    const [a, b] = NODES as [string, string];
    const onA = o.pods.findIndex((p) => p.spec?.nodeName === a);
    const moved: V1Pod = { ...o.pods[onA]!, spec: { ...o.pods[onA]!.spec!, nodeName: b } };
    const second = builder.build({ ...o, pods: o.pods.with(onA, moved) }, { strict: false });
    const pods = (s: typeof first, n: string) => s.nodes.find((x) => x.name === n)!.pods;
    expect(pods(second, b).map((p) => p.name)).to.include(moved.metadata!.name);
    expect(pods(second, a).map((p) => p.name)).to.not.include(moved.metadata!.name);
    expect(second.pendingPods).to.equal(first.pendingPods);
    // Only the two nodes the pod left and joined got new lists.
    expect(pods(second, a)).to.not.equal(pods(first, a));
    expect(pods(second, b)).to.not.equal(pods(first, b));
  });
});
