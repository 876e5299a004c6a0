import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import type { UnstructuredObject } from '../../../src/api/unstructured-object.js';
import { buildSnapshot, type SnapshotIssue } from '../../../src/cluster/build-snapshot.js';
import { SnapshotBuilder } from '../../../src/cluster/snapshot-builder.js';
import { loadObjects } from '../../../src/cluster/load-objects.js';
import type { ClusterObjects } from '../../../src/cluster/objects.js';

// buildSnapshot memoizes per-object conversions by object identity (objects are
// immutable: a change is a new object), and a SnapshotBuilder remembers its last build,
// node mapping and learned shapes. These tests rebuild through one builder from the same
// objects with one replaced and check that the snapshot equals a build from scratch.
const objects = () => loadObjects(readFileSync(new URL('../../fixtures/example-cluster.yaml', import.meta.url), 'utf8'));
const NODE = 'ip-10-0-1-5.ec2.internal';

/** A deep copy: same content, new identities, so no memo can apply. */
const fresh = (o: ClusterObjects): ClusterObjects => structuredClone(o);

describe('SnapshotBuilder', () => {
  let builder: SnapshotBuilder;
  beforeEach(() => { builder = new SnapshotBuilder(); });
  const build = (o: ClusterObjects, options?: Parameters<SnapshotBuilder['build']>[1]) => builder.build(o, options);

  it('gives the same snapshot when rebuilt from the same objects', () => {
    const o = objects();
    const first = build(o);
    expect(build(o)).to.deep.equal(first);
    expect(buildSnapshot(fresh(o))).to.deep.equal(first);
  });

  it('sees a replaced pod (new requests, now pending) and a replaced node (new allocatable)', () => {
    const o = objects();
    build(o);
    const i = o.pods.findIndex((p) => p.spec?.nodeName === NODE && p.metadata?.name?.startsWith('web-'));
    expect(i).to.be.greaterThan(-1);
    const pod = o.pods[i]!;
    const { nodeName: _bound, ...spec } = pod.spec!;
    const replaced: V1Pod = {
      ...pod,
      spec: { ...spec, containers: spec.containers.map((c) => ({ ...c, resources: { requests: { cpu: '1234m', memory: '1Gi' } } })) },
      status: { phase: 'Pending' },
    };
    const j = o.nodes.findIndex((n) => n.metadata?.name === NODE);
    const node = o.nodes[j]!;
    const newNode: V1Node = { ...node, status: { ...node.status, allocatable: { ...node.status?.allocatable, cpu: '1500m' } } };
    const changed: ClusterObjects = { ...o, pods: o.pods.with(i, replaced), nodes: o.nodes.with(j, newNode) };

    const s = build(changed);
    expect(s).to.deep.equal(buildSnapshot(fresh(changed)));
    const pending = s.pendingPods.find((p) => p.key === `${pod.metadata!.namespace}/${pod.metadata!.name}`);
    expect(pending?.requests.cpu).to.equal(1234);
    expect(s.nodes.find((n) => n.name === NODE)!.allocatable.cpu).to.equal(1500);
    expect(s.nodes.find((n) => n.name === NODE)!.pods.map((p) => p.name)).to.not.include(pod.metadata!.name);
  });

  it('sees a replaced Machine (node mapping) even when the other inputs are the same objects', () => {
    const o = objects();
    const before = build(o);
    expect(before.nodes.find((n) => n.name === NODE)!.groupId).to.equal('MachineDeployment/default/small');
    const k = o.machines.findIndex((m) => (m.status as { nodeRef?: { name?: string } } | undefined)?.nodeRef?.name === NODE);
    expect(k).to.be.greaterThan(-1);
    const m = o.machines[k]!;
    const marked: UnstructuredObject = {
      ...m,
      metadata: { ...m.metadata, annotations: { ...m.metadata?.annotations, 'cluster.x-k8s.io/delete-machine': 'yes' } },
    };
    const changed: ClusterObjects = { ...o, machines: o.machines.with(k, marked) };
    const s = build(changed);
    expect(s).to.deep.equal(buildSnapshot(fresh(changed)));
    expect(s.nodes.find((n) => n.name === NODE)!.unschedulable).to.equal(true);
    expect(before.nodes.find((n) => n.name === NODE)!.unschedulable).to.equal(false);
  });

  it('reports an invalid object on every build, also when the last snapshot is reused', () => {
    const o = objects();
    const bad = { ...o.pods[0]!, spec: { ...o.pods[0]!.spec!, containers: 'oops' } } as unknown as V1Pod;
    const withBad: ClusterObjects = { ...o, pods: [...o.pods, bad] };
    for (let n = 0; n < 2; n++) {
      const issues: SnapshotIssue[] = [];
      build(withBad, { strict: false, onIssue: (i) => issues.push(i) });
      expect(issues.filter((i) => i.severity === 'error'), `build ${n + 1}`).to.have.length(1);
    }
  });

  it('reuses nothing stale when a caller pushes into the same arrays between builds', () => {
    const o = objects();
    const first = build(o);
    const pod = o.pods.find((p) => p.spec?.nodeName === NODE && p.metadata?.name?.startsWith('web-'))!;
    const extra: V1Pod = { ...pod, metadata: { ...pod.metadata, name: 'pushed', uid: 'pushed' }, spec: { ...pod.spec!, nodeName: undefined }, status: { phase: 'Pending' } };
    o.pods.push(extra);
    const second = build(o);
    expect(second.pendingPods.map((p) => p.name)).to.include('pushed');
    expect(first.pendingPods.map((p) => p.name)).to.not.include('pushed');
    expect(second).to.deep.equal(buildSnapshot(fresh(o)));
  });

  it('appends extra pending pods to the build of the objects alone, which loops with and without them share', () => {
    const o = objects();
    const plain = build(o);
    const extra = { ...plain.pendingPods[0]!, key: 'x/predicted', name: 'predicted', predicted: true };
    const withExtra = build(o, { extraPendingPods: [extra] });
    expect(withExtra).to.deep.equal(buildSnapshot(fresh(o), { extraPendingPods: [extra] }));
    expect(withExtra.pendingPods.map((p) => p.key)).to.include('x/predicted');
    // The same build underneath: every part but the pending pods is the very same.
    expect(withExtra.nodes).to.equal(plain.nodes);
    expect(withExtra.groups).to.equal(plain.groups);
    expect(build(o)).to.equal(plain);
    expect(plain.pendingPods.map((p) => p.key)).to.not.include('x/predicted');
  });

  it('reuses its last snapshot for the very same objects; another builder does not share it', () => {
    const o = objects();
    const first = build(o);
    expect(build(o)).to.equal(first);
    const other = new SnapshotBuilder();
    const second = other.build(o);
    expect(second).to.not.equal(first);
    expect(second).to.deep.equal(first);
    // A one-off build keeps no state at all.
    expect(buildSnapshot(o)).to.not.equal(first);
  });

  it('gives the same snapshot as a one-off build after the groups change', () => {
    const o = objects();
    build(o);
    const withoutGroups: ClusterObjects = { ...o, nodeGroups: [] };
    expect(build(withoutGroups)).to.deep.equal(buildSnapshot(fresh(withoutGroups)));
    expect(build(o)).to.deep.equal(buildSnapshot(fresh(o)));
  });

  it('keeps a node\'s labels (its own and its Machine\'s node labels) the same object while neither changes, so learned shapes are kept', () => {
    const o = objects();
    const first = build(o);
    const withMachine = first.nodes.filter((n) => n.machine && !n.inFlight);
    expect(withMachine.length, 'nodes with a Machine in the fixture').to.be.greaterThan(0);
    // A pod deleted: a new build (pods changed), the nodes and Machines the same objects.
    const i = o.pods.findIndex((p) => p.spec?.nodeName === NODE);
    const fewer: ClusterObjects = { ...o, pods: o.pods.toSpliced(i, 1) };
    const second = build(fewer);
    expect(second).to.not.equal(first);
    expect(second).to.deep.equal(buildSnapshot(fresh(fewer)));
    for (const n of withMachine) expect(second.nodes.find((m) => m.name === n.name)!.labels, n.name).to.equal(n.labels);
    // A node's own labels changed: its labels are a new object, with the change.
    const j = o.nodes.findIndex((n) => n.metadata?.name === withMachine[0]!.name);
    const node = o.nodes[j]!;
    const labelled: ClusterObjects = { ...fewer, nodes: fewer.nodes.with(j, { ...node, metadata: { ...node.metadata, labels: { ...node.metadata?.labels, extra: 'x' } } }) };
    const third = build(labelled);
    const relabelled = third.nodes.find((m) => m.name === withMachine[0]!.name)!.labels;
    expect(relabelled).to.not.equal(withMachine[0]!.labels);
    expect(relabelled).to.include({ extra: 'x' });
    expect(third).to.deep.equal(buildSnapshot(fresh(labelled)));
  });

  it('a Node heartbeat (new object, new condition times and resourceVersion) keeps the last snapshot; a change it reads does not', () => {
    const o = objects();
    const first = build(o);
    const j = o.nodes.findIndex((n) => n.metadata?.name === NODE);
    const node = o.nodes[j]!;
    const beat = (n: V1Node, at: number): V1Node => ({
      ...n,
      metadata: { ...n.metadata, resourceVersion: String(at) },
      status: { ...n.status, conditions: (n.status?.conditions ?? []).map((c) => ({ ...c, lastHeartbeatTime: new Date(at) })) },
    });
    const beaten: ClusterObjects = { ...o, nodes: o.nodes.with(j, beat(node, 1)) };
    expect(build(beaten), 'the very same snapshot').to.equal(first);
    expect(buildSnapshot(fresh(beaten))).to.deep.equal(first);
    expect(build({ ...o, nodes: o.nodes.with(j, beat(node, 2)) })).to.equal(first);
    // Not Ready any more: read by buildSnapshot (learned shapes, ready nodes), so a new build.
    const notReady: ClusterObjects = {
      ...o,
      nodes: o.nodes.with(j, { ...node, status: { ...node.status, conditions: (node.status?.conditions ?? []).map((c) => (c.type === 'Ready' ? { ...c, status: 'False' } : c)) } }),
    };
    const s = build(notReady);
    expect(s).to.not.equal(first);
    expect(s).to.deep.equal(buildSnapshot(fresh(notReady)));
    const labelled: ClusterObjects = { ...o, nodes: o.nodes.with(j, { ...node, metadata: { ...node.metadata, labels: { ...node.metadata?.labels, extra: 'x' } } }) };
    expect(build(labelled)).to.deep.equal(buildSnapshot(fresh(labelled)));
  });
});
