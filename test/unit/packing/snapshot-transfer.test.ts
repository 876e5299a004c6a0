import { expect } from 'chai';
import fc from 'fast-check';
import type { ClusterSnapshot } from '../../../src/cluster/snapshot.js';
import { ffd } from '../../../src/packing/ffd.js';
import { assemblePlan, planParts } from '../../../src/packing/plan-transfer.js';
import { solve } from '../../../src/packing/solve.js';
import { type SolverSnapshot, boundPodView } from '../../../src/packing/solver-snapshot.js';
import { DecodedObjects, decodeValue, encodeValue, SnapshotEncoder, type SnapshotPart, type SnapshotPartLimits, partTransferList } from '../../../src/packing/snapshot-transfer.js';
import { benchSnapshot } from '../../bench/workload.js';
import { group, node, pod, replicas, snapshot, solverView } from './snapshot-builders.js';

/** What postMessage does to a part: a structured clone with its buffers transferred. */
function post(part: SnapshotPart): SnapshotPart {
  return structuredClone(part, { transfer: partTransferList(part) });
}

function transfer(encoder: SnapshotEncoder, decoded: DecodedObjects, s: ClusterSnapshot, limits?: SnapshotPartLimits): { result: SolverSnapshot; parts: SnapshotPart[] } {
  const assembler = decoded.assembler();
  // The parts as the worker receives them (the sender's buffers are detached by the transfer).
  const parts = [...encoder.parts(s, limits)].map(post);
  let result: SolverSnapshot | undefined;
  for (const p of parts) {
    expect(result, 'a part after the snapshot was complete').to.equal(undefined);
    result = assembler.add(p);
  }
  expect(result, 'no snapshot after the last part').to.not.equal(undefined);
  return { result: result!, parts };
}

function example(): ClusterSnapshot {
  return snapshot({
    groups: [group('a', { price: 0.2 }), group('b', { cpu: '8', max: Infinity })],
    nodes: Array.from({ length: 5 }, (_, i) => node(`n${i}`, { bound: replicas(`b${i}`, i, { cpu: '10m' }), groupId: 'MachineDeployment/default/a' })),
    pendingPods: replicas('web', 25, { cpu: '10m' }),
    namespaceLabels: { default: { team: 'x' } },
    limits: { pool: { cpu: 16, used: { cpu: 2, memory: 0, nodes: 1 } } },
  });
}

const ids = (parts: SnapshotPart[]) => parts.flatMap((p) => [...(p.ids ?? [])]);

describe('encodeValue / decodeValue (one object of a transfer)', () => {
  it('gives back any value deeply equal, as structured clone does (seeded)', () => {
    const values = fc.anything({
      withBigInt: true, withBoxedValues: true, withDate: true, withMap: true, withSet: true, withNullPrototype: true,
      withSparseArray: true, withTypedArray: true, withObjectString: true, maxDepth: 4,
    });
    fc.assert(fc.property(values, (v) => {
      expect(decodeValue(encodeValue(v))).to.deep.equal(structuredClone(v));
    }), { seed: 132, numRuns: 2000 });
  });

  it('writes JSON text for plain data and v8\'s format for what JSON would lose', () => {
    const text = (v: unknown) => encodeValue(v)[0] !== 0xff;
    const sparse: number[] = [1];
    sparse[2] = 3;
    expect(text({ namespace: 'default', labels: { app: 'web' }, requests: { cpu: 100, memory: 2 ** 30 }, hostPorts: [] })).to.equal(true);
    for (const lossy of [{ max: Infinity }, { owner: undefined }, { z: -0 }, sparse, new Date(0), { n: NaN }]) expect(text(lossy), JSON.stringify(lossy)).to.equal(false);
    expect(decodeValue(encodeValue({ max: Infinity, owner: undefined }))).to.deep.equal({ max: Infinity, owner: undefined });
  });
});

