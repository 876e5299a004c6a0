import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import { parse as parseYaml } from 'yaml';
import { DISRUPTION_TAINT_KEY } from '../../../src/api/disruption-taint.js';
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import type { UnstructuredObject } from '../../../src/api/unstructured-object.js';
import type { BatchScaleResult, CapiActuator, MachineRef, MachineRemoval, NodeGroupRef, ScaleResult, StandaloneMachineRequest } from '../../../src/capi/actuator.js';
import { emptyClusterObjects, type ClusterObjects } from '../../../src/cluster/objects.js';
import type { ClusterStateSource } from '../../../src/cluster/state.js';
import { DO_NOT_DISRUPT_ANNOTATION, Disruptor, HEADROOM_DO_NOT_DISRUPT_ANNOTATION, SAFE_TO_EVICT_ANNOTATION, type DisruptorOptions } from '../../../src/disruption/disruptor.js';
import type { DisruptionNodePort, FreshNode } from '../../../src/disruption/orchestration/node-port.js';
import { solve } from '../../../src/packing/solve.js';
import { machine, machineDeployment, machinePool, pendingPod } from '../../integration/controller-objects.js';
import { ManualClock } from '../provisioning/manual-clock.js';
import { NODEPOOL_HASH_ANNOTATION, nodePoolTemplateHash } from '../../../src/api/nodepool-hash.js';
import { parseNodePool } from '../../../src/api/nodepool.js';
import type { Log, LogSubject } from '../../../src/api/log.js';
import type { SchedulingPod } from '../../../src/scheduling/scheduling-pod.js';
import { pod as schedulingPod } from '../packing/snapshot-builders.js';

/**
 * The Disruptor's shell on a fixed, in-memory state (as a stale informer cache would
 * show it: our writes are not reflected), with a recording actuator.
 */

class StaticState implements ClusterStateSource {
  constructor(public objs: ClusterObjects) {}
  objects() { return this.objs; }
  synced() { return true; }
  onChange() { return () => {}; }
}

/** The node port over the same objects: taints are recorded (the state does not change), reads come from the objects. */
class StaticNodes implements DisruptionNodePort {
  tainted = new Set<string>();
  log: string[] = [];
  /** Pods to show bound on a node in fresh reads (bound "after the decision"). */
  boundLater = new Map<string, V1Pod[]>();
  /** Set by a test to drain through "the Eviction API". */
  evictPod?: DisruptionNodePort['evictPod'];
  constructor(private readonly state: StaticState) {}
  async taintNode(name: string) { this.tainted.add(name); this.log.push(`taint ${name}`); }
  async untaintNode(name: string) { this.tainted.delete(name); this.log.push(`untaint ${name}`); }
  async readNode(name: string): Promise<FreshNode | undefined> {
    const node = this.state.objs.nodes.find((n) => n.metadata?.name === name);
    if (!node) return undefined;
    return { node, pods: [...this.state.objs.pods.filter((p) => p.spec?.nodeName === name), ...(this.boundLater.get(name) ?? [])] };
  }
}

class RecordingActuator implements CapiActuator {
  deletes: Array<{ group: string; machine: string; node?: string; reason: string }> = [];
  constructor(private written = true) {}
  async getReplicas(): Promise<number> { return 0; }
  async scaleTo(): Promise<ScaleResult> { throw new Error('unused'); }
  async deleteMachine(g: NodeGroupRef, m: MachineRef, reason: string): Promise<ScaleResult> {
    this.deletes.push({ group: g.name, machine: m.name, ...(m.nodeName ? { node: m.nodeName } : {}), reason });
    return { replicas: 0, written: this.written };
  }
  /** Each batch (one replicas write), and its Machines in `deletes` as single ones were. */
  batches: Array<{ group: string; machines: string[] }> = [];
  async deleteMachines(g: NodeGroupRef, ms: readonly MachineRemoval[]): Promise<BatchScaleResult> {
    this.batches.push({ group: g.name, machines: ms.map((m) => m.machine.name) });
    for (const m of ms) this.deletes.push({ group: g.name, machine: m.machine.name, ...(m.machine.nodeName ? { node: m.machine.nodeName } : {}), reason: m.reason });
    return { replicas: 0, written: this.written, removed: this.written ? ms.map((m) => m.machine.name) : [] };
  }
  async createMachine(_r: StandaloneMachineRequest): Promise<string> { throw new Error('unused'); }
  async deleteStandaloneMachine(_m: MachineRef, _reason: string): Promise<void> { throw new Error('unused'); }
}

const NS = 'default';

/** Lets pending promise chains run until `cond` holds (the pass reaching its wait). */
async function until(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 1000 && !cond(); i++) await new Promise((r) => setImmediate(r));
  expect(cond()).to.equal(true);
}

function node(name: string, annotations: Record<string, string> = {}): V1Node {
  return {
    apiVersion: 'v1', kind: 'Node',
    metadata: { name, labels: { 'kubernetes.io/hostname': name }, annotations, creationTimestamp: new Date(0) },
    spec: {},
    status: { allocatable: { cpu: '4', memory: '16Gi', pods: '110' }, conditions: [{ type: 'Ready', status: 'True' }] },
  };
}

function bound(name: string, nodeName: string, ownerKind: string, cpu = '1'): V1Pod {
  return {
    apiVersion: 'v1', kind: 'Pod',
    metadata: { name, namespace: NS, uid: `uid-${name}`, ownerReferences: [{ apiVersion: 'apps/v1', kind: ownerKind, name: 'o', uid: 'o', controller: true }] },
    spec: { nodeName, containers: [{ name: 'c', image: 'x', resources: { requests: { cpu, memory: '64Mi' } } }] },
    status: { phase: 'Running' },
  };
}

