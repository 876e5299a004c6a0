import type { V1Node, V1Pod } from '@kubernetes/client-node';
import { expect } from 'chai';
import { buildSnapshot } from '../../../src/cluster/build-snapshot.js';
import { emptyClusterObjects, type ClusterObjects } from '../../../src/cluster/objects.js';
import type { ClusterStateSource, StateChange } from '../../../src/cluster/state.js';
import { LiveExtenderState } from '../../../src/controller/live-extender-state.js';
import { ExtenderState } from '../../../src/extender/state.js';
import { rng } from '../../bench/workload.js';

const node = (name: string): V1Node => ({
  apiVersion: 'v1', kind: 'Node', metadata: { name },
  status: { allocatable: { cpu: '8', memory: '32Gi', pods: '110' }, conditions: [{ type: 'Ready', status: 'True' }] },
});

const pod = (name: string, cpu: string, nodeName?: string, phase = 'Running'): V1Pod => ({
  apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'ns', uid: name },
  spec: { ...(nodeName ? { nodeName } : {}), containers: [{ name: 'c', image: 'x', resources: { requests: { cpu, memory: '64Mi' } } }] },
  status: { phase: nodeName ? phase : 'Pending' },
});

/** An informer-cache stand-in: immutable lists, change callbacks with the object, counted reads. */
class FakeSource implements ClusterStateSource {
  objs: ClusterObjects;
  reads = 0;
  private listeners: ((kind: keyof ClusterObjects, change?: StateChange) => void)[] = [];
  constructor(nodes: V1Node[]) {
    this.objs = { ...emptyClusterObjects(), nodes };
  }
  objects(): ClusterObjects {
    this.reads++;
    return this.objs;
  }
  synced(): boolean {
    return true;
  }
  onChange(fn: (kind: keyof ClusterObjects, change?: StateChange) => void): () => void {
    this.listeners.push(fn);
    return () => undefined;
  }
  upsertPod(p: V1Pod): void {
    const i = this.objs.pods.findIndex((x) => x.metadata!.name === p.metadata!.name);
    const pods = [...this.objs.pods];
    if (i >= 0) pods[i] = p;
    else pods.push(p);
    this.objs = { ...this.objs, pods };
    for (const l of this.listeners) l('pods', { type: i >= 0 ? 'MODIFIED' : 'ADDED', object: p });
  }
  deletePod(name: string): void {
    const p = this.objs.pods.find((x) => x.metadata!.name === name);
    if (!p) return;
    this.objs = { ...this.objs, pods: this.objs.pods.filter((x) => x !== p) };
    for (const l of this.listeners) l('pods', { type: 'DELETED', object: p });
  }
  changeNodes(nodes: V1Node[]): void {
    this.objs = { ...this.objs, nodes };
    for (const l of this.listeners) l('nodes', { type: 'MODIFIED', object: nodes[0]! });
  }
}

const usage = (s: ExtenderState, names: string[]) => names.map((n) => ({ n, cpu: s.entry(n)?.requestedCpu ?? 0, mem: s.entry(n)?.requestedMemory ?? 0 }));

describe('LiveExtenderState: pod changes as deltas, full rebuilds only for the rest', () => {
  const names = ['a', 'b', 'c', 'd'];

  it('after a seeded random run of pod adds, binds, moves, phase changes and deletes, equals a fresh build, without rebuilding', () => {
    for (const seed of [1, 2, 3, 4, 5]) {
      const rand = rng(seed);
      const source = new FakeSource(names.map(node));
      const live = new LiveExtenderState(source, 250, (err) => { throw err; });
      live.start();
      live.rebuild();
      live.stop(); // no timers: this test drives rebuilds itself
      const readsAfterFirstBuild = source.reads;
      for (let step = 0; step < 300; step++) {
        const name = `p${Math.floor(rand() * 40)}`;
        const r = rand();
        const at = names[Math.floor(rand() * names.length)];
        if (r < 0.15) source.deletePod(name);
        else if (r < 0.3) source.upsertPod(pod(name, `${100 + Math.floor(rand() * 900)}m`));
        else if (r < 0.4) source.upsertPod(pod(name, '250m', at, rand() < 0.5 ? 'Succeeded' : 'Failed'));
        else source.upsertPod(pod(name, `${100 + Math.floor(rand() * 900)}m`, at));
      }
      const fresh = ExtenderState.fromSnapshot(buildSnapshot(source.objs, { strict: false }), source.objs.nodes);
      expect(usage(live.get(), names), `seed ${seed}`).to.deep.equal(usage(fresh, names));
      expect(source.reads, 'no full rebuild for pod changes').to.equal(readsAfterFirstBuild);
    }
  });

  it('a node change still rebuilds from a fresh snapshot, and deltas continue from it', () => {
    const source = new FakeSource(names.map(node));
    const live = new LiveExtenderState(source, 250, (err) => { throw err; });
    live.start();
    live.stop();
    live.rebuild();
    source.upsertPod(pod('x', '500m', 'a'));
    expect(live.get().entry('a')!.requestedCpu).to.equal(500);
    source.changeNodes([...names.map(node), node('e')]);
    expect(live.get().entry('e'), 'pending until the rebuild').to.equal(undefined);
    source.upsertPod(pod('y', '300m', 'e')); // while a rebuild is pending: left to it
    live.rebuild();
    expect(live.get().entry('e')!.requestedCpu).to.equal(300);
    source.deletePod('x');
    source.upsertPod(pod('y', '300m', 'e', 'Succeeded'));
    expect(live.get().entry('a')!.requestedCpu).to.equal(0);
    expect(live.get().entry('e')!.requestedCpu).to.equal(0);
  });

  it('spaces full rebuilds by 4x the last one\'s duration, so a slow rebuild cannot take the whole event loop', async () => {
    let clock = 0;
    const source = new FakeSource(names.map(node));
    const live = new LiveExtenderState(source, 5, (err) => { throw err; }, undefined, () => clock);
    const realObjects = source.objects.bind(source);
    source.objects = () => {
      clock += 20; // every rebuild "takes" 20 ms
      return realObjects();
    };
    live.start();
    await new Promise((r) => setTimeout(r, 30));
    expect(live.rebuilds).to.equal(1);
    source.changeNodes(names.map(node));
    // The next one waits 4 x 20 = 80 ms of the injected clock after the last; the real timer uses the same figure.
    await new Promise((r) => setTimeout(r, 30));
    expect(live.rebuilds, 'not yet: 80 ms have not passed').to.equal(1);
    await new Promise((r) => setTimeout(r, 120));
    expect(live.rebuilds).to.equal(2);
    live.stop();
  });
});
