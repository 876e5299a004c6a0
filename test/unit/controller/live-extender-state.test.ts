import type { KubernetesObject, V1Node, V1Pod } from '@kubernetes/client-node';
import { expect } from 'chai';
import type { UnstructuredObject } from '../../../src/api/unstructured-object.js';
import { DISRUPTION_TAINT_KEY } from '../../../src/api/disruption-taint.js';
import { buildSnapshot } from '../../../src/cluster/build-snapshot.js';
import { emptyClusterObjects, type ClusterObjects } from '../../../src/cluster/objects.js';
import type { ClusterStateSource, StateChange } from '../../../src/cluster/state.js';
import { LiveExtenderState } from '../../../src/controller/live-extender-state.js';
import { DISRUPTION_ANNOTATION, ExtenderState, PROVISIONED_FOR_ANNOTATION } from '../../../src/extender/state.js';
import { filterNodes } from '../../../src/extender/filter.js';
import { prioritizeNodes } from '../../../src/extender/prioritize.js';
import { rng } from '../../bench/workload.js';

const node = (name: string, extra: { cpu?: string; heartbeat?: number; unschedulable?: boolean; taint?: boolean; annotations?: Record<string, string>; deleting?: boolean; providerID?: string } = {}): V1Node => ({
  apiVersion: 'v1', kind: 'Node',
  metadata: {
    name, ...(extra.annotations ? { annotations: extra.annotations } : {}),
    ...(extra.deleting ? { deletionTimestamp: new Date(0) } : {}),
  },
  spec: {
    ...(extra.unschedulable ? { unschedulable: true } : {}),
    ...(extra.taint ? { taints: [{ key: DISRUPTION_TAINT_KEY, effect: 'NoSchedule' }] } : {}),
    ...(extra.providerID ? { providerID: extra.providerID } : {}),
  },
  status: {
    allocatable: { cpu: extra.cpu ?? '8', memory: '32Gi', pods: '110' },
    conditions: [{ type: 'Ready', status: 'True', lastHeartbeatTime: new Date(extra.heartbeat ?? 0) }],
  },
});

const pod = (name: string, cpu: string, nodeName?: string, phase = 'Running'): V1Pod => ({
  apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'ns', uid: name },
  spec: { ...(nodeName ? { nodeName } : {}), containers: [{ name: 'c', image: 'x', resources: { requests: { cpu, memory: '64Mi' } } }] },
  status: { phase: nodeName ? phase : 'Pending' },
});

const machine = (name: string, opts: { nodeName?: string; providerID?: string; deleting?: boolean; marked?: boolean }): UnstructuredObject => ({
  apiVersion: 'cluster.x-k8s.io/v1beta2', kind: 'Machine',
  metadata: {
    name, namespace: 'capi', labels: { 'cluster.x-k8s.io/deployment-name': 'md' },
    ...(opts.deleting ? { deletionTimestamp: new Date('2026-01-01T00:00:00Z') } : {}),
    ...(opts.marked ? { annotations: { 'cluster.x-k8s.io/delete-machine': '' } } : {}),
  },
  spec: { clusterName: 'c', ...(opts.providerID ? { providerID: opts.providerID } : {}) },
  status: { ...(opts.nodeName ? { nodeRef: { name: opts.nodeName } } : {}) },
});

type ListKind = 'pods' | 'nodes' | 'machines';

/** An informer-cache stand-in: immutable lists, change callbacks with the object, counted whole reads. */
class FakeSource implements ClusterStateSource {
  objs: ClusterObjects;
  reads = 0;
  isSynced = true;
  private listeners: ((kind: keyof ClusterObjects, change?: StateChange) => void)[] = [];
  constructor(nodes: V1Node[], pods: V1Pod[] = [], machines: UnstructuredObject[] = []) {
    this.objs = { ...emptyClusterObjects(), nodes, pods, machines };
  }
  objects(): ClusterObjects {
    this.reads++;
    return this.objs;
  }
  synced(): boolean {
    return this.isSynced;
  }
  onChange(fn: (kind: keyof ClusterObjects, change?: StateChange) => void): () => void {
    this.listeners.push(fn);
    return () => {
      this.listeners = this.listeners.filter((l) => l !== fn);
    };
  }
  private emit(kind: keyof ClusterObjects, change?: StateChange): void {
    for (const l of this.listeners) l(kind, change);
  }
  upsert(kind: ListKind, o: KubernetesObject): void {
    const list = this.objs[kind] as KubernetesObject[];
    const i = list.findIndex((x) => x.metadata!.name === o.metadata!.name);
    const next = [...list];
    if (i >= 0) next[i] = o;
    else next.push(o);
    this.objs = { ...this.objs, [kind]: next };
    this.emit(kind, { type: i >= 0 ? 'MODIFIED' : 'ADDED', object: o });
  }
  remove(kind: ListKind, name: string): void {
    const list = this.objs[kind] as KubernetesObject[];
    const o = list.find((x) => x.metadata!.name === name);
    if (!o) return;
    this.objs = { ...this.objs, [kind]: list.filter((x) => x !== o) };
    this.emit(kind, { type: 'DELETED', object: o });
  }
  relist(kind: ListKind, list: KubernetesObject[]): void {
    this.objs = { ...this.objs, [kind]: list };
    this.emit(kind, { type: 'RELIST' });
  }
}

