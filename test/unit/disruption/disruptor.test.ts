import { expect } from 'chai';
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import type { CapiActuator, MachineRef, NodeGroupRef, ScaleResult } from '../../../src/capi/actuator.js';
import { emptyClusterObjects, type ClusterObjects, type UnstructuredObject } from '../../../src/cluster/objects.js';
import type { ClusterStateSource } from '../../../src/cluster/state.js';
import { DO_NOT_DISRUPT_ANNOTATION, Disruptor } from '../../../src/disruption/disruptor.js';
import { solve } from '../../../src/packing/solve.js';
import { machine, machineDeployment, pendingPod } from '../../integration/controller-objects.js';
import { ManualClock } from '../provisioning/manual-clock.js';

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

class RecordingActuator implements CapiActuator {
  deletes: Array<{ group: string; machine: string; node?: string; reason: string }> = [];
  constructor(private written = true) {}
  async getReplicas(): Promise<number> { return 0; }
  async scaleTo(): Promise<ScaleResult> { throw new Error('unused'); }
  async deleteMachine(g: NodeGroupRef, m: MachineRef, reason: string): Promise<ScaleResult> {
    this.deletes.push({ group: g.name, machine: m.name, ...(m.nodeName ? { node: m.nodeName } : {}), reason });
    return { replicas: 0, written: this.written };
  }
  async createMachine(): Promise<string> { throw new Error('unused'); }
  async deleteStandaloneMachine(): Promise<void> { throw new Error('unused'); }
}

const NS = 'default';

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

function disruptor(objs: ClusterObjects, actuator = new RecordingActuator()) {
  const clock = new ManualClock();
  const d = new Disruptor({ state: new StaticState(objs), actuator, clock, solve: (s) => solve(s) }, { maxExpiredPerPass: 0 });
  d.observe();
  return { d, clock, actuator };
}

describe('Disruptor', () => {
  it('removes an empty node through its Machine after 30 s, one at a time (10% of 3), and never picks it twice from a stale cache', async () => {
    const { d, clock, actuator } = disruptor(cluster());
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
    const { d, clock } = disruptor(cluster(), actuator);
    await clock.advance(30_000);
    await d.pass();
    expect(actuator.deletes.map((x) => x.node)).to.deep.equal(['n-1']);
    expect(d.disrupting().size).to.equal(0);
    await clock.advance(10_000);
    await d.pass();
    // n-1 is held back; n-2 is tried instead (declined nodes do not use budget).
    expect(actuator.deletes.map((x) => x.node)).to.deep.equal(['n-1', 'n-2']);
  });
});
