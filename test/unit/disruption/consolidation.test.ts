import { expect } from 'chai';
import type { NodePoolDisruption } from '../../../src/api/nodepool.js';
import type { NodeGroup } from '../../../src/cluster/snapshot.js';
import { DEFAULT_DISRUPTION, DisruptionAllowance, type SettingsOf } from '../../../src/disruption/allowance.js';
import { decideConsolidation, type ConsolidationInput } from '../../../src/disruption/consolidation.js';
import { underutilizedCandidates } from '../../../src/disruption/consolidation-candidates.js';
import { BALANCED_MIN_SCORE, consolidationScore, podWeight } from '../../../src/disruption/score.js';
import { PdbAllowance } from '../../../src/disruption/pdb.js';
import { evaluateRemoval } from '../../../src/disruption/what-if.js';
import type { ClusterSnapshot } from '../../../src/cluster/snapshot.js';
import { solve } from '../../../src/packing/solve.js';
import { podDeletionCost } from '../../../src/scheduling/pod-demand.js';
import type { SchedulingPod } from '../../../src/scheduling/scheduling-pod.js';
import { group, node as bareNode, pod, snapshot } from '../packing/snapshot-builders.js';

const S = 1000;

function node(name: string, o: Parameters<typeof bareNode>[1] = {}) {
  const n = bareNode(name, o);
  return o.groupId && !o.inFlight ? { ...n, machine: { namespace: 'default', name: `m-${name}`, leaving: false } } : n;
}

/** `count` pods of owner `owner` with `cpu` each, bound to `nodeName`. */
function pods(owner: string, nodeName: string, count: number, cpu = '1', extra: Partial<SchedulingPod> = {}): SchedulingPod[] {
  return Array.from({ length: count }, (_, i) => ({ ...pod(`${owner}-${nodeName}-${i}`, { owner, cpu, memory: '1Gi' }), nodeName, ...extra }));
}

const underutilized = (d: Partial<NodePoolDisruption> = {}): SettingsOf => () => ({
  ...DEFAULT_DISRUPTION, consolidationPolicy: 'WhenEmptyOrUnderutilized', consolidateAfterMs: 30 * S, budgets: [{ nodes: '100%' }], ...d,
});

function withReplicas(g: NodeGroup, replicas: number, min = 0): NodeGroup {
  return { ...g, replicas, minSize: min };
}

function input(snap: ClusterSnapshot, o: Partial<ConsolidationInput> = {}): ConsolidationInput {
  const settingsOf = o.settingsOf ?? underutilized();
  const settledSince = new Map(snap.nodes.map((n) => [n.name, 0]));
  return {
    snapshot: snap, settingsOf, settledSince, now: 60 * S, allowance: new DisruptionAllowance(snap, settingsOf), solve: (s) => solve(s),
    minScore: BALANCED_MIN_SCORE, ...o,
  };
}

/** n nodes of a 4-cpu group, node i holding counts[i] one-cpu pods. */
function cluster(counts: number[], g = withReplicas(group('md', { cpu: '4', memory: '16Gi', price: 0.2 }), counts.length)) {
  const nodes = counts.map((c, i) => node(`n${i}`, { groupId: g.id, cpu: '4', memory: '16Gi', bound: pods('web', `n${i}`, c) }));
  return { g, snap: snapshot({ groups: [g], nodes }) };
}