/** md with 3 nodes: n-0 runs a ReplicaSet pod, n-1 and n-2 only a DaemonSet pod each. */
function cluster(o: { nodeAnnotations?: Record<string, Record<string, string>>; pending?: V1Pod[]; pool?: Record<string, unknown> } = {}): ClusterObjects {
  const md = machineDeployment({ namespace: NS, name: 'md', replicas: 3, min: 0, max: 5, cpu: '4', memory: '16Gi', labels: { pool: 'p' } });
  md.metadata!.uid = 'uid-md';
  const machines = [0, 1, 2].map((i) => ({
    ...machine(NS, `m-${i}`, { kind: 'MachineDeployment', name: 'md', uid: 'uid-md' }),
    status: { nodeRef: { apiVersion: 'v1', kind: 'Node', name: `n-${i}` } },
  })) as UnstructuredObject[];
  const nodes = [0, 1, 2].map((i) => node(`n-${i}`, o.nodeAnnotations?.[`n-${i}`]));
  const pods = [bound('web', 'n-0', 'ReplicaSet'), ...[0, 1, 2].map((i) => bound(`ds-${i}`, `n-${i}`, 'DaemonSet', '100m')), ...(o.pending ?? [])];
  const nodePools: UnstructuredObject[] = o.pool ? [{
    apiVersion: 'headroom.dev/v1alpha1', kind: 'NodePool', metadata: { name: 'p' },
    spec: { nodeGroupSelector: { matchLabels: { pool: 'p' } }, disruption: o.pool },
  }] : [];
  return { ...emptyClusterObjects(), nodeGroups: [md], machines, nodes, pods, nodePools };
}

/** A NodePool with Karpenter's lone 10% budget (the default before issue 28): one node of the three at a time, for every reason. */
const ONE_AT_A_TIME = { pool: { budgets: [{ nodes: '10%' }] } };

function disruptor(objs: ClusterObjects, actuator = new RecordingActuator(), options: DisruptorOptions = {}) {
  const clock = new ManualClock();
  const state = new StaticState(objs);
  const nodes = new StaticNodes(state);
  const lines: Array<{ message: string; about?: LogSubject }> = [];
  const log: Log = (message, about) => lines.push({ message, ...(about ? { about } : {}) });
  const d = new Disruptor({ state, actuator, nodes, clock, solve: (s) => solve(s), log }, { maxExpiredPerPass: 0, settleMs: 0, ...options });
  d.observe();
  return { d, clock, actuator, nodes, state, lines };
}

