import { readdirSync, readFileSync } from 'node:fs';
import { getPriority } from 'node:os';
import { expect } from 'chai';
import { ffd } from '../../../src/packing/ffd.js';
import { SOLVER_YOUNG_GENERATION_MB, SolverPool } from '../../../src/packing/solver-pool.js';
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

describe('SolverPool', function () {
  // Worker start and solves wait on a 2-core machine that other suites load (CI timed out at 20 s and 60 s).
  this.timeout(180_000);
  let pool: SolverPool;
  // The main thread's niceness before any pool runs (the suite itself may run under nice).
  const mainNice = getPriority();
  before(() => { pool = new SolverPool().start(1); });
  after(() => pool.destroy());

  it('solves on a worker thread with the same result as in-process', async () => {
    const s = snapshot({ groups: [group('g', { cpu: '2', price: 0.1 })], pendingPods: [...replicas('web', 5, { cpu: '1' }), pod('huge', { cpu: '64' })] });
    const [a, b] = await Promise.all([pool.solve(s), pool.solve(s, {}, 'ffd')]);
    expect(a).to.deep.equal(solve(s));
    expect(b).to.deep.equal(ffd(s));
    expect(a.unschedulable.map((u) => u.pod)).to.deep.equal(['default/huge']);
  });

  it('reports the heap of the worker that ran the last solve, which the main thread\'s process metrics cannot see', async () => {
    await pool.solve(snapshot({ groups: [group('g', { cpu: '2', price: 0.1 })], pendingPods: replicas('web', 3, { cpu: '1' }) }));
    const h = pool.workerHeap;
    expect(h.usedBytes).to.be.above(1e5);
    expect(h.committedBytes).to.be.at.least(h.usedBytes);
    expect(h.maxCommittedBytes).to.be.at.least(h.committedBytes);
    expect(h.youngCommittedBytes).to.be.above(0).and.at.most(h.committedBytes);
  });

  it('bounds a worker\'s young generation, which a large solve would otherwise grow and keep committed', async function () {
    this.timeout(180_000);
    // Three solves of 8,000 pending pods: enough to grow V8's default nursery, sized from this process's heap limit.
    const big = benchSnapshot(8000, 'mixed', 11);
    for (let i = 0; i < 3; i++) await pool.solve(big);
    // V8 rounds to its pages: within a megabyte of the bound (67 MB without it here).
    expect(pool.workerHeap.youngCommittedBytes).to.be.at.most((SOLVER_YOUNG_GENERATION_MB + 1) * 2 ** 20);
  });

  /** Nice value (field 19) and scheduling policy (field 41) of each thread of this process. */
  function threadSchedules(): { nice: number; policy: number }[] {
    return readdirSync('/proc/self/task').map((tid) => {
      // The comm field (2) may hold spaces: count fields after its closing parenthesis.
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return { nice: Number(fields[16]), policy: Number(fields[38]) };
    });
  }
  const SCHED_OTHER = 0;
  const SCHED_IDLE = 5;

  it('runs its workers under SCHED_IDLE by default, the main thread untouched', async () => {
    await pool.solve(snapshot({}));
    expect(getPriority()).to.equal(mainNice);
    const idle = threadSchedules().filter((t) => t.policy === SCHED_IDLE);
    expect(idle).to.deep.equal([{ nice: 10, policy: SCHED_IDLE }]);
  });

  it('runs its workers at nice 10 with priority low', async () => {
    const before = threadSchedules().filter((t) => t.nice === 10 && t.policy === SCHED_OTHER).length;
    const low = new SolverPool().start(1, { priority: 'low' });
    try {
      await low.solve(snapshot({}));
      expect(threadSchedules().filter((t) => t.nice === 10 && t.policy === SCHED_OTHER)).to.have.length(before + 1);
    } finally {
      await low.destroy();
    }
  });

  it('reports a worker that cannot start instead of crashing the process', async () => {
    const errors: string[] = [];
    const broken = new SolverPool().start(1, { logError: (m) => errors.push(m) });
    // A worker whose module fails to load: piscina emits 'error' outside any task.
    (broken as unknown as { pool: { emit(e: string, err: Error): void } }).pool.emit('error', new Error('cannot load worker\nstack'));
    await broken.destroy();
    expect(errors).to.deep.equal(['solver worker failed: cannot load worker']);
  });

  it('fails a solve whose snapshot cannot be serialized, and keeps its worker for the next one', async () => {
    const s = snapshot({ groups: [group('g', { cpu: '2' })], pendingPods: replicas('web', 3, { cpu: '1' }) });
    const bad = { ...s, pendingPods: [...s.pendingPods, { ...s.pendingPods[0]!, key: 'default/bad', labels: { toString: () => 'x' } as unknown as Record<string, string> }] };
    let err: unknown;
    try { await pool.solve(bad); } catch (e) { err = e; }
    expect(String(err)).to.match(/could not be cloned/);
    // One worker: a task left waiting for the rest of that snapshot would block this one.
    expect(await pool.solve(s)).to.deep.equal(solve(s));
  });

  it('rejects use before start', async () => {
    const idle = new SolverPool();
    let err: unknown;
    try { await idle.solve(snapshot({})); } catch (e) { err = e; }
    expect(String(err)).to.contain('not started');
  });
});