/** What a fresh build from a whole snapshot answers, field by field, for these nodes. */
function answers(s: ExtenderState, names: string[]) {
  return names.map((n) => {
    const e = s.entry(n);
    return {
      n, known: e?.usage !== undefined, cpu: e?.requestedCpu ?? 0, mem: e?.requestedMemory ?? 0, allocCpu: e?.allocCpu ?? 0,
      disruption: e?.disruption, owners: [...(e?.provisionedFor ?? [])].sort(),
    };
  });
}

function fresh(objs: ClusterObjects, overlay: ReadonlyMap<string, string> = new Map()): ExtenderState {
  const s = ExtenderState.fromSnapshot(buildSnapshot(objs, { strict: false }), objs.nodes);
  for (const [n, r] of overlay) s.markDisrupting(n, r);
  return s;
}

/** Runs the timers until the state has finished its full build. */
async function started(live: LiveExtenderState): Promise<void> {
  live.start();
  await live.settled();
}

describe('LiveExtenderState: every change a delta, full builds only at the start and after a relist', () => {
  const names = ['a', 'b', 'c', 'd', 'e'];

  it('after a seeded random run of pod, Node (heartbeats and real changes) and Machine changes, answers as a fresh build does, without a second full build', async () => {
    for (const seed of [1, 2, 3, 4, 5, 6]) {
      const rand = rng(seed);
      const pick = <T>(xs: readonly T[]) => xs[Math.floor(rand() * xs.length)]!;
      const source = new FakeSource(names.slice(0, 4).map((n) => node(n, { providerID: `kwok://${n}` })));
      const overlay = new Map<string, string>();
      const live = new LiveExtenderState(source, 1000, (err) => { throw err; }, () => overlay);
      await started(live);
      const readsAfterFirstBuild = source.reads;
      for (let step = 0; step < 400; step++) {
        const r = rand();
        const at = pick(names);
        if (r < 0.35) {
          const name = `p${Math.floor(rand() * 40)}`;
          const q = rand();
          if (q < 0.15) source.remove('pods', name);
          else if (q < 0.3) source.upsert('pods', pod(name, `${100 + Math.floor(rand() * 900)}m`));
          else if (q < 0.4) source.upsert('pods', pod(name, '250m', at, rand() < 0.5 ? 'Succeeded' : 'Failed'));
          else source.upsert('pods', pod(name, `${100 + Math.floor(rand() * 900)}m`, at));
        } else if (r < 0.6) {
          source.upsert('nodes', node(at, { heartbeat: step, providerID: `kwok://${at}` })); // heartbeat only (or a re-add)
        } else if (r < 0.75) {
          const q = rand();
          source.upsert('nodes', node(at, {
            providerID: `kwok://${at}`, heartbeat: step,
            ...(q < 0.2 ? { cpu: pick(['4', '8', '16', 'bad']) } : {}),
            ...(q >= 0.2 && q < 0.35 ? { unschedulable: true } : {}),
            ...(q >= 0.35 && q < 0.5 ? { taint: true } : {}),
            ...(q >= 0.5 && q < 0.6 ? { deleting: true } : {}),
            ...(q >= 0.6 && q < 0.8 ? { annotations: { [PROVISIONED_FOR_ANNOTATION]: pick(['Deployment/ns/a', 'Deployment/ns/a,Job/ns/b', '']) } } : {}),
            ...(q >= 0.8 ? { annotations: { [DISRUPTION_ANNOTATION]: pick(['', 'Empty']) } } : {}),
          }));
        } else if (r < 0.8) {
          source.remove('nodes', at);
        } else if (r < 0.93) {
          const m = `m-${at}`;
          const q = rand();
          if (q < 0.2) source.remove('machines', m);
          else source.upsert('machines', machine(m, { ...(rand() < 0.5 ? { nodeName: at } : { providerID: `kwok://${at}` }), deleting: q < 0.4, marked: q >= 0.4 && q < 0.6 }));
        } else if (rand() < 0.5) {
          overlay.set(at, `removing ${at} at step ${step}`);
        } else {
          overlay.delete(at);
        }
        if (step % 50 === 49) {
          await new Promise((res) => setTimeout(res, 5));
          (live as unknown as { tick(): void }).tick(); // the coalesced remap and overlay, as the timer does
          expect(answers(live.get(), names), `seed ${seed} step ${step}`).to.deep.equal(answers(fresh(source.objs, overlay), names));
        }
      }
      live.stop();
      expect(live.rebuilds, 'one full build, at the start').to.equal(1);
      expect(source.reads, 'no whole read of the cache after the first').to.equal(readsAfterFirstBuild);
    }
  });

  it('a heartbeat-only Node update recomputes nothing: the very same entry stays', async () => {
    const source = new FakeSource(names.map((n) => node(n)), [pod('x', '500m', 'a')]);
    const live = new LiveExtenderState(source, 1000, (err) => { throw err; });
    await started(live);
    const before = live.get().entry('a');
    expect(before!.requestedCpu).to.equal(500);
    for (let i = 1; i <= 20; i++) source.upsert('nodes', node('a', { heartbeat: i * 10_000 }));
    expect(live.get().entry('a')).to.equal(before);
    source.upsert('nodes', node('a', { heartbeat: 1, cpu: '16' }));
    expect(live.get().entry('a')!.allocCpu, 'an allocatable change is applied at once').to.equal(16_000);
    expect(live.get().entry('a')!.requestedCpu).to.equal(500);
    live.stop();
    expect(live.rebuilds).to.equal(1);
  });

  it('before its first build it answers as knowing nothing: the filter keeps every node, prioritize scores 0', () => {
    const source = new FakeSource([node('a', { taint: true })]);
    source.isSynced = false;
    const live = new LiveExtenderState(source, 1000);
    live.start();
    const p = pod('q', '100m');
    expect(filterNodes(live.get(), p, { mode: 'names', names: ['a', 'zz'] }).NodeNames).to.deep.equal(['a', 'zz']);
    expect(prioritizeNodes(live.get(), p, { mode: 'names', names: ['a'] })).to.deep.equal([]);
    expect(live.ready()).to.equal(false);
    live.stop();
  });

  it('builds in slices that yield to the event loop, and replays the changes made meanwhile', async () => {
    const nodes = Array.from({ length: 300 }, (_, i) => node(`n${i}`));
    const pods = Array.from({ length: 3000 }, (_, i) => pod(`p${i}`, '100m', `n${i % 300}`));
    const source = new FakeSource(nodes, pods);
    let clock = 0;
    // Every read of the clock is 0.1 ms of work: a slice is ~50 objects.
    const live = new LiveExtenderState(source, 1000, (err) => { throw err; }, undefined, () => (clock += 0.1));
    let timersRan = 0;
    const ticker = setInterval(() => timersRan++, 0);
    live.start();
    // Changes while it builds: a pod moved, a node cordoned, a new node with a pod.
    await new Promise((r) => setImmediate(r));
    expect(live.ready(), 'still building').to.equal(false);
    source.upsert('pods', pod('p0', '900m', 'n1'));
    source.upsert('nodes', node('n2', { unschedulable: true }));
    source.upsert('nodes', node('new'));
    source.upsert('pods', pod('late', '300m', 'new'));
    await live.settled();
    clearInterval(ticker);
    expect(live.lastBuild!.slices, 'many slices').to.be.greaterThan(20);
    expect(timersRan, 'timers ran between slices').to.be.greaterThan(0);
    const all = [...source.objs.nodes.map((n) => n.metadata!.name!)];
    expect(answers(live.get(), all)).to.deep.equal(answers(fresh(source.objs), all));
    live.stop();
  });

  it('a relist rebuilds in the background, serving the previous state until the new one is ready', async () => {
    const source = new FakeSource(names.map((n) => node(n)), [pod('x', '500m', 'a')]);
    let clock = 0;
    const live = new LiveExtenderState(source, 1000, (err) => { throw err; }, undefined, () => (clock += 1));
    await started(live);
    const served = live.get();
    source.relist('pods', [pod('y', '700m', 'b')]);
    expect(live.get(), 'the old state until the rebuild is in').to.equal(served);
    await live.settled();
    expect(live.rebuilds).to.equal(2);
    expect(answers(live.get(), names)).to.deep.equal(answers(fresh(source.objs), names));
    live.stop();
  });
});