describe('Disruptor', () => {
  it('removes an empty node through its Machine after 30 s, one at a time under a lone 10% budget (10% of 3), and never picks it twice from a stale cache', async () => {
    const { d, clock, actuator } = disruptor(cluster(ONE_AT_A_TIME));
    await clock.advance(29_000);
    expect((await d.pass()).removals).to.deep.equal([]);
    await clock.advance(1000);
    const r = await d.pass();
    expect(r.removals.map((x) => [x.node, x.machine, x.reason])).to.deep.equal([['n-1', `${NS}/m-1`, 'Empty']]);
    expect(actuator.deletes).to.deep.equal([{ group: 'md', machine: 'm-1', node: 'n-1', reason: actuator.deletes[0]!.reason }]);
    expect(actuator.deletes[0]!.reason).to.match(/empty/);
    expect([...d.disrupting().keys()]).to.deep.equal(['n-1']);
    // The cache still shows n-1 and 3 replicas: n-1 is not chosen again, and it uses up the budget.
    await clock.advance(10_000);
    expect((await d.pass()).removals).to.deep.equal([]);
    expect(actuator.deletes).to.have.length(1);
  });

  it('by default removes every due empty node of a group in one pass, with one replicas write for the group (issue 28)', async () => {
    const { d, clock, actuator } = disruptor(cluster());
    await clock.advance(30_000);
    const r = await d.pass();
    expect(r.removals.map((x) => [x.node, x.machine, x.reason])).to.deep.equal([['n-1', `${NS}/m-1`, 'Empty'], ['n-2', `${NS}/m-2`, 'Empty']]);
    expect(actuator.batches).to.deep.equal([{ group: 'md', machines: ['m-1', 'm-2'] }]);
    expect(actuator.deletes.map((x) => x.node)).to.deep.equal(['n-1', 'n-2']);
    expect([...d.disrupting().keys()].sort()).to.deep.equal(['n-1', 'n-2']);
    // The busy n-0 stays; the stale cache shows n-1 and n-2 still: neither is picked again.
    await clock.advance(10_000);
    expect((await d.pass()).removals).to.deep.equal([]);
    expect(actuator.batches).to.have.length(1);
  });

  it('defaultBudgets sets the budgets of groups in no NodePool (the simulator gives Karpenter-like policies a lone 10%)', async () => {
    const { d, clock, actuator } = disruptor(cluster(), new RecordingActuator(), { defaultBudgets: [{ nodes: '10%' }] });
    await clock.advance(30_000);
    const r = await d.pass();
    expect(r.removals.map((x) => x.node)).to.deep.equal(['n-1']);
    expect(r.kept.find((k) => k.node === 'n-2')?.blockedBy).to.equal('budget');
    expect(actuator.batches).to.deep.equal([{ group: 'md', machines: ['m-1'] }]);
  });

  it('a group at min size keeps as many empty nodes as its min size needs, on the decision and on the write', async () => {
    const objs = cluster();
    objs.nodeGroups = [machineDeployment({ namespace: NS, name: 'md', replicas: 3, min: 2, max: 5, cpu: '4', memory: '16Gi', labels: { pool: 'p' } })];
    objs.nodeGroups[0]!.metadata!.uid = 'uid-md';
    const { d, clock, actuator } = disruptor(objs);
    await clock.advance(30_000);
    const r = await d.pass();
    expect(r.removals.map((x) => x.node)).to.deep.equal(['n-1']);
    expect(r.kept.find((k) => k.node === 'n-2')?.why).to.match(/min size 2/);
    expect(actuator.batches).to.deep.equal([{ group: 'md', machines: ['m-1'] }]);
  });

  it("uses the NodePool's consolidateAfter and budget, and keeps do-not-disrupt nodes", async () => {
    const objs = cluster({ pool: { consolidateAfter: '1m', budgets: [{ nodes: '100%' }] }, nodeAnnotations: { 'n-2': { [DO_NOT_DISRUPT_ANNOTATION]: 'true' } } });
    const { d, clock, actuator } = disruptor(objs);
    await clock.advance(59_000);
    expect((await d.pass()).removals).to.deep.equal([]);
    await clock.advance(1000);
    await d.pass();
    expect(actuator.deletes.map((x) => x.node)).to.deep.equal(['n-1']);
  });

  it('consolidateAfter: Never removes nothing', async () => {
    const { d, clock, actuator } = disruptor(cluster({ pool: { consolidateAfter: 'Never', budgets: [{ nodes: '100%' }] } }));
    await clock.advance(3_600_000);
    await d.pass();
    expect(actuator.deletes).to.deep.equal([]);
  });

  it('keeps empty nodes that the pending pods are about to use', async () => {
    // Two pending 3-cpu pods: each empty node takes one; the busy n-0 has 2.9 cpu free.
    const pending = [0, 1].map((i) => pendingPod(NS, `p-${i}`, '3') as V1Pod);
    const { d, clock, actuator } = disruptor(cluster({ pool: { consolidateAfter: '30s', budgets: [{ nodes: '100%' }] }, pending }));
    await clock.advance(60_000);
    expect((await d.pass()).removals).to.deep.equal([]);
    expect(actuator.deletes).to.deep.equal([]);
    // One pending pod: one empty node is needed, the other goes.
    const one = disruptor(cluster({ pool: { consolidateAfter: '30s', budgets: [{ nodes: '100%' }] }, pending: pending.slice(0, 1) }));
    await one.clock.advance(60_000);
    await one.d.pass();
    expect(one.actuator.deletes).to.have.length(1);
  });

  it('does not retry a removal the actuator declined (dry run) on the next passes', async () => {
    const actuator = new RecordingActuator(false);
    const { d, clock } = disruptor(cluster(ONE_AT_A_TIME), actuator);
    await clock.advance(30_000);
    await d.pass();
    expect(actuator.deletes.map((x) => x.node)).to.deep.equal(['n-1']);
    expect(d.disrupting().size).to.equal(0);
    await clock.advance(10_000);
    await d.pass();
    // n-1 is held back; n-2 is tried instead (declined nodes do not use budget).
    expect(actuator.deletes.map((x) => x.node)).to.deep.equal(['n-1', 'n-2']);
  });

  describe('taint, fresh re-check, then delete or untaint (issue 10, defect 10)', () => {
    it('taints the chosen node before removing it, and leaves it tainted while its Machine goes', async () => {
      const { d, clock, actuator, nodes } = disruptor(cluster(ONE_AT_A_TIME));
      await clock.advance(30_000);
      await d.pass();
      expect(nodes.log).to.deep.equal(['taint n-1']);
      expect(actuator.deletes.map((x) => x.node)).to.deep.equal(['n-1']);
      expect([...nodes.tainted]).to.deep.equal(['n-1']);
    });

    it('a pod bound to the node after the decision stops the delete, and the node is untainted', async () => {
      const { d, clock, actuator, nodes } = disruptor(cluster(ONE_AT_A_TIME));
      nodes.boundLater.set('n-1', [bound('late', 'n-1', 'ReplicaSet')]);
      await clock.advance(30_000);
      const r = await d.pass();
      expect(actuator.deletes).to.deep.equal([]);
      expect(nodes.log).to.deep.equal(['taint n-1', 'untaint n-1']);
      expect(r.removals).to.deep.equal([]);
      expect(r.kept.find((k) => k.node === 'n-1')?.why).to.match(/fresh look: pod default\/late was bound to the node after the decision/);
      expect(d.disrupting().size).to.equal(0);
    });

    it('a pod bound after the re-check (kube-scheduler late to see the taint) is never evicted: the node is kept, with and without a drain', async () => {
      const run = async (drain: boolean) => {
        const { d, clock, actuator, nodes } = disruptor(cluster(ONE_AT_A_TIME));
        const evicted: string[] = [];
        if (drain) nodes.evictPod = async (p) => { evicted.push(p.name); return { kind: 'evicted' }; };
        // The re-check's read shows n-1 empty; every read after it shows the late pod.
        const readNode = nodes.readNode.bind(nodes);
        let reads = 0;
        nodes.readNode = async (name) => {
          if (name === 'n-1' && ++reads === 2) nodes.boundLater.set('n-1', [bound('late', 'n-1', 'ReplicaSet')]);
          return readNode(name);
        };
        await clock.advance(30_000);
        const r = await d.pass();
        expect(reads, 'read after the re-check').to.be.at.least(2);
        expect(actuator.deletes).to.deep.equal([]);
        expect(evicted).to.deep.equal([]);
        expect(nodes.log).to.deep.equal(['taint n-1', 'untaint n-1']);
        expect(r.kept.find((k) => k.node === 'n-1')?.why).to.match(/pod default\/late was bound to the node after the decision/);
      };
      await run(false);
      await run(true);
    });

    it('a do-not-disrupt pod or node annotation that appeared meanwhile stops the delete', async () => {
      const late = { ...bound('ds-late', 'n-1', 'DaemonSet', '100m'), metadata: { ...bound('ds-late', 'n-1', 'DaemonSet').metadata, annotations: { [DO_NOT_DISRUPT_ANNOTATION]: 'true' } } };
      const a = disruptor(cluster(ONE_AT_A_TIME));
      a.nodes.boundLater.set('n-1', [late]);
      await a.clock.advance(30_000);
      await a.d.pass();
      expect(a.actuator.deletes).to.deep.equal([]);
      expect(a.nodes.tainted.size).to.equal(0);

      const b = disruptor(cluster(ONE_AT_A_TIME));
      const readNode = b.nodes.readNode.bind(b.nodes);
      b.nodes.readNode = async (name) => {
        const fresh = await readNode(name);
        return fresh && { ...fresh, node: { ...fresh.node, metadata: { ...fresh.node.metadata, annotations: { [DO_NOT_DISRUPT_ANNOTATION]: 'true' } } } };
      };
      await b.clock.advance(30_000);
      const r = await b.d.pass();
      expect(b.actuator.deletes).to.deep.equal([]);
      expect(r.kept.find((k) => k.node === 'n-1')?.why).to.match(/node annotated karpenter.sh\/do-not-disrupt/);
    });

    it('re-checks budgets on the state as it is after the wait', async () => {
      const state = cluster(ONE_AT_A_TIME);
      const { d, clock, actuator, nodes } = disruptor(state, new RecordingActuator(), { settleMs: 2000 });
      await clock.advance(30_000);
      // While the pass waits, another node of the pool gets cordoned: the budget (1 of 3) is used up.
      const pass = d.pass();
      await until(() => nodes.tainted.has('n-1'));
      await clock.advance(1000);
      state.nodes = state.nodes.map((n) => (n.metadata?.name === 'n-2' ? { ...n, spec: { ...n.spec, unschedulable: true } } : n));
      await clock.advance(1000);
      const r = await pass;
      expect(actuator.deletes).to.deep.equal([]);
      expect(nodes.log).to.deep.equal(['taint n-1', 'untaint n-1']);
      expect(r.kept.find((k) => k.node === 'n-1')?.why).to.match(/fresh look: disruption budget/);
    });

    it('a stop() during the wait removes nothing and takes the taint back', async () => {
      const { d, clock, actuator, nodes } = disruptor(cluster(ONE_AT_A_TIME), new RecordingActuator(), { settleMs: 2000 });
      await clock.advance(30_000);
      const pass = d.pass();
      await until(() => nodes.tainted.has('n-1'));
      await clock.advance(1000);
      const stopped = d.stop();
      await clock.advance(1000);
      await pass;
      await stopped;
      expect(actuator.deletes).to.deep.equal([]);
      expect(nodes.log).to.deep.equal(['taint n-1', 'untaint n-1']);
    });

    it('takes our taint back from a node no removal is under way for (a pass cut short, a previous leader)', async () => {
      const objs = cluster(ONE_AT_A_TIME);
      objs.nodes = objs.nodes.map((n) => (n.metadata?.name === 'n-0' ? { ...n, spec: { taints: [{ key: DISRUPTION_TAINT_KEY, effect: 'NoSchedule' }] } } : n));
      const { d, clock, nodes, lines } = disruptor(objs);
      await clock.advance(1000);
      await d.pass();
      expect(nodes.log).to.deep.equal(['untaint n-0']);
      // The line about it names the Node (kind and name fields in the JSON logs).
      expect(lines).to.deep.include({ message: 'untainted node n-0: no removal of it is under way', about: { kind: 'Node', name: 'n-0' } });
    });
  });

  describe('the fresh look before acting re-solves the what-if, and pending pods cancel a drain (issue 14)', () => {
    /** n-0 (running `web`) expired; n-1 and n-2 hold only DaemonSet pods. */
    function expiring(): ClusterObjects {
      const objs = cluster({ pool: { consolidateAfter: 'Never', expireAfter: '1h', budgets: [{ nodes: '100%' }] } });
      objs.nodes = objs.nodes.map((n) => ({ ...n, metadata: { ...n.metadata, creationTimestamp: new Date(n.metadata!.name === 'n-0' ? 0 : 7_000_000) } }));
      return objs;
    }
    const taintIn = (objs: ClusterObjects, name: string) => {
      objs.nodes = objs.nodes.map((n) => (n.metadata?.name === name ? { ...n, spec: { ...n.spec, taints: [{ key: DISRUPTION_TAINT_KEY, effect: 'NoSchedule' }] } } : n));
    };

    it('keeps the node when, by the time it is looked at again, pods bound elsewhere took the room its pods were to use', async () => {
      const objs = expiring();
      const { d, clock, actuator, nodes } = disruptor(objs, new RecordingActuator(), { maxExpiredPerPass: 1, settleMs: 2000 });
      await clock.advance(2 * 3_600_000);
      const pass = d.pass();
      await until(() => nodes.tainted.has('n-0'));
      // Meanwhile two 3.5-cpu pods land on n-1 and n-2: web (1 cpu) no longer fits on either.
      objs.pods = [...objs.pods, bound('big-1', 'n-1', 'ReplicaSet', '3500m'), bound('big-2', 'n-2', 'ReplicaSet', '3500m')];
      await clock.advance(2000);
      const r = await pass;
      expect(actuator.deletes).to.deep.equal([]);
      expect(nodes.log).to.deep.equal(['taint n-0', 'untaint n-0']);
      expect(r.kept.find((k) => k.node === 'n-0')?.why).to.match(/fresh look: the what-if re-solved on the fresh state refuses it: its pods would now need a new node/);

      // With the room still there, the same removal goes ahead.
      const again = disruptor(expiring(), new RecordingActuator(), { maxExpiredPerPass: 1, settleMs: 2000 });
      await again.clock.advance(2 * 3_600_000);
      const ok = again.d.pass();
      await until(() => again.nodes.tainted.has('n-0'));
      await again.clock.advance(2000);
      await ok;
      expect(again.actuator.deletes.map((x) => x.node)).to.deep.equal(['n-0']);
    });

    it('neededByPending: a drain is cancelled (node untainted and kept) only when a pending pod has no other place than that node', async () => {
      const run = async (pending: V1Pod) => {
        const objs = expiring();
        const { d, clock, actuator, nodes } = disruptor(objs, new RecordingActuator(), { maxExpiredPerPass: 1 });
        let evictions = 0;
        // The first eviction is refused (a PDB, say); later ones go through and the pod is gone.
        nodes.evictPod = async (p) => {
          if (++evictions === 1) return { kind: 'refused', why: '429', retryAfterMs: 1000 };
          objs.pods = objs.pods.filter((x) => x.metadata?.name !== p.name);
          return { kind: 'evicted' };
        };
        await clock.advance(2 * 3_600_000);
        const pass = d.pass();
        await until(() => evictions === 1);
        // While the drain waits, the taint is in the state and a pod is created.
        taintIn(objs, 'n-0');
        objs.pods = [...objs.pods, pending];
        for (let i = 0; i < 5; i++) await clock.advance(1000);
        return { r: await pass, actuator, nodes };
      };
      // Pinned to n-0 (no other node may take it, and no new node counts): cancelled.
      const pinned = { ...pendingPod(NS, 'pinned', '500m'), spec: { ...pendingPod(NS, 'pinned', '500m').spec!, nodeSelector: { 'kubernetes.io/hostname': 'n-0' } } };
      const kept = await run(pinned);
      expect(kept.actuator.deletes).to.deep.equal([]);
      expect(kept.nodes.log).to.deep.equal(['taint n-0', 'untaint n-0']);
      expect(kept.r.kept.find((k) => k.node === 'n-0')?.why).to.equal('on a fresh look: cancelled: 1 pending pod(s) have no other place than this node');
      // A pod that n-1 or n-2 can take does not keep it: the drain finishes and the Machine goes.
      const goes = await run(pendingPod(NS, 'anywhere', '500m'));
      expect(goes.actuator.deletes.map((x) => x.node)).to.deep.equal(['n-0']);
      expect(goes.r.kept.filter((k) => k.node === 'n-0')).to.deep.equal([]);
    });
  });

  describe('drift and CAPI rollouts (issue 14)', () => {
    const template = (infra: string) => ({
      namespace: NS, clusterName: 'test', capacity: { cpu: '4', memory: '16Gi' },
      bootstrapConfigTemplateRef: { apiVersion: 'b.x/v1', kind: 'BT', name: 'b' }, infrastructureTemplateRef: { apiVersion: 'i.x/v1', kind: 'IT', name: infra },
    });
    const nodePool = (infra: string, budgets: unknown[] = [{ nodes: '100%' }]): UnstructuredObject => ({
      apiVersion: 'headroom.dev/v1alpha1', kind: 'NodePool', metadata: { name: 'batch' },
      spec: { disruption: { consolidateAfter: 'Never', budgets }, machineTemplate: template(infra) },
    });
    const standalone = (name: string, infra: string, nodeName: string): UnstructuredObject => ({
      apiVersion: 'cluster.x-k8s.io/v1beta2', kind: 'Machine',
      metadata: { name, namespace: NS, labels: { 'headroom.dev/nodepool': 'batch' }, annotations: { [NODEPOOL_HASH_ANNOTATION]: nodePoolTemplateHash(parseNodePool(nodePool(infra)).machineTemplate!) } },
      spec: { clusterName: 'test' }, status: { nodeRef: { name: nodeName } },
    });

    it('a standalone Machine whose NodePool template changed is replaced: a new Machine first, then the old one drained and deleted', async () => {
      const objs = emptyClusterObjects();
      objs.nodePools = [nodePool('tpl-b')];
      objs.machines = [standalone('sm-a', 'tpl-a', 'sn-a')];
      objs.nodes = [node('sn-a')];
      objs.pods = [bound('web', 'sn-a', 'ReplicaSet')];
      const created: Array<{ name: string; nodePool: string; reason: string }> = [];
      const deleted: string[] = [];
      const actuator = new RecordingActuator();
      actuator.createMachine = async (r) => { created.push({ name: r.name, nodePool: r.nodePool, reason: r.reason }); return r.name; };
      actuator.deleteStandaloneMachine = async (m: MachineRef, reason: string) => { deleted.push(`${m.name}@${m.nodeName}: ${reason}`); };
      const { d, clock, nodes } = disruptor(objs, actuator);
      await clock.advance(1000);
      await d.pass();
      // Its pod has nowhere else to go: one new Machine of the pool (current template) first; the old node waits, tainted.
      expect(created).to.have.length(1);
      expect(created[0]!.nodePool).to.equal('batch');
      expect(created[0]!.reason).to.match(/^Drifted: Machine default\/sm-a was made from an older template of NodePool batch/);
      expect([...nodes.tainted]).to.deep.equal(['sn-a']);
      expect(deleted).to.deep.equal([]);
      expect(d.disrupting().get('sn-a')).to.match(/waiting for its replacement/);
      // A second pass while the new Machine has no Node: nothing more is created, nothing deleted.
      objs.machines = [...objs.machines, { ...standalone(created[0]!.name, 'tpl-b', 'unused'), status: {} }];
      await clock.advance(1000);
      await d.pass();
      expect(created).to.have.length(1);
      expect(deleted).to.deep.equal([]);
      // The new Machine's node is Ready: the old Machine is deleted, for drift.
      objs.machines = [objs.machines[0]!, standalone(created[0]!.name, 'tpl-b', 'sn-new')];
      objs.nodes = [...objs.nodes, node('sn-new')];
      await clock.advance(1000);
      const r = await d.pass();
      expect(deleted).to.deep.equal(['sm-a@sn-a: node drifted from its NodePool template']);
      expect(r.removals.map((x) => [x.node, x.reason])).to.deep.equal([['sn-a', 'Drifted']]);
    });

    it('a drifted node whose pods fit elsewhere is simply removed; a Drifted budget of 0 holds it; a Machine of the current template is left alone', async () => {
      const objs = (budgets?: unknown[]) => {
        const o = emptyClusterObjects();
        o.nodePools = [nodePool('tpl-b', budgets)];
        o.machines = [standalone('sm-a', 'tpl-a', 'sn-a'), standalone('sm-b', 'tpl-b', 'sn-b')];
        o.nodes = [node('sn-a'), node('sn-b')];
        o.pods = [bound('web', 'sn-a', 'ReplicaSet'), bound('other', 'sn-b', 'ReplicaSet')];
        return o;
      };
      const run = async (o: ClusterObjects) => {
        const deleted: string[] = [];
        const actuator = new RecordingActuator();
        actuator.deleteStandaloneMachine = async (m: MachineRef) => { deleted.push(m.name); };
        const { d, clock } = disruptor(o, actuator);
        await clock.advance(1000);
        return { r: await d.pass(), deleted };
      };
      const fits = await run(objs());
      expect(fits.deleted).to.deep.equal(['sm-a']);
      const held = await run(objs([{ nodes: '100%' }, { nodes: '0', reasons: ['Drifted'] }]));
      expect(held.deleted).to.deep.equal([]);
      expect(held.r.kept).to.deep.include({ node: 'sn-a', why: 'disruption budget of NodePool batch allows 0 node(s) at once', reason: 'Drifted', blockedBy: 'budget' });
    });

    it('leaves the nodes of a MachineDeployment that CAPI is rolling out to CAPI (no removal), and removes again once it is done', async () => {
      const objs = cluster(ONE_AT_A_TIME);
      const set = (name: string, replicas: number): UnstructuredObject => ({
        apiVersion: 'cluster.x-k8s.io/v1beta2', kind: 'MachineSet',
        metadata: { name, namespace: NS, labels: { 'cluster.x-k8s.io/deployment-name': 'md' }, ownerReferences: [{ apiVersion: 'cluster.x-k8s.io/v1beta2', kind: 'MachineDeployment', name: 'md', uid: 'uid-md', controller: true }] },
        spec: { clusterName: 'test', replicas, selector: {}, template: { spec: { clusterName: 'test', bootstrap: { dataSecretName: 'x' }, infrastructureRef: { apiGroup: 'i.x', kind: 'IT', name: 'i' } } } },
      });
      objs.nodeGroups = [...objs.nodeGroups, set('md-old', 2), set('md-new', 1)];
      const { d, clock, actuator, lines } = disruptor(objs);
      await clock.advance(60_000);
      expect((await d.pass()).removals).to.deep.equal([]);
      expect(actuator.deletes).to.deep.equal([]);
      expect(lines.map((l) => l.message)).to.include('MachineDeployment default/md is rolling out (2 MachineSets have Machines): its nodes are left to Cluster API');
      objs.nodeGroups = [objs.nodeGroups[0]!, set('md-old', 0), set('md-new', 3)];
      expect((await d.pass()).removals.map((r) => r.node)).to.deep.equal(['n-1']);
    });
  });

  describe('only removable nodes are candidates (issue 10, defect 12)', () => {
    /** A MachinePool without Machines: its nodes are found through spec.providerIDList. */
    function poolCluster(busy: boolean): ClusterObjects {
      const mp = machinePool({ namespace: NS, name: 'mp', replicas: 2, min: 0, max: 5, cpu: '4', memory: '16Gi' });
      mp.spec = { ...mp.spec, providerIDList: ['sim:///p-0', 'sim:///p-1'] };
      const nodes = [0, 1].map((i) => ({ ...node(`p-${i}`), spec: { providerID: `sim:///p-${i}` } }));
      const pods = [...[0, 1].map((i) => bound(`ds-${i}`, `p-${i}`, 'DaemonSet', '100m')), ...(busy ? [bound('web', 'p-0', 'ReplicaSet')] : [])];
      return { ...emptyClusterObjects(), nodeGroups: [mp], nodes, pods };
    }

    class ScalingActuator extends RecordingActuator {
      scales: Array<[number, number]> = [];
      override async getReplicas(): Promise<number> { return 2; }
      override async scaleTo(_g?: NodeGroupRef, from = 0, to = 0): Promise<ScaleResult> {
        this.scales.push([from, to]);
        return { replicas: to, written: true };
      }
    }

    it('an empty node of a MachinePool without Machines, next to a busy one, is not picked and takes no budget', async () => {
      const actuator = new ScalingActuator();
      const { d, clock, nodes } = disruptor(poolCluster(true), actuator);
      await clock.advance(60_000);
      const r = await d.pass();
      expect(r.removals).to.deep.equal([]);
      expect(r.kept).to.deep.equal([]);
      expect(actuator.scales).to.deep.equal([]);
      expect(nodes.log).to.deep.equal([]);
    });

    it('a MachinePool without Machines whose nodes are all empty scales down by replicas, both at once in one write', async () => {
      const actuator = new ScalingActuator();
      const { d, clock } = disruptor(poolCluster(false), actuator);
      await clock.advance(30_000);
      const r = await d.pass();
      expect(r.removals.map((x) => [x.node, x.machine, x.result?.written])).to.deep.equal([['p-0', undefined, true], ['p-1', undefined, true]]);
      expect(actuator.scales).to.deep.equal([[2, 0]]);
    });
  });

  describe('groups in no NodePool get the one set of defaults (issue 25, item 3)', () => {
    /** md's 3 nodes each run one 1-cpu ReplicaSet pod (25% of 4 cpu): underutilised, none empty. */
    const underused = (threshold: string) => {
      const objs = cluster(ONE_AT_A_TIME);
      objs.nodeGroups[0]!.metadata!.annotations!['cluster.x-k8s.io/autoscaling-options-scaledownutilizationthreshold'] = threshold;
      objs.pods = [bound('web', 'n-0', 'ReplicaSet'), bound('api', 'n-1', 'ReplicaSet'), bound('job', 'n-2', 'ReplicaSet')];
      return objs;
    };
    it("consolidates an underutilised node (WhenEmptyOrUnderutilized), and CA's scaledownutilizationthreshold decides which count", async () => {
      for (const [threshold, removed] of [['0.5', 1], ['0.2', 0]] as const) {
        const { d, clock, actuator } = disruptor(underused(threshold), new RecordingActuator(), { consolidationDelayAfterAddMs: 0 });
        for (let i = 0; i < 6; i++) {
          await clock.advance(10_000);
          await d.pass();
        }
        expect(actuator.deletes, `threshold ${threshold}`).to.have.length(removed);
      }
    });
  });

  describe('the delay after add guards capacity added for demand, not capacity added for spare (issue 24)', () => {
    /** md's 3 nodes each run one 1-cpu ReplicaSet pod of 4 cpu (underutilised at a 0.5 threshold), and a fourth Machine is booting. */
    const booting = () => {
      const objs = cluster(ONE_AT_A_TIME);
      objs.nodeGroups[0]!.metadata!.annotations!['cluster.x-k8s.io/autoscaling-options-scaledownutilizationthreshold'] = '0.5';
      objs.nodeGroups[0]!.spec = { ...objs.nodeGroups[0]!.spec, replicas: 4 };
      objs.pods = [bound('web', 'n-0', 'ReplicaSet'), bound('api', 'n-1', 'ReplicaSet'), bound('job', 'n-2', 'ReplicaSet')];
      objs.machines = [...objs.machines, machine(NS, 'm-3', { kind: 'MachineDeployment', name: 'md', uid: 'uid-md' })];
      return objs;
    };
    /** One predicted pod of the web workload: spare, or demand on its way. */
    const predicted = (demand: boolean): SchedulingPod[] => [{
      ...schedulingPod('predicted-web-0', { owner: 'web', cpu: '500m', memory: '64Mi' }), predicted: true, ...(demand ? { predictedDemand: true } : {}),
    }];
    const passes = async (d: Disruptor, clock: ManualClock, n: number) => {
      for (let i = 0; i < n; i++) {
        await clock.advance(10_000);
        await d.pass();
      }
    };

    it('while a node boots for spare alone (a jitter margin, a CapacityBuffer), underutilised nodes are consolidated', async () => {
      const { d, clock, actuator } = disruptor(booting(), new RecordingActuator(), { extraPendingPods: () => predicted(false) });
      await passes(d, clock, 6);
      expect(actuator.deletes).to.have.length(1);
    });

    it('while a node boots for a rise the forecast acts on, nothing is consolidated, nor for 5 minutes after it stops booting', async () => {
      const objs = booting();
      const { d, clock, actuator, state } = disruptor(objs, new RecordingActuator(), { extraPendingPods: () => predicted(true) });
      await passes(d, clock, 6);
      expect(actuator.deletes).to.deep.equal([]);
      // The Machine is gone and the group back at 3 (it never came up): nothing is being added any more.
      const [md] = objs.nodeGroups;
      state.objs = { ...objs, nodeGroups: [{ ...md!, spec: { ...md!.spec, replicas: 3 } }], machines: objs.machines.filter((m) => m.metadata?.name !== 'm-3') };
      await passes(d, clock, 29);
      expect(actuator.deletes, 'within 5 min of the last add').to.deep.equal([]);
      await passes(d, clock, 2);
      expect(actuator.deletes).to.have.length(1);
    });
  });

  describe('consolidateAfter default (issue 10, defect 15)', () => {
    it('a NodePool as the apiserver stores it (CRD defaults filled in) keeps an empty node for 30 s', async () => {
      const crd = parseYaml(readFileSync('charts/headroom/crds/headroom.dev_nodepools.yaml', 'utf8')) as {
        spec: { versions: Array<{ schema: { openAPIV3Schema: { properties: { spec: { properties: { disruption: { properties: Record<string, { default?: unknown }> } } } } } } }> };
      };
      const fields = crd.spec.versions[0]!.schema.openAPIV3Schema.properties.spec.properties.disruption.properties;
      const defaulted = Object.fromEntries(Object.entries(fields).filter(([, f]) => f.default !== undefined).map(([k, f]) => [k, f.default]));
      expect(defaulted.consolidateAfter).to.equal('30s');
      const { d, clock, actuator } = disruptor(cluster({ pool: { ...defaulted, budgets: [{ nodes: '100%' }] } }));
      await clock.advance(29_000);
      await d.pass();
      expect(actuator.deletes).to.deep.equal([]);
      await clock.advance(1000);
      await d.pass();
      expect(actuator.deletes.map((x) => x.node)).to.deep.equal(['n-1', 'n-2']);
    });
  });

  describe('blockers and scheduled budgets (issue 14)', () => {
    it('headroom.dev/do-not-disrupt on a node, and a pod annotated safe-to-evict=false, keep the node', async () => {
      const objs = cluster({ pool: { consolidateAfter: '30s', budgets: [{ nodes: '100%' }] }, nodeAnnotations: { 'n-2': { [HEADROOM_DO_NOT_DISRUPT_ANNOTATION]: 'true' } } });
      objs.pods = objs.pods.map((p) => (p.metadata?.name === 'ds-1' ? { ...p, metadata: { ...p.metadata, annotations: { [SAFE_TO_EVICT_ANNOTATION]: 'false' } } } : p));
      const { d, clock, actuator } = disruptor(objs);
      await clock.advance(60_000);
      await d.pass();
      expect(actuator.deletes).to.deep.equal([]);
    });

    it('a budget of 0 blocks during its schedule and allows outside it', async () => {
      // The ManualClock starts at 00:16:40 UTC: inside a window that opens at midnight for 1h.
      const { d, clock, actuator } = disruptor(cluster({ pool: { consolidateAfter: '30s', budgets: [{ nodes: '100%' }, { nodes: '0', schedule: '0 0 * * *', duration: '1h' }] } }));
      await clock.advance(60_000);
      const r = await d.pass();
      expect(actuator.deletes).to.deep.equal([]);
      expect(r.kept.map((k) => k.why)).to.include('disruption budget of NodePool p allows 0 node(s) at once');
      await clock.advance(45 * 60_000); // 01:02:40: the window has closed
      await d.pass();
      expect(actuator.deletes.map((x) => x.node)).to.deep.equal(['n-1', 'n-2']);
    });
  });

  it('leaves a paused group, and every group of a paused Cluster, alone; removes again once unpaused', async () => {
    for (const how of ['group', 'cluster'] as const) {
      const objs = cluster(ONE_AT_A_TIME);
      if (how === 'group') objs.nodeGroups = [{ ...objs.nodeGroups[0]!, metadata: { ...objs.nodeGroups[0]!.metadata, annotations: { 'cluster.x-k8s.io/paused': 'true' } } }];
      else objs.clusters = [{ apiVersion: 'cluster.x-k8s.io/v1beta2', kind: 'Cluster', metadata: { namespace: NS, name: 'test' }, spec: { paused: true } }];
      const { d, clock, actuator } = disruptor(objs);
      await clock.advance(60_000);
      expect((await d.pass()).removals, how).to.deep.equal([]);
      expect(actuator.deletes, how).to.deep.equal([]);
      objs.nodeGroups = cluster(ONE_AT_A_TIME).nodeGroups;
      objs.clusters = [];
      expect((await d.pass()).removals.map((r) => r.node), how).to.deep.equal(['n-1']);
    }
  });

  it('keeps a node whose pod has local storage safe-to-evict-local-volumes does not list (expiry), and deletes an empty standalone Machine', async () => {
    // Expiry takes n-0 (its pod fits elsewhere) unless its pod's emptyDir is unlisted.
    const expiring = async (annotations: Record<string, string>) => {
      const objs = cluster({ pool: { consolidateAfter: 'Never', expireAfter: '1h', budgets: [{ nodes: '100%' }] } });
      objs.nodes = objs.nodes.map((n) => ({ ...n, metadata: { ...n.metadata, creationTimestamp: new Date(n.metadata!.name === 'n-0' ? 0 : 7_000_000) } }));
      objs.pods = objs.pods.map((p) => (p.metadata!.name === 'web'
        ? { ...p, metadata: { ...p.metadata, annotations }, spec: { ...p.spec!, volumes: [{ name: 'scratch', emptyDir: {} }] } } : p));
      const { d, clock } = disruptor(objs, new RecordingActuator(), { maxExpiredPerPass: 1 });
      await clock.advance(2 * 3_600_000);
      return (await d.pass()).removals.map((x) => x.node);
    };
    expect(await expiring({})).to.deep.equal([]);
    expect(await expiring({ 'cluster-autoscaler.kubernetes.io/safe-to-evict-local-volumes': 'scratch' })).to.deep.equal(['n-0']);

    // A standalone Machine's node, empty past consolidateAfter, goes by a delete of that Machine.
    const sa = emptyClusterObjects();
    sa.nodePools = [{
      apiVersion: 'headroom.dev/v1alpha1', kind: 'NodePool', metadata: { name: 'batch' },
      spec: { disruption: { consolidateAfter: '30s' }, machineTemplate: {
        namespace: NS, clusterName: 'test', capacity: { cpu: '4', memory: '16Gi' },
        bootstrapConfigTemplateRef: { apiVersion: 'b.x/v1', kind: 'BT', name: 'b' }, infrastructureTemplateRef: { apiVersion: 'i.x/v1', kind: 'IT', name: 'i' },
      } },
    }];
    sa.machines = ['a', 'b'].map((x) => ({
      apiVersion: 'cluster.x-k8s.io/v1beta2', kind: 'Machine', metadata: { name: `sm-${x}`, namespace: NS, labels: { 'headroom.dev/nodepool': 'batch' } },
      spec: { clusterName: 'test' }, status: { nodeRef: { name: `sn-${x}` } },
    }));
    sa.nodes = [node('sn-a'), node('sn-b')];
    sa.pods = [bound('job', 'sn-a', 'Job'), bound('ds-a', 'sn-a', 'DaemonSet', '100m')];
    const deleted: string[] = [];
    const standalone = new RecordingActuator();
    standalone.deleteStandaloneMachine = async (m: MachineRef) => { deleted.push(`${m.name}@${m.nodeName}`); };
    const s = disruptor(sa, standalone);
    await s.clock.advance(31_000);
    const out = await s.d.pass();
    expect(out.removals.map((x) => [x.node, x.machine])).to.deep.equal([['sn-b', `${NS}/sm-b`]]);
    expect(deleted).to.deep.equal(['sm-b@sn-b']);
    expect(standalone.deletes).to.deep.equal([]);
  });
});
