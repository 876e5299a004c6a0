import { expect } from 'chai';
import type { ClusterSnapshot } from '../../../src/cluster/snapshot.js';
import { DEFAULT_DISRUPTION, DisruptionAllowance, type SettingsOf } from '../../../src/disruption/allowance.js';
import { scopeTotals, underutilizedCandidates, type CandidateSetFilter } from '../../../src/disruption/consolidation-candidates.js';
import { decideSingleNodeConsolidation, type SingleNodeInput } from '../../../src/disruption/single-node.js';
import { solve } from '../../../src/packing/solve.js';
import type { SchedulingPod } from '../../../src/scheduling/scheduling-pod.js';
import { group, node as bareNode, pod, snapshot } from '../packing/snapshot-builders.js';

const S = 1000;
const settingsOf: SettingsOf = () => ({
  ...DEFAULT_DISRUPTION, consolidationPolicy: 'WhenEmptyOrUnderutilized', consolidateAfterMs: 30 * S, budgets: [{ nodes: '100%' }],
});

/** `count` pods of `cpu` each, of one owner, bound to `nodeName`. */
function pods(owner: string, nodeName: string, count: number, cpu: string): SchedulingPod[] {
  return Array.from({ length: count }, (_, i) => ({ ...pod(`${owner}-${nodeName}-${i}`, { owner, cpu, memory: '1Gi' }), nodeName }));
}

/**
 * Four 4-cpu nodes each running two 1.5-cpu pods: 3 cpu free elsewhere in all, so the
 * room check passes, but no other node has 1.5 cpu free, so every solve refuses.
 * `distinct` gives each node its own rack label, so no two are twins.
 */
function fragmented(distinct: boolean): ClusterSnapshot {
  const g = { ...group('md', { cpu: '4', memory: '16Gi', price: 0.2 }), replicas: 4 };
  const nodes = [0, 1, 2, 3].map((i) => {
    const n = bareNode(`n${i}`, { groupId: g.id, cpu: '4', memory: '16Gi', bound: pods('web', `n${i}`, 2, '1500m'), ...(distinct ? { labels: { rack: `r${i}` } } : {}) });
    return { ...n, machine: { namespace: 'default', name: `m-n${i}`, leaving: false } };
  });
  return snapshot({ groups: [g], nodes });
}

function input(snap: ClusterSnapshot, o: { solves: { n: number }; admissible?: CandidateSetFilter; maxChecks?: number }): SingleNodeInput {
  const settledSince = new Map(snap.nodes.map((n) => [n.name, 0]));
  const { candidates } = underutilizedCandidates({ snapshot: snap, settingsOf, settledSince, now: 60 * S });
  return {
    snapshot: snap, candidates, settledSince, totals: scopeTotals(snap), minScore: 0,
    allowance: new DisruptionAllowance(snap, settingsOf),
    solve: (s) => {
      o.solves.n++;
      return solve(s);
    },
    ...(o.admissible ? { admissible: o.admissible } : {}),
    ...(o.maxChecks !== undefined ? { maxChecks: o.maxChecks } : {}),
  };
}

describe('single-node consolidation', () => {
  it('refuses a twin of a refused candidate without a solve, and says whose refusal it reuses', async () => {
    const solves = { n: 0 };
    const { remove, skipped } = await decideSingleNodeConsolidation(input(fragmented(false), { solves }));
    expect(remove).to.deep.equal([]);
    expect(solves.n).to.equal(1);
    expect(skipped).to.have.length(4);
    const first = skipped[0]!;
    for (const s of skipped.slice(1)) expect(s.why).to.equal(`${first.why} (as for ${first.node}, a node like it)`);
  });

  it('solves for every candidate that is not a twin', async () => {
    const solves = { n: 0 };
    const { remove, skipped } = await decideSingleNodeConsolidation(input(fragmented(true), { solves }));
    expect(remove).to.deep.equal([]);
    expect(solves.n).to.equal(4);
    for (const s of skipped) expect(s.why).to.not.include('a node like it');
  });

  it('counts a twin as a check, so maxChecks bounds the candidates looked at, solved or not', async () => {
    const solves = { n: 0 };
    const { skipped } = await decideSingleNodeConsolidation(input(fragmented(false), { solves, maxChecks: 2 }));
    expect(skipped.map((s) => s.node)).to.have.length(2);
    expect(solves.n).to.equal(1);
  });

  it('does not reuse a refusal by the set filter (PodDisruptionBudgets), which may tell twins apart', async () => {
    const solves = { n: 0 };
    // A filter refusing only n0: its twins are still solved (and refused for room).
    const admissible: CandidateSetFilter = (set) => (set.some((c) => c.node.name === 'n0') ? 'a PodDisruptionBudget allows no disruption' : undefined);
    const { remove, skipped } = await decideSingleNodeConsolidation(input(fragmented(false), { solves, admissible }));
    expect(remove).to.deep.equal([]);
    const byNode = new Map(skipped.map((s) => [s.node, s.why]));
    expect(byNode.get('n0')).to.equal('a PodDisruptionBudget allows no disruption');
    // n1 is solved; n2 and n3 reuse n1's refusal, never n0's.
    expect(solves.n).to.equal(1);
    expect(byNode.get('n1')).to.not.include('a node like it');
    for (const n of ['n2', 'n3']) expect(byNode.get(n)).to.include('as for n1');
  });

  it('still takes a twin that can go when the first is refused only by the filter', async () => {
    const g = { ...group('md', { cpu: '4', memory: '16Gi', price: 0.2 }), replicas: 3 };
    // Three nodes with one 1-cpu pod each: any one can go onto the others.
    const nodes = [0, 1, 2].map((i) => ({
      ...bareNode(`n${i}`, { groupId: g.id, cpu: '4', memory: '16Gi', bound: pods('web', `n${i}`, 1, '1') }),
      machine: { namespace: 'default', name: `m-n${i}`, leaving: false },
    }));
    const snap = snapshot({ groups: [g], nodes });
    const solves = { n: 0 };
    const admissible: CandidateSetFilter = (set) => (set.some((c) => c.node.name === 'n0') ? 'a PodDisruptionBudget allows no disruption' : undefined);
    const { remove } = await decideSingleNodeConsolidation(input(snap, { solves, admissible }));
    expect(remove.map((r) => r.node)).to.deep.equal(['n1']);
  });
});
