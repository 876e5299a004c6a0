import { expect } from 'chai';
import type { NodePoolDisruption } from '../../../src/api/nodepool.js';
import type { NodeGroup } from '../../../src/cluster/snapshot.js';
import { allowedByBudgets, budgetNodes, DEFAULT_DISRUPTION, DisruptionAllowance, type SettingsOf } from '../../../src/disruption/allowance.js';
import { decideEmptiness } from '../../../src/disruption/emptiness.js';
import { isEmptyNode } from '../../../src/disruption/pods.js';
import { cannotMovePods, decideExpiry } from '../../../src/disruption/expiry.js';
import { solve } from '../../../src/packing/solve.js';
import type { SchedulingPod } from '../../../src/scheduling/scheduling-pod.js';
import { group, node as bareNode, pod, snapshot } from '../packing/snapshot-builders.js';

const S = 1000;

/** A snapshot node; an existing node of a group gets a Machine of the same name (what makes it removable). */
function node(name: string, o: Parameters<typeof bareNode>[1] = {}) {
  const n = bareNode(name, o);
  return o.groupId && !o.inFlight ? { ...n, machine: { namespace: 'default', name: `m-${name}`, leaving: false } } : n;
}

/** A DaemonSet pod (or a mirror pod, owner Node) bound to `nodeName`. */
function dsPod(nodeName: string, ownerKind = 'DaemonSet'): SchedulingPod {
  return { ...pod(`ds-${nodeName}`, { cpu: '100m', memory: '64Mi' }), owner: `${ownerKind}/kube-system/agent`, nodeName };
}

function withMin(g: NodeGroup, min: number, replicas: number, nodePool?: string): NodeGroup {
  return { ...g, minSize: min, replicas, ...(nodePool ? { nodePool } : {}) };
}

const settings = (d: Partial<NodePoolDisruption> = {}): SettingsOf => () => ({ ...DEFAULT_DISRUPTION, ...d });

/** n nodes of group `g`, all empty but for a DaemonSet pod, empty since `since[i]`. */
function emptyCluster(g: NodeGroup, count: number) {
  const nodes = Array.from({ length: count }, (_, i) => node(`${g.name}-${i}`, { groupId: g.id, bound: [dsPod(`${g.name}-${i}`)] }));
  return { snap: snapshot({ groups: [g], nodes }), names: nodes.map((n) => n.name) };
}

function decide(snap: ReturnType<typeof snapshot>, emptySince: Map<string, number>, now: number, s: SettingsOf = settings(), keep?: Set<string>) {
  return decideEmptiness({ snapshot: snap, emptySince, now, settingsOf: s, allowance: new DisruptionAllowance(snap, s), ...(keep ? { keep } : {}) });
}