describe('snapshot transfer (main thread -> solver worker)', () => {
  it('puts a snapshot back together unchanged but for bound pods sent as their views, including values JSON would lose', () => {
    const s = example();
    const { result } = transfer(new SnapshotEncoder(), new DecodedObjects(), s);
    expect(result).to.deep.equal(solverView(s));
    expect(Object.keys(result.nodes[1]!.pods[0]!).sort()).to.deep.equal(['hostPorts', 'labels', 'namespace', 'requests']);
    expect(result.groups[1]!.maxSize).to.equal(Infinity);
  });

  it('bounds each part by entries and by objects encoded for the first time, keeping a node whole', () => {
    const s = example();
    const encoder = new SnapshotEncoder();
    const { parts } = transfer(encoder, new DecodedObjects(), s, { entries: 4, fresh: 3 });
    for (const p of parts.filter((x) => x.ids)) {
      const nodesInPart = p.podCounts?.length ?? 0;
      // A part closes once it reaches either bound; a node (shell + pods) is never split.
      if (p.section === 'nodes') expect(p.ids!.length).to.equal(nodesInPart + [...p.podCounts!].reduce((a, b) => a + b, 0));
      else expect(p.ids!.length).to.be.at.most(3);
    }
    expect(parts.filter((p) => p.section === 'pendingPods')).to.have.length(Math.ceil(25 / 3));
    // Once everything is encoded, only the entry bound applies.
    const again = [...encoder.parts(s, { entries: 4, fresh: 3 })];
    expect(again.filter((p) => p.section === 'pendingPods')).to.have.length(Math.ceil(25 / 4));
  });

  it('encodes an unchanged object once: the same ids go out again and the worker decodes nothing new', () => {
    const encoder = new SnapshotEncoder();
    const decoded = new DecodedObjects();
    const s = example();
    const first = transfer(encoder, decoded, s);
    const size = decoded.size;
    // 2 groups, 5 node shells, 0+1+2+3+4 bound pods, 25 pending.
    expect(size).to.equal(2 + 5 + 10 + 25);
    const second = transfer(encoder, decoded, { ...s, pendingPods: [...s.pendingPods] });
    expect(ids(second.parts)).to.deep.equal(ids(first.parts));
    expect(decoded.size).to.equal(size);
    expect(second.result).to.deep.equal(solverView(s));
  });

  it('sends a replaced object under a new id, so a changed pod is seen changed', () => {
    const encoder = new SnapshotEncoder();
    const decoded = new DecodedObjects();
    const s = example();
    transfer(encoder, decoded, s);
    const changed = { ...s.pendingPods[3]!, priority: 1000 };
    const next = { ...s, pendingPods: s.pendingPods.map((p, i) => (i === 3 ? changed : p)) };
    const { result, parts } = transfer(encoder, decoded, next);
    expect(result.pendingPods[3]!.priority).to.equal(1000);
    expect(result.pendingPods[2]).to.deep.equal(s.pendingPods[2]);
    expect(new Set(ids(parts)).size).to.equal(ids(parts).length);
  });

  it('sends a pod whole when a what-if moves it from its node to pending, and as its view on its node', () => {
    const encoder = new SnapshotEncoder();
    const decoded = new DecodedObjects();
    const s = example();
    const moved = s.nodes[4]!.pods[0]!;
    const { result } = transfer(encoder, decoded, { ...s, pendingPods: [...s.pendingPods, moved] });
    expect(result.pendingPods.at(-1)).to.deep.equal(moved);
    expect(result.nodes[4]!.pods[0]).to.deep.equal(boundPodView(moved));
  });

  it('forgets on the worker what the last three snapshots did not use', () => {
    const encoder = new SnapshotEncoder();
    const decoded = new DecodedObjects(3);
    const s = example();
    transfer(encoder, decoded, s);
    const full = decoded.size;
    const smaller = { ...s, pendingPods: s.pendingPods.slice(0, 5) };
    transfer(encoder, decoded, smaller);
    transfer(encoder, decoded, smaller);
    expect(decoded.size, 'still within three snapshots').to.equal(full);
    transfer(encoder, decoded, smaller);
    expect(decoded.size).to.equal(full - 20);
  });

  it('refuses a transfer that ends without its head', () => {
    const assembler = new DecodedObjects().assembler();
    expect(() => assembler.add({ last: true })).to.throw(/no head/);
  });

  it('gives the worker a snapshot the solvers plan exactly as the original', function () {
    this.timeout(60_000);
    const bench = benchSnapshot(1500, 'mixed', 3);
    // Pods on nodes whose labels, host ports and anti-affinity the pending pods meet.
    const anti = { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: { app: 'web' } } }] } };
    const bound = (i: number) => [
      ...replicas(`keep${i}`, 3, { cpu: '500m', labels: { app: 'web' } }),
      pod(`lone${i}`, { cpu: '250m', labels: { app: 'db' }, spec: { affinity: anti, containers: [{ name: 'c', image: 'x', ports: [{ containerPort: 80, hostPort: 80 }] }] } }),
    ];
    const s = { ...bench, nodes: Array.from({ length: 8 }, (_, i) => node(`n${i}`, { cpu: '8', bound: bound(i), groupId: bench.groups[0]!.id })) };
    const { result } = transfer(new SnapshotEncoder(), new DecodedObjects(), s);
    expect(solve(result)).to.deep.equal(solve(s));
    expect(ffd(result)).to.deep.equal(ffd(s));
  });
});

/** Freezes every object reachable from `o`, so a write anywhere throws (modules are strict). */
function deepFreeze<T>(o: T): T {
  if (o && typeof o === 'object' && !Object.isFrozen(o)) {
    Object.freeze(o);
    for (const v of Object.values(o)) deepFreeze(v);
  }
  return o;
}

describe('solvers leave their snapshot untouched (the worker reuses decoded objects across solves)', () => {
  it('solve and ffd plan a deeply frozen snapshot as they plan a fresh copy', function () {
    this.timeout(30_000);
    const s = benchSnapshot(600, 'mixed', 5);
    const bound = replicas('bound', 3, { cpu: '100m' });
    const withNodes = { ...s, nodes: [node('n1', { bound, groupId: s.groups[0]!.id }), node('n2', { bound: [pod('x', { cpu: '1' })] })] };
    const frozen = deepFreeze(structuredClone(withNodes));
    expect(solve(frozen)).to.deep.equal(solve(withNodes));
    expect(ffd(frozen)).to.deep.equal(ffd(withNodes));
    expect(solve(frozen, { ignorePreferences: true })).to.deep.equal(solve(withNodes, { ignorePreferences: true }));
  });
});

describe('plan transfer (solver worker -> main thread)', () => {
  it('slices a plan and decodes it back unchanged, one slice per turn', async () => {
    const plan = solve(benchSnapshot(2500, 'mixed', 9));
    expect(plan.placements.length).to.be.greaterThan(1000);
    const parts = planParts(plan, 1000);
    expect(parts.placements).to.have.length(Math.ceil(plan.placements.length / 1000));
    let turns = 0;
    const back = await assemblePlan(structuredClone(parts), async () => { turns++; });
    expect(back).to.deep.equal(plan);
    expect(turns).to.equal(parts.scaleUps.length + parts.placements.length + parts.unschedulable.length);
  });

  it('carries an empty plan', async () => {
    const empty = { scaleUps: [], placements: [], unschedulable: [], cost: { addedPerHour: 0 } };
    expect(await assemblePlan(planParts(empty), async () => undefined)).to.deep.equal(empty);
  });
});