describe('consolidation decisions', () => {
  describe('score', () => {
    it('weighs a pod by its priority and deletion cost, within [0.1, 10]', () => {
      expect(podWeight({ priority: 0 })).to.equal(1);
      expect(podWeight({ priority: 1e9 })).to.equal(4);
      expect(podWeight({ priority: 2e9 })).to.equal(7);
      expect(podWeight({ priority: -1e9 })).to.be.closeTo(0.1, 1e-9);
      expect(podWeight({ priority: 0, deletionCost: 999 })).to.be.closeTo(2, 1e-9);
      expect(podWeight({ priority: 0, deletionCost: -999 })).to.be.closeTo(0.1, 1e-9);
      expect(podWeight({ priority: 2e9, deletionCost: 2 ** 31 - 1 })).to.equal(10);
    });

    it('parses pod-deletion-cost only as an int32', () => {
      expect(podDeletionCost('100')).to.equal(100);
      expect(podDeletionCost('-5')).to.equal(-5);
      expect(podDeletionCost('2147483648')).to.equal(undefined);
      expect(podDeletionCost('1.5')).to.equal(undefined);
      expect(podDeletionCost('abc')).to.equal(undefined);
      expect(podDeletionCost(undefined)).to.equal(undefined);
    });

    it('is the share of cost saved over the share of disruption caused', () => {
      // Saves 10% of the cost, moves 10% of the pods: 1.
      expect(consolidationScore(1, 10, { cost: 10, disruption: 100 })).to.be.closeTo(1, 1e-9);
      // Saves 4% while moving 10%: under the Balanced bar.
      expect(consolidationScore(0.4, 10, { cost: 10, disruption: 100 })).to.be.below(BALANCED_MIN_SCORE);
      expect(consolidationScore(0, 10, { cost: 10, disruption: 100 })).to.equal(0);
      expect(consolidationScore(1, 0, { cost: 10, disruption: 100 })).to.equal(Infinity);
    });
  });

  describe('multi-node delete', () => {
    it('consolidates two half-empty nodes to one', async () => {
      const { snap } = cluster([2, 2]);
      const { remove } = await decideConsolidation(input(snap));
      expect(remove).to.have.length(1);
      expect(remove[0]!.reason).to.equal('Underutilized');
      expect(remove[0]!.replacement).to.equal(undefined);
      expect(remove[0]!.podUids).to.have.length(2);
    });

    it('chooses the whole set with the solver: three nodes at a quarter go in one action onto the fourth', async () => {
      const { snap } = cluster([1, 1, 1, 1]);
      const { remove } = await decideConsolidation(input(snap));
      expect(remove.map((r) => r.node)).to.have.length(3);
      // Every moved pod fits on the node that stays.
      const stays = snap.nodes.filter((n) => !remove.some((r) => r.node === n.name));
      expect(stays).to.have.length(1);
    });

    it('leaves a full cluster alone', async () => {
      const { snap } = cluster([4, 3, 4]);
      const { remove } = await decideConsolidation(input(snap));
      expect(remove).to.deep.equal([]);
    });

    it('takes the nodes whose pods are cheapest to move first (priority, deletion cost)', async () => {
      const g = withReplicas(group('md', { cpu: '4', memory: '16Gi', price: 0.2 }), 3);
      const snap = snapshot({
        groups: [g],
        nodes: [
          node('vip', { groupId: g.id, bound: pods('db', 'vip', 1, '1', { priority: 1e9 }) }),
          node('kept', { groupId: g.id, bound: pods('web', 'kept', 1, '1', { deletionCost: 1_000_000 }) }),
          node('plain', { groupId: g.id, bound: pods('batch', 'plain', 1) }),
        ],
      });
      const { candidates } = underutilizedCandidates(input(snap));
      expect(candidates.map((c) => c.node.name)).to.deep.equal(['plain', 'kept', 'vip']);
      const { remove } = await decideConsolidation(input(snap));
      expect(remove.map((r) => r.node)).to.include('plain');
      expect(remove.map((r) => r.node)).to.not.include('vip');
    });
  });

  describe('multi-node replace', () => {
    const big = group('big', { cpu: '8', memory: '32Gi', price: 0.8 });
    const medium = group('medium', { cpu: '4', memory: '16Gi', price: 0.2 });
    function fragmented() {
      const g = withReplicas(big, 4);
      return snapshot({
        groups: [g, medium],
        nodes: [
          node('f0', { groupId: g.id, cpu: '8', memory: '32Gi', bound: pods('db', 'f0', 8) }),
          node('f1', { groupId: g.id, cpu: '8', memory: '32Gi', bound: pods('db', 'f1', 8) }),
          node('b0', { groupId: g.id, cpu: '8', memory: '32Gi', bound: pods('web', 'b0', 2) }),
          node('b1', { groupId: g.id, cpu: '8', memory: '32Gi', bound: pods('api', 'b1', 2) }),
        ],
      });
    }
    const keepFull = new Set(['f0', 'f1']);

    it('replaces a fragmented set with one cheaper node of another group', async () => {
      const { remove } = await decideConsolidation(input(fragmented(), { multiNodeReplace: true, keep: keepFull }));
      expect(remove.map((r) => r.node).sort()).to.deep.equal(['b0', 'b1']);
      expect(remove.every((r) => r.replacement?.group.id === medium.id)).to.equal(true);
    });

    it('only deletes when replace is off', async () => {
      const { remove } = await decideConsolidation(input(fragmented(), { multiNodeReplace: false, keep: keepFull }));
      expect(remove).to.have.length(1);
      expect(remove[0]!.replacement).to.equal(undefined);
    });

    it('deletes one of two half-empty nodes rather than replacing both with a twin (the same-group rule)', async () => {
      const { snap } = cluster([2, 2]);
      const { remove } = await decideConsolidation(input(snap, { multiNodeReplace: true }));
      expect(remove).to.have.length(1);
      expect(remove[0]!.replacement).to.equal(undefined);
      expect(remove[0]!.podUids).to.have.length(2);
    });
  });

  describe('single-node replace', () => {
    const big = withReplicas(group('big', { cpu: '16', memory: '64Gi', price: 0.8 }), 2);
    const small = group('small', { cpu: '2', memory: '8Gi', price: 0.1 });
    function bigCluster(onFirst: number, onSecond: number) {
      return snapshot({
        groups: [big, small],
        nodes: [
          node('b0', { groupId: big.id, cpu: '16', memory: '64Gi', bound: pods('web', 'b0', onFirst) }),
          node('b1', { groupId: big.id, cpu: '16', memory: '64Gi', bound: pods('api', 'b1', onSecond) }),
        ],
      });
    }

    it('replaces an expensive node with one cheaper node that holds its pods', async () => {
      const snap = bigCluster(16, 1);
      const { remove } = await decideConsolidation(input(snap));
      expect(remove.map((r) => r.node)).to.deep.equal(['b1']);
      expect(remove[0]!.replacement?.group.id).to.equal(small.id);
      expect(remove[0]!.replacement?.pricePerHour).to.be.closeTo(0.1, 1e-9);
      expect(remove[0]!.score).to.be.above(BALANCED_MIN_SCORE);
    });

    it('weighs the saving against the disruption: a marginal replace passes with no bar, not with the Balanced one', async () => {
      const pricey = withReplicas(group('pricey', { cpu: '4', memory: '16Gi', price: 1 }), 3);
      const cheaper = group('cheaper', { cpu: '4', memory: '16Gi', price: 0.9 });
      const snap = snapshot({
        groups: [pricey, cheaper],
        nodes: [0, 1, 2].map((i) => node(`p${i}`, { groupId: pricey.id, bound: pods('web', `p${i}`, 3) })),
      });
      expect((await decideConsolidation(input(snap))).remove).to.deep.equal([]);
      const any = await decideConsolidation(input(snap, { minScore: 0 }));
      expect(any.remove).to.have.length(1);
      expect(any.remove[0]!.replacement?.group.id).to.equal(cheaper.id);
    });
  });

  describe('gates', () => {
    it('does nothing under WhenEmpty, before consolidateAfter, or while real pods are pending', async () => {
      const { snap } = cluster([2, 2]);
      expect((await decideConsolidation(input(snap, { settingsOf: underutilized({ consolidationPolicy: 'WhenEmpty' }) }))).remove).to.deep.equal([]);
      expect((await decideConsolidation(input(snap, { now: 29 * S }))).remove).to.deep.equal([]);
      const pending = { ...snap, pendingPods: [pod('new', { owner: 'x' })] };
      expect((await decideConsolidation(input(pending))).remove).to.deep.equal([]);
    });

    it('respects budgets, min size and kept nodes', async () => {
      const { snap } = cluster([1, 1, 1, 1]);
      expect((await decideConsolidation(input(snap, { settingsOf: underutilized({ budgets: [{ nodes: '0' }] }) }))).remove).to.deep.equal([]);
      const one = await decideConsolidation(input(snap, { settingsOf: underutilized({ budgets: [{ nodes: '1' }] }) }));
      expect(one.remove).to.have.length(1);
      const { snap: atMin } = cluster([1, 1, 1, 1], withReplicas(group('md', { cpu: '4', memory: '16Gi', price: 0.2 }), 4, 3));
      expect((await decideConsolidation(input(atMin))).remove).to.have.length(1);
      const kept = await decideConsolidation(input(snap, { keep: new Set(['n0', 'n1', 'n2']) }));
      expect(kept.remove.map((r) => r.node)).to.deep.equal(['n3']);
    });

    it("honours a group's scaledownutilizationthreshold (Cluster Autoscaler): a node at or above it is no candidate", async () => {
      const { snap } = cluster([2, 2]); // each node: 2 of 4 cpu requested (50%), 2 of 16 Gi
      const at = (t: number): SettingsOf => () => ({ ...underutilized()(snap.groups[0]!), utilizationThreshold: t });
      const held = await decideConsolidation(input(snap, { settingsOf: at(0.5) }));
      expect(held.remove).to.deep.equal([]);
      expect(held.skipped.map((k) => k.node).sort()).to.deep.equal(['n0', 'n1']);
      expect(held.skipped[0]!.why).to.match(/uses 50% of its allocatable, not below .* threshold \(50%\)/);
      expect((await decideConsolidation(input(snap, { settingsOf: at(0.6) }))).remove).to.have.length(1);
    });

    it('never moves a pod without a controller', async () => {
      const g = withReplicas(group('md', { cpu: '4', memory: '16Gi', price: 0.2 }), 2);
      const snap = snapshot({
        groups: [g],
        nodes: [node('bare', { groupId: g.id, bound: [pod('lonely', { cpu: '1' })] }), node('other', { groupId: g.id, bound: pods('web', 'other', 1) })],
      });
      const { remove, skipped } = await decideConsolidation(input(snap));
      expect(remove.map((r) => r.node)).to.deep.equal(['other']);
      expect(skipped).to.deep.include({ node: 'bare', why: 'has a pod without a controller', reason: 'Underutilized', blockedBy: 'pod-without-controller' });
    });

    it('leaves a node running a Job pod to finish, unless told otherwise', async () => {
      const { snap } = cluster([1, 1]);
      const withJob = { ...snap, nodes: snap.nodes.map((n) => (n.name === 'n0' ? { ...n, pods: n.pods.map((p) => ({ ...p, owner: 'Job/default/nightly' })) } : n)) };
      const { remove, skipped } = await decideConsolidation(input(withJob));
      expect(remove.map((r) => r.node)).to.deep.equal(['n1']);
      expect(skipped).to.deep.include({ node: 'n0', why: 'runs a Job pod, which would restart from scratch', reason: 'Underutilized' });
      const karpenter = await decideConsolidation(input(withJob, { keepRunToCompletion: false }));
      expect(karpenter.remove).to.have.length(1);
    });

    it('keeps capacity held for predicted pods (CapacityBuffers, bookings, forecasts)', async () => {
      const { snap } = cluster([1, 1]);
      // Predicted demand that needs the room the delete would use up.
      const held = Array.from({ length: 4 }, (_, i) => ({ ...pod(`buffer-${i}`, { owner: 'buffer', cpu: '1' }), predicted: true }));
      const { remove } = await decideConsolidation(input({ ...snap, pendingPods: held }));
      expect(remove).to.deep.equal([]);
      // With less held, one node can still go.
      const { remove: some } = await decideConsolidation(input({ ...snap, pendingPods: held.slice(0, 2) }));
      expect(some).to.have.length(1);
    });

    it('respects PodDisruptionBudgets: a set is taken only while the PDB allows all its evictions', async () => {
      const { snap } = cluster([1, 1, 1, 1]);
      const pdb = (allowed: number) => new PdbAllowance([{
        metadata: { name: 'web', namespace: 'default' }, spec: { selector: { matchLabels: {} } }, status: { disruptionsAllowed: allowed } as never,
      }]);
      const settingsOf = underutilized();
      const none = await decideConsolidation(input(snap, { allowance: new DisruptionAllowance(snap, settingsOf, new Set(), new Set(), undefined, pdb(0)) }));
      expect(none.remove).to.deep.equal([]);
      const two = await decideConsolidation(input(snap, { allowance: new DisruptionAllowance(snap, settingsOf, new Set(), new Set(), undefined, pdb(2)) }));
      expect(two.remove).to.have.length(2);
    });

    it('takes only sets the set filter admits (the seam for PodDisruptionBudgets)', async () => {
      const { snap } = cluster([1, 1, 1, 1]);
      const admissible = (set: readonly { node: { name: string } }[]) => (set.some((c) => c.node.name === 'n0') ? 'PDB web allows no disruption' : undefined);
      const { remove } = await decideConsolidation(input(snap, { admissible }));
      expect(remove.map((r) => r.node)).to.not.include('n0');
      expect(remove.length).to.be.greaterThan(0);
      const none = await decideConsolidation(input(snap, { admissible: () => 'no' }));
      expect(none.remove).to.deep.equal([]);
    });
  });

  describe('what-if', () => {
    it('refuses when pods would need an in-flight node, or more than one new node', async () => {
      const g = withReplicas(group('md', { cpu: '4', memory: '16Gi', price: 0.2 }), 3);
      const snap = snapshot({
        groups: [g],
        nodes: [node('full', { groupId: g.id, bound: pods('web', 'full', 3) }), node('f', { groupId: g.id, inFlight: true })],
      });
      const what = await evaluateRemoval(snap, new Set(['full']), (s) => solve(s));
      expect(what.kind).to.equal('refused');
      const two = cluster([4, 4]).snap;
      const w2 = await evaluateRemoval(two, new Set(['n0', 'n1']), (s) => solve(s));
      expect(w2).to.deep.include({ kind: 'refused' });
    });

    it('refuses without a solve when predicted demand fills the room the moved pods would need', async () => {
      const g = withReplicas(group('md', { cpu: '4', memory: '16Gi', price: 0.2 }), 2);
      const predicted = Array.from({ length: 3 }, (_, i) => ({ ...pod(`spare-${i}`, { owner: 'web', cpu: '1', memory: '1Gi' }), predicted: true }));
      const snap = snapshot({
        groups: [g],
        nodes: [node('a', { groupId: g.id, bound: pods('web', 'a', 1) }), node('b', { groupId: g.id, bound: pods('web', 'b', 1) })],
        pendingPods: predicted,
      });
      const baseline = solve(snap);
      let solves = 0;
      const counted = (s: ClusterSnapshot) => { solves++; return solve(s); };
      // b has 3 cpu free, all three taken by the spare: a's pod fits only with a new node, which costs as much as a.
      const what = await evaluateRemoval(snap, new Set(['a']), counted, baseline, g.pricePerHour);
      expect(what).to.deep.equal({ kind: 'refused', why: 'predicted demand would no longer fit' });
      expect(solves).to.equal(0);
      // Without the spare, the same removal is solved and accepted.
      const bare = { ...snap, pendingPods: [] };
      expect(await evaluateRemoval(bare, new Set(['a']), counted, undefined, g.pricePerHour)).to.deep.equal({ kind: 'delete' });
      expect(solves).to.equal(1);
    });

    it('the room bound never refuses a what-if the solve would accept (random clusters with predicted pods)', async () => {
      let seed = 7;
      const rand = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
      let accepted = 0;
      for (let t = 0; t < 60; t++) {
        const groups = [withReplicas(group('s', { cpu: '2', memory: '8Gi', price: 0.1 }), 3), withReplicas(group('l', { cpu: '8', memory: '32Gi', price: 0.35 }), 3)];
        const nodes = Array.from({ length: 3 + Math.floor(rand() * 4) }, (_, i) => {
          const gr = groups[i % 2]!;
          const cpu = i % 2 === 0 ? 2 : 8;
          return node(`n${i}`, { groupId: gr.id, cpu: String(cpu), memory: `${cpu * 4}Gi`, bound: pods('web', `n${i}`, Math.floor(rand() * cpu), '1') });
        });
        const pendingPods = Array.from({ length: Math.floor(rand() * 8) }, (_, i) => ({ ...pod(`p${t}-${i}`, { owner: 'web', cpu: `${250 * (1 + Math.floor(rand() * 6))}m`, memory: '1Gi' }), predicted: true }));
        const snap = snapshot({ groups, nodes, pendingPods });
        const baseline = pendingPods.length > 0 ? solve(snap) : undefined;
        for (const n of nodes) {
          const price = groups.find((gr) => gr.id === n.groupId)!.pricePerHour;
          const bounded = await evaluateRemoval(snap, new Set([n.name]), (s) => solve(s), baseline, price);
          const unbounded = await evaluateRemoval(snap, new Set([n.name]), (s) => solve(s), baseline);
          if (unbounded.kind === 'delete' || (unbounded.kind === 'replace' && unbounded.pricePerHour < price - 1e-9)) {
            accepted++;
            expect(bounded.kind, `${t} ${n.name}`).to.equal(unbounded.kind);
          }
        }
      }
      expect(accepted).to.be.greaterThan(10);
    });
  });
});