describe('disruption decisions', () => {
  describe('budgets', () => {
    it('percentages round up, counts are absolute, the smallest applicable budget wins', () => {
      expect(budgetNodes({ nodes: '10%' }, 3)).to.equal(1);
      expect(budgetNodes({ nodes: '10%' }, 25)).to.equal(3);
      expect(budgetNodes({ nodes: '0%' }, 25)).to.equal(0);
      expect(budgetNodes({ nodes: '2' }, 25)).to.equal(2);
      expect(allowedByBudgets([{ nodes: '50%' }, { nodes: '3' }], 'Empty', 20)).to.equal(3);
      // A budget for other reasons does not apply.
      expect(allowedByBudgets([{ nodes: '0', reasons: ['Expired'] }, { nodes: '5' }], 'Empty', 20)).to.equal(5);
      expect(allowedByBudgets([{ nodes: '0', reasons: ['Expired'] }, { nodes: '5' }], 'Expired', 20)).to.equal(0);
    });
  });

  describe('emptiness', () => {
    it('counts DaemonSet and mirror pods as empty, any other pod as not', () => {
      expect(isEmptyNode(node('a', { bound: [dsPod('a')] }))).to.equal(true);
      expect(isEmptyNode(node('a', { bound: [dsPod('a', 'Node')] }))).to.equal(true);
      expect(isEmptyNode(node('a', { bound: [dsPod('a'), pod('web', { owner: 'web' })] }))).to.equal(false);
      expect(isEmptyNode(node('a', { bound: [pod('bare')] }))).to.equal(false);
    });

    it('removes a node only after consolidateAfter, and never one with a real pod', () => {
      const g = withMin(group('md'), 0, 2);
      const snap = snapshot({
        groups: [g],
        nodes: [
          node('empty', { groupId: g.id, bound: [dsPod('empty')] }),
          node('busy', { groupId: g.id, bound: [dsPod('busy'), pod('web', { owner: 'web' })] }),
        ],
      });
      // Even if the tracker (wrongly) says "busy" is empty, its pod keeps it.
      const since = new Map([['empty', 0], ['busy', 0]]);
      const s = settings({ consolidateAfterMs: 30 * S, budgets: [{ nodes: '100%' }] });
      expect(decide(snap, since, 29 * S, s).remove).to.deep.equal([]);
      expect(decide(snap, since, 30 * S, s).remove.map((r) => r.node)).to.deep.equal(['empty']);
      // consolidateAfter: Never
      expect(decide(snap, since, 3600 * S, settings({ consolidateAfterMs: null })).remove).to.deep.equal([]);
      // A node not (yet) seen empty is not removed.
      expect(decide(snap, new Map(), 3600 * S, s).remove).to.deep.equal([]);
    });

    it('never takes a group below min size; picks oldest-empty first, then by name', () => {
      const g = withMin(group('md'), 2, 5);
      const { snap } = emptyCluster(g, 5);
      const since = new Map([['md-0', 20 * S], ['md-1', 10 * S], ['md-2', 10 * S], ['md-3', 5 * S], ['md-4', 30 * S]]);
      const s = settings({ consolidateAfterMs: 0, budgets: [{ nodes: '100%' }] });
      const d = decide(snap, since, 100 * S, s);
      expect(d.remove.map((r) => r.node)).to.deep.equal(['md-3', 'md-1', 'md-2']);
      expect(d.skipped.map((x) => x.node)).to.deep.equal(['md-0', 'md-4']);
      expect(d.skipped[0]!.why).to.match(/min size 2/);
      // Deterministic: same input, same answer.
      expect(decide(snap, since, 100 * S, s)).to.deep.equal(d);
    });

    it('respects the pool budget across groups, counting nodes already being deleted', () => {
      const a = withMin(group('a'), 0, 5, 'pool');
      const b = withMin(group('b'), 0, 5, 'pool');
      const nodes = [a, b].flatMap((g) => Array.from({ length: 5 }, (_, i) => node(`${g.name}-${i}`, { groupId: g.id, bound: [dsPod(`${g.name}-${i}`)] })));
      const snap = snapshot({ groups: [a, b], nodes });
      const since = new Map(nodes.map((n, i) => [n.name, i]));
      // 10 nodes, 20% -> 2 at once.
      const s = settings({ consolidateAfterMs: 0, budgets: [{ nodes: '20%' }] });
      expect(decide(snap, since, 100 * S, s).remove.map((r) => r.node)).to.deep.equal(['a-0', 'a-1']);
      // One node already cordoned / being deleted uses up one of the two.
      const draining = snapshot({ groups: [a, b], nodes: nodes.map((n) => (n.name === 'b-4' ? { ...n, unschedulable: true } : n)) });
      expect(decide(draining, since, 100 * S, s).remove.map((r) => r.node)).to.deep.equal(['a-0']);
      // Without a pool each group has its own budget: a lone 10% of 5 -> 1 each.
      const own = snapshot({ groups: [{ ...a, nodePool: undefined }, { ...b, nodePool: undefined }] as NodeGroup[], nodes });
      expect(decide(own, since, 100 * S, settings({ consolidateAfterMs: 0, budgets: [{ nodes: '10%' }] })).remove.map((r) => r.node)).to.deep.equal(['a-0', 'b-0']);
      // The default budgets let 10 empty nodes of each scope go at once: every one of the ten (issue 28).
      expect(decide(own, since, 100 * S, settings({ consolidateAfterMs: 0 })).remove.map((r) => r.node)).to.deep.equal(nodes.map((n) => n.name));
      // ... 10, not more: 12 empty nodes in one pool, 2 stay for the next pass.
      const big = withMin(group('big'), 0, 12, 'pool');
      const many = Array.from({ length: 12 }, (_, i) => node(`big-${i}`, { groupId: big.id, bound: [dsPod(`big-${i}`)] }));
      const d12 = decide(snapshot({ groups: [big], nodes: many }), new Map(many.map((n, i) => [n.name, i])), 100 * S, settings({ consolidateAfterMs: 0 }));
      expect(d12.remove).to.have.length(10);
      expect(d12.skipped.map((x) => [x.node, x.blockedBy])).to.deep.equal([['big-10', 'budget'], ['big-11', 'budget']]);
      // The disruptions that move pods keep Karpenter's 10%: the Empty budget does not apply to them.
      expect(allowedByBudgets(DEFAULT_DISRUPTION.budgets, 'Underutilized', 12)).to.equal(2);
      expect(allowedByBudgets(DEFAULT_DISRUPTION.budgets, 'Empty', 12)).to.equal(10);
    });

    it('skips in-flight, unschedulable, unmanaged and kept nodes', () => {
      const g = withMin(group('md'), 0, 5);
      const snap = snapshot({
        groups: [g],
        nodes: [
          node('flight', { groupId: g.id, inFlight: true }),
          node('cordoned', { groupId: g.id, unschedulable: true }),
          node('unmanaged', {}),
          node('kept', { groupId: g.id }),
          node('ok', { groupId: g.id }),
        ],
      });
      const since = new Map(['flight', 'cordoned', 'unmanaged', 'kept', 'ok'].map((n) => [n, 0]));
      const s = settings({ consolidateAfterMs: 0, budgets: [{ nodes: '100%' }] });
      expect(decide(snap, since, S, s, new Set(['kept'])).remove.map((r) => r.node)).to.deep.equal(['ok']);
    });
  });

  describe('expiry (checked with the real solver)', () => {
    const g = withMin(group('md', { cpu: '4', memory: '16Gi' }), 0, 3);
    const created = new Map([['old', 0], ['mid', 50 * S], ['new', 100 * S]]);
    const s = settings({ expireAfterMs: 60 * S, budgets: [{ nodes: '100%' }] });
    const cluster = (oldPods: SchedulingPod[], midPods: SchedulingPod[] = []) => snapshot({
      groups: [g],
      nodes: [
        node('old', { groupId: g.id, bound: oldPods }),
        node('mid', { groupId: g.id, bound: midPods }),
        node('new', { groupId: g.id, bound: [] }),
      ],
    });
    const expire = (snap: ReturnType<typeof snapshot>, now = 120 * S) => decideExpiry({
      snapshot: snap, createdAt: created, now, settingsOf: s, allowance: new DisruptionAllowance(snap, s), solve: (x) => solve(x), max: 1,
    });

    it('removes the oldest expired node when its pods fit on the other existing nodes', async () => {
      const snap = cluster([pod('web-0', { owner: 'web', cpu: '2' }), pod('web-1', { owner: 'web', cpu: '2' })]);
      expect(await cannotMovePods(snap, 'old', (x) => solve(x))).to.equal(undefined);
      const d = await expire(snap);
      expect(d.remove.map((r) => [r.node, r.reason])).to.deep.equal([['old', 'Expired']]);
      // Not yet expired at 59 s.
      expect((await expire(snap, 59 * S)).remove).to.deep.equal([]);
    });

    it('keeps an expired node whose pods would need a new node', async () => {
      // 3 cpu on "old", 3 cpu on "mid", nothing on "new": removing "old" fits its pod on "new"; but
      // make "new" an in-flight replica: in-flight capacity does not count.
      const big = [pod('big-0', { owner: 'big', cpu: '3' })];
      const snap = snapshot({
        groups: [g],
        nodes: [
          node('old', { groupId: g.id, bound: big }),
          node('mid', { groupId: g.id, bound: [pod('big-1', { owner: 'big', cpu: '3' })] }),
          node('new', { groupId: g.id, inFlight: true }),
        ],
      });
      expect(await cannotMovePods(snap, 'old', (x) => solve(x))).to.match(/new|in-flight/);
      const d = await expire(snap);
      expect(d.remove).to.deep.equal([]);
      expect(d.skipped.map((x) => x.node)).to.include('old');
    });

    it('never expires a node with a bare pod, nor while real pods are pending', async () => {
      expect((await expire(cluster([pod('bare', { cpu: '1' })]))).remove.map((r) => r.node)).to.not.include('old');
      const pending = { ...cluster([]), pendingPods: [pod('waiting', { owner: 'x' })] };
      expect((await expire(pending)).remove).to.deep.equal([]);
    });
  });
});
