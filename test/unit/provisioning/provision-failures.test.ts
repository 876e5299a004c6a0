import { expect } from 'chai';
import { parseOptionDuration } from '../../../src/api/autoscaling-options.js';
import type { V1Node } from '@kubernetes/client-node';
import { buildSnapshot } from '../../../src/cluster/build-snapshot.js';
import { emptyClusterObjects } from '../../../src/cluster/objects.js';
import type { UnstructuredObject } from '../../../src/api/unstructured-object.js';
import {
  GroupBackoff, MAX_NODE_PROVISION_TIME_ANNOTATION, ProvisionFailureFinder, findProvisionFailures, holdCapacity, pausedGroups,
} from '../../../src/provisioning/provision-failures.js';
import { isTrigger } from '../../../src/provisioning/triggers.js';
import { planFromInputs, planText } from '../../../src/cli/plan.js';
import { machineDeployment, pendingPod } from '../../integration/controller-objects.js';

const T0 = Date.parse('2026-01-01T00:00:00Z');
const iso = (ms: number) => new Date(ms).toISOString();

function machine(name: string, md: string, createdAt: number, status: Record<string, unknown> = {}): UnstructuredObject {
  return {
    apiVersion: 'cluster.x-k8s.io/v1beta2', kind: 'Machine',
    metadata: { name, namespace: 'capi', creationTimestamp: iso(createdAt) as unknown as Date, labels: { 'cluster.x-k8s.io/deployment-name': md, 'cluster.x-k8s.io/cluster-name': 'test' } },
    spec: { clusterName: 'test' }, status,
  };
}

function node(name: string, ready: boolean, createdAt: number, transitionAt = createdAt): V1Node {
  return {
    metadata: { name, creationTimestamp: new Date(createdAt), annotations: { 'cluster.x-k8s.io/machine': name, 'cluster.x-k8s.io/cluster-namespace': 'capi' } },
    status: { allocatable: { cpu: '4', memory: '16Gi', pods: '110' }, conditions: [{ type: 'Ready', status: ready ? 'True' : 'False', lastTransitionTime: new Date(transitionAt) }] },
  } as V1Node;
}

function objects(annotations: Record<string, string> = {}) {
  const o = emptyClusterObjects();
  o.nodeGroups = [machineDeployment({ namespace: 'capi', name: 'md', replicas: 3, min: 0, max: 5, annotations })];
  return o;
}

