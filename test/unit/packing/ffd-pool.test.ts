import { expect } from 'chai';
import { ffd } from '../../../src/packing/ffd.js';
import { SolverPool } from '../../../src/packing/solver-pool.js';
import { solve } from '../../../src/packing/solve.js';
import { benchSnapshot, lowerBound } from '../../bench/workload.js';
import { HOSTNAME, group, newNodes, node, pod, replicas, snapshot, where } from './snapshot-builders.js';

describe('ffd (Karpenter-style baseline)', () => {
  it('fills existing nodes first, then one claim, then picks the cheapest group that holds the claim', () => {
    const s = snapshot({
      groups: [group('s', { cpu: '2', memory: '8Gi', price: 0.2 }), group('m', { cpu: '4', memory: '16Gi', price: 0.4 }), group('l', { cpu: '8', memory: '32Gi', price: 0.8 })],
      nodes: [node('n1', { cpu: '1' })],
      pendingPods: [...replicas('big', 2, { cpu: '1500m' }), ...replicas('small', 2, { cpu: '500m' })],
    });
    const plan = ffd(s);
    const w = where(plan);
    // Largest first: the 1.5-cpu pods open the claim; a 500m pod fills n1, the other joins the claim (3.5 cpu -> m).
    expect(w['default/small-0']).to.equal('n1');
    expect(newNodes(plan)).to.deep.equal({ m: 1 });
  });

  it('honours the same constraints as solve', () => {
    const s = snapshot({
      groups: [group('g', { price: 0.1 })],
      pendingPods: replicas('web', 3, { cpu: '100m', labels: { app: 'web' }, spec: { affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey: HOSTNAME, labelSelector: { matchLabels: { app: 'web' } } }] } } } }),
    });
    expect(new Set(Object.values(where(ffd(s)))).size).to.equal(3);
  });

  it('reports unschedulable pods one by one with reasons', () => {
    const s = snapshot({ groups: [group('g', { cpu: '1', max: 1 })], pendingPods: replicas('web', 2, { cpu: '1' }) });
    const plan = ffd(s);
    expect(plan.placements).to.have.length(1);
    expect(plan.unschedulable).to.have.length(1);
    expect(plan.unschedulable[0]!.reason).to.contain('max size 1 reached');
  });
});

describe('solve on the benchmark inputs', () => {
  it('places every pod, stays within 5% of the lower bound on plain pods, and costs no more than FFD', () => {
    const plain = benchSnapshot(1000, 'plain');
    const p = solve(plain);
    expect(p.unschedulable).to.deep.equal([]);
    expect(p.placements).to.have.length(1000);
    expect(p.cost.addedPerHour).to.be.at.most(lowerBound(plain) * 1.05);
    const mixed = benchSnapshot(500, 'mixed');
    const m = solve(mixed);
    expect(m.placements).to.have.length(500);
    expect(m.cost.addedPerHour).to.be.at.most(ffd(mixed).cost.addedPerHour);
  });

  it('places each pod exactly once', () => {
    const s = benchSnapshot(600, 'mixed', 3);
    const plan = solve(s);
    const keys = plan.placements.map((p) => p.pod);
    expect(new Set(keys).size).to.equal(keys.length);
    expect(keys.length + plan.unschedulable.length).to.equal(600);
  });
});

describe('SolverPool', () => {
  let pool: SolverPool;
  before(() => { pool = new SolverPool().start(1); });
  after(() => pool.destroy());

  it('solves on a worker thread with the same result as in-process', async () => {
    const s = snapshot({ groups: [group('g', { cpu: '2', price: 0.1 })], pendingPods: [...replicas('web', 5, { cpu: '1' }), pod('huge', { cpu: '64' })] });
    const [a, b] = await Promise.all([pool.solve(s), pool.solve(s, {}, 'ffd')]);
    expect(a).to.deep.equal(solve(s));
    expect(b).to.deep.equal(ffd(s));
    expect(a.unschedulable.map((u) => u.pod)).to.deep.equal(['default/huge']);
  });

  it('runs its workers at a lower priority than the main thread (Linux nice is per thread)', async () => {
    await pool.solve(snapshot({}));
    const { readdirSync, readFileSync } = await import('node:fs');
    const { getPriority } = await import('node:os');
    // Field 19 of /proc/<pid>/task/<tid>/stat is the thread's nice value; the comm
    // field (2) may hold spaces, so count fields after its closing parenthesis.
    const nice = readdirSync('/proc/self/task').map((tid) => {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
    });
    expect(getPriority()).to.equal(0);
    expect(nice.filter((n) => n === 10)).to.have.length(1);
  });

  it('rejects use before start', async () => {
    const idle = new SolverPool();
    let err: unknown;
    try { await idle.solve(snapshot({})); } catch (e) { err = e; }
    expect(String(err)).to.contain('not started');
  });
});

describe('snapshot chunks', () => {
  it('cut a snapshot into bounded messages and put it back together unchanged', async () => {
    const { snapshotChunks, assembleSnapshot } = await import('../../../src/packing/snapshot-chunks.js');
    const s = snapshot({
      groups: [group('g')],
      nodes: Array.from({ length: 5 }, (_, i) => node(`n${i}`, { bound: replicas(`b${i}`, 3, { cpu: '10m' }) })),
      pendingPods: replicas('web', 25, { cpu: '10m' }),
    });
    const chunks = [...snapshotChunks(s, 10)];
    for (const c of chunks) expect((c.nodes?.length ?? 0) + (c.pendingPods?.length ?? 0)).to.be.at.most(10);
    expect(chunks.at(-1)!.last).to.equal(true);
    expect(assembleSnapshot(structuredClone(chunks))).to.deep.equal(s);
  });
});