describe('provisioning failures', () => {
  it('parses Go durations and plain seconds, and refuses the rest', () => {
    expect(parseOptionDuration('15m')).to.equal(900_000);
    expect(parseOptionDuration('1h30m')).to.equal(5_400_000);
    expect(parseOptionDuration('2.5s')).to.equal(2500);
    expect(parseOptionDuration('250ms')).to.equal(250);
    expect(parseOptionDuration('90')).to.equal(90_000);
    for (const bad of ['', 'soon', '15 m', '-5m', '5m garbage']) expect(parseOptionDuration(bad), bad).to.equal(undefined);
  });

  it('gives up on a Machine without a Ready node after the max provision time, and says when the next one is due', () => {
    const o = objects();
    o.machines = [machine('late', 'md', T0), machine('young', 'md', T0 + 10 * 60_000), machine('booted', 'md', T0, { nodeRef: { name: 'booted' } })];
    o.nodes = [node('booted', true, T0 + 60_000)];
    const r = findProvisionFailures(o, T0 + 15 * 60_000);
    expect(r.failures.map((f) => [f.machine.name, f.kind, f.groupId])).to.deep.equal([['late', 'timeout', 'MachineDeployment/capi/md']]);
    expect(r.failures[0]!.detail).to.match(/not a Ready node 900 s after it was created/);
    expect(r.nextDeadline).to.equal(T0 + 25 * 60_000);
    expect(findProvisionFailures(o, T0 + 15 * 60_000 - 1).failures).to.deep.equal([]);
  });

  it('honours the group\'s maxnodeprovisiontime annotation', () => {
    const o = objects({ [MAX_NODE_PROVISION_TIME_ANNOTATION]: '2m' });
    o.machines = [machine('m', 'md', T0)];
    expect(findProvisionFailures(o, T0 + 119_000).failures).to.have.length(0);
    expect(findProvisionFailures(o, T0 + 120_000).failures).to.have.length(1);
  });

  it('treats a Failed Machine (phase, or failureReason in v1beta1 or status.deprecated.v1beta1) as failed at once', () => {
    const o = objects();
    o.machines = [
      machine('phase', 'md', T0, { phase: 'Failed' }),
      machine('old', 'md', T0, { failureReason: 'InsufficientCapacity' }),
      machine('new', 'md', T0, { deprecated: { v1beta1: { failureMessage: 'no spot capacity' } } }),
      machine('fine', 'md', T0, { phase: 'Provisioning' }),
    ];
    const r = findProvisionFailures(o, T0 + 1000);
    expect(r.failures.map((f) => [f.machine.name, f.kind])).to.deep.equal([['phase', 'failed'], ['old', 'failed'], ['new', 'failed']]);
    expect(r.failures[2]!.detail).to.contain('no spot capacity');
    expect(isTrigger('machines', { type: 'MODIFIED', object: o.machines[1] })).to.equal(true);
    expect(isTrigger('machines', { type: 'MODIFIED', object: o.machines[3] })).to.equal(false);
  });

  it('leaves Machines being deleted, and nodes that were Ready once (a health matter, not provisioning), alone', () => {
    const o = objects();
    const deleting = machine('deleting', 'md', T0);
    deleting.metadata!.deletionTimestamp = iso(T0 + 1000) as unknown as Date;
    o.machines = [deleting, machine('sick', 'md', T0, { nodeRef: { name: 'sick' } })];
    o.nodes = [node('sick', false, T0 + 60_000, T0 + 10 * 60_000)];
    expect(findProvisionFailures(o, T0 + 60 * 60_000).failures).to.deep.equal([]);
  });

  it('finds across cycles what findProvisionFailures finds, and looks again once a group, Machine or Node is a new object', () => {
    const finder = new ProvisionFailureFinder();
    const o = objects();
    o.machines = [machine('late', 'md', T0), machine('young', 'md', T0 + 10 * 60_000), machine('booted', 'md', T0, { nodeRef: { name: 'booted' } })];
    o.nodes = [node('booted', true, T0 + 60_000)];
    for (const at of [T0, T0 + 15 * 60_000 - 1, T0 + 15 * 60_000, T0 + 25 * 60_000]) {
      expect(finder.find(o, at), String(at)).to.deep.equal(findProvisionFailures(o, at));
    }
    // The young Machine's node registers and is Ready: a new Node object in a new list.
    const o2 = { ...o, nodes: [...o.nodes, node('young', true, T0 + 12 * 60_000)], machines: [o.machines[0]!, machine('young', 'md', T0 + 10 * 60_000, { nodeRef: { name: 'young' } }), o.machines[2]!] };
    expect(finder.find(o2, T0 + 25 * 60_000).failures.map((f) => f.machine.name)).to.deep.equal(['late']);
    // A Machine pushed into the list passed before is seen too.
    o2.machines.push(machine('failed', 'md', T0, { phase: 'Failed' }));
    expect(finder.find(o2, T0 + 1000).failures.map((f) => [f.machine.name, f.kind])).to.deep.equal([['failed', 'failed']]);
    // Another default max provision time is another answer.
    expect(finder.find(o2, T0 + 1000, 500).failures.map((f) => f.machine.name)).to.deep.equal(['late', 'failed']);
  });

  it('backs a group off exponentially, capped, and starts over after a quiet spell', () => {
    const b = new GroupBackoff(1000, 4000);
    expect(b.fail('g', 0)).to.equal(1000);
    expect(b.fail('g', 1000)).to.equal(3000);
    expect(b.fail('g', 3000)).to.equal(7000);
    expect(b.fail('g', 7000)).to.equal(11_000);
    expect([...b.active(10_999).keys()]).to.deep.equal(['g']);
    expect(b.active(11_000).size).to.equal(0);
    expect(b.fail('g', 100_000)).to.equal(101_000);
  });

  it('holds paused and backing-off groups at their replicas, and long-NotReady nodes take no pods', () => {
    const o = objects({ 'cluster.x-k8s.io/paused': '' });
    o.nodeGroups[0] = { ...o.nodeGroups[0]!, spec: { ...(o.nodeGroups[0]!.spec as object), replicas: 1 } };
    o.machines = [machine('n1', 'md', T0, { nodeRef: { name: 'n1' } })];
    o.nodes = [node('n1', false, T0, T0 + 60_000)];
    const held = pausedGroups(o);
    expect([...held]).to.deep.equal([['MachineDeployment/capi/md', 'MachineDeployment capi/md is paused (cluster.x-k8s.io/paused)']]);
    const s = buildSnapshot(o);
    const out = holdCapacity(s, held, o, T0 + 60_000 + 5 * 60_000);
    expect(out.groups[0]!.maxSize).to.equal(1);
    expect(out.nodes.find((n) => n.name === 'n1')!.unschedulable).to.equal(true);
    // Not yet past the threshold: still capacity.
    expect(holdCapacity(s, new Map(), o, T0 + 60_000 + 60_000).nodes.find((n) => n.name === 'n1')!.unschedulable).to.equal(false);
  });

  it('`headroom plan` does not scale a paused group and says why', async () => {
    const paused = machineDeployment({ namespace: 'capi', name: 'small', replicas: 0, min: 0, max: 5, cpu: '4', memory: '16Gi', annotations: { 'cluster.x-k8s.io/paused': 'true' } });
    const other = machineDeployment({ namespace: 'capi', name: 'large', replicas: 0, min: 0, max: 5, cpu: '8', memory: '32Gi' });
    const text = [paused, other, pendingPod('default', 'p', '1')].map((x) => JSON.stringify(x)).join('\n---\n');
    const result = await planFromInputs([{ source: 'test', text }]);
    expect(result.plan.scaleUps.map((u) => u.name)).to.deep.equal(['large']);
    expect(result.held).to.deep.equal([{ group: 'MachineDeployment/capi/small', reason: 'MachineDeployment capi/small is paused (cluster.x-k8s.io/paused)' }]);
    expect(planText(result)).to.match(/Not scaled: 1 group\(s\)\n.*GROUP\s+REASON\n.*MachineDeployment\/capi\/small\s+MachineDeployment capi\/small is paused/);
  });

  it('a paused Cluster holds all its groups (spec.paused or the annotation), and `headroom plan` says why', async () => {
    const cluster = (name: string, paused: 'spec' | 'annotation' | 'no') => ({
      apiVersion: 'cluster.x-k8s.io/v1beta2', kind: 'Cluster',
      metadata: { namespace: 'capi', name, ...(paused === 'annotation' ? { annotations: { 'cluster.x-k8s.io/paused': '' } } : {}) },
      spec: paused === 'spec' ? { paused: true } : {},
    });
    const small = machineDeployment({ namespace: 'capi', name: 'small', replicas: 0, min: 0, max: 5, cpu: '4', memory: '16Gi', clusterName: 'a' });
    const large = machineDeployment({ namespace: 'capi', name: 'large', replicas: 0, min: 0, max: 5, cpu: '8', memory: '32Gi', clusterName: 'b' });
    for (const how of ['spec', 'annotation'] as const) {
      const text = [cluster('a', how), cluster('b', 'no'), small, large, pendingPod('default', 'p', '1')].map((x) => JSON.stringify(x)).join('\n---\n');
      const result = await planFromInputs([{ source: 'test', text }]);
      expect(result.plan.scaleUps.map((u) => u.name)).to.deep.equal(['large']);
      const why = `Cluster capi/a of MachineDeployment capi/small is paused (${how === 'spec' ? 'spec.paused' : 'cluster.x-k8s.io/paused'})`;
      expect(result.held).to.deep.equal([{ group: 'MachineDeployment/capi/small', reason: why }]);
    }
    // Unpaused, the cheaper group is chosen again.
    const text = [cluster('a', 'no'), cluster('b', 'no'), small, large, pendingPod('default', 'p', '1')].map((x) => JSON.stringify(x)).join('\n---\n');
    expect((await planFromInputs([{ source: 'test', text }])).plan.scaleUps.map((u) => u.name)).to.deep.equal(['small']);
  });
  it('a paused Cluster holds the standalone NodePools whose Machines it owns too, and `headroom plan` says why', async () => {
    const cluster = (paused: boolean) => ({
      apiVersion: 'cluster.x-k8s.io/v1beta2', kind: 'Cluster', metadata: { namespace: 'capi', name: 'c1' }, spec: paused ? { paused: true } : {},
    });
    const pool = {
      apiVersion: 'headroom.dev/v1alpha1', kind: 'NodePool', metadata: { name: 'batch' },
      spec: {
        machineTemplate: {
          namespace: 'capi', clusterName: 'c1',
          bootstrapConfigTemplateRef: { apiVersion: 'b.x/v1', kind: 'BT', name: 'b' },
          infrastructureTemplateRef: { apiVersion: 'i.x/v1', kind: 'IT', name: 'i' },
          capacity: { cpu: '8', memory: '32Gi' },
        },
      },
    };
    const o = emptyClusterObjects();
    o.nodePools = [pool];
    o.clusters = [cluster(true)];
    const why = 'Cluster capi/c1 of NodePool batch is paused (spec.paused)';
    expect([...pausedGroups(o)]).to.deep.equal([['MachineSet/capi/headroom-nodepool-batch', why]]);
    const text = (paused: boolean) => [cluster(paused), pool, pendingPod('default', 'p', '1')].map((x) => JSON.stringify(x)).join('\n---\n');
    const held = await planFromInputs([{ source: 'test', text: text(true) }]);
    expect(held.plan.scaleUps).to.deep.equal([]);
    expect(held.held).to.deep.equal([{ group: 'MachineSet/capi/headroom-nodepool-batch', reason: why }]);
    // Unpaused, the pool gets its Machine.
    expect((await planFromInputs([{ source: 'test', text: text(false) }])).plan.scaleUps.map((u) => u.name)).to.deep.equal(['headroom-nodepool-batch']);
  });
});

describe('GroupBackoff: what outlives the process', () => {
  it('keeps a back-off while it runs or could still double, and a restored one doubles on the next failure', () => {
    const b = new GroupBackoff(100, 1000);
    const until = b.fail('g', 0, 'x');
    expect(b.kept('g', 50)).to.deep.equal({ failures: 1, until, cause: 'x' });
    expect(b.kept('g', until + 999)).to.not.equal(undefined);
    expect(b.kept('g', until + 1000), 'long expired: starts over anyway').to.equal(undefined);
    const next = new GroupBackoff(100, 1000);
    next.restore('g', b.kept('g', 50)!);
    expect(next.active(50).get('g')).to.equal(until);
    expect(next.fail('g', 200) - 200, 'the second failure doubles').to.equal(200);
  });

  it('a restored back-off does not shorten one this process already has', () => {
    const b = new GroupBackoff(100, 1000);
    const until = b.fail('g', 0);
    b.restore('g', { failures: 1, until: until - 50, cause: 'older' });
    expect(b.active(0).get('g')).to.equal(until);
  });
});
