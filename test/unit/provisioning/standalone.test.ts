import { expect } from 'chai';
import type { V1Node } from '@kubernetes/client-node';
import type { UnstructuredObject } from '../../../src/api/unstructured-object.js';
import { buildSnapshot } from '../../../src/cluster/build-snapshot.js';
import { emptyClusterObjects } from '../../../src/cluster/objects.js';
import { standaloneMachineName, withStandalonePools } from '../../../src/provisioning/standalone.js';
import { enforceLimits } from '../../../src/provisioning/limits.js';

function pool(limits: Record<string, unknown> = {}) {
  return {
    apiVersion: 'headroom.dev/v1alpha1', kind: 'NodePool', metadata: { name: 'batch' },
    spec: {
      weight: 7, limits,
      machineTemplate: {
        namespace: 'capi', clusterName: 'c1',
        bootstrapConfigTemplateRef: { apiVersion: 'b.x/v1', kind: 'BT', name: 'b' },
        infrastructureTemplateRef: { apiVersion: 'i.x/v1', kind: 'IT', name: 'i' },
        capacity: { cpu: '8', memory: '32Gi' }, labels: { role: 'batch', 'karpenter.sh/capacity-type': 'spot' },
      },
    },
  };
}

function machine(name: string, nodeName?: string): UnstructuredObject {
  return {
    apiVersion: 'cluster.x-k8s.io/v1beta2', kind: 'Machine',
    metadata: { name, namespace: 'capi', labels: { 'headroom.dev/nodepool': 'batch' } },
    spec: { clusterName: 'c1' }, ...(nodeName ? { status: { nodeRef: { name: nodeName } } } : {}),
  };
}

describe('standalone NodePools as snapshot groups', () => {
  it('adds a group whose replicas are the pool\'s Machines, with in-flight nodes for Machines without a Node and pool usage', () => {
    const objs = emptyClusterObjects();
    objs.nodePools = [pool({ nodes: 3 })];
    objs.machines = [machine('m1', 'n1'), machine('m2'), { ...machine('gone'), metadata: { ...machine('gone').metadata, deletionTimestamp: '2026-01-01T00:00:00Z' } } as unknown as UnstructuredObject];
    objs.nodes = [{ metadata: { name: 'n1', labels: { role: 'batch' } }, status: { allocatable: { cpu: '8', memory: '32Gi', pods: '110' }, conditions: [{ type: 'Ready', status: 'True' }] } } as V1Node];
    const { snapshot, standalone } = withStandalonePools(buildSnapshot(objs), objs);
    const g = snapshot.groups.find((x) => x.name === 'headroom-nodepool-batch')!;
    expect(g).to.deep.include({ kind: 'MachineSet', namespace: 'capi', replicas: 2, minSize: 0, maxSize: 3, nodePool: 'batch', weight: 7, capacityType: 'spot' });
    expect(g.template.allocatable).to.include({ cpu: 8000, memory: 32 * 2 ** 30 });
    // The Machines carry role, capacity-type and headroom.dev/nodepool; CAPI copies none of them to the Node.
    expect(g.template.labels).to.not.have.any.keys('role', 'karpenter.sh/capacity-type', 'headroom.dev/nodepool');
    expect(snapshot.nodes.find((n) => n.name === 'n1')!.groupId).to.equal(g.id);
    const inflight = snapshot.nodes.filter((n) => n.inFlight && n.groupId === g.id);
    expect(inflight.map((n) => n.name)).to.deep.equal(['in-flight:capi/m2']);
    expect(snapshot.limits.batch!.used).to.deep.equal({ cpu: 16_000, memory: 64 * 2 ** 30, nodes: 2 });
    expect(standalone.get(g.id)).to.deep.equal({ nodePool: 'batch', namespace: 'capi', clusterName: 'c1', machines: ['m1', 'm2'] });
    // The pool's node limit (3, with 2 used) caps a scale-up at one more Machine.
    expect(enforceLimits(snapshot, [{ kind: 'MachineSet', namespace: 'capi', name: 'headroom-nodepool-batch', from: 2, to: 6 }])[0]!.to).to.equal(3);
  });

  it('two pools: each counts its own nodes; the snapshot\'s nodes are shared, a node joining a pool is a copy', () => {
    const objs = emptyClusterObjects();
    const gpu = pool({ nodes: 5 });
    gpu.metadata.name = 'gpu';
    gpu.spec.machineTemplate = { ...gpu.spec.machineTemplate, capacity: { cpu: '16', memory: '64Gi' } };
    objs.nodePools = [pool({ nodes: 3 }), gpu];
    const gpuMachine = machine('g1');
    gpuMachine.metadata!.labels = { 'headroom.dev/nodepool': 'gpu' };
    objs.machines = [machine('m1', 'n1'), gpuMachine];
    const node = (name: string) => ({ metadata: { name }, status: { allocatable: { cpu: '8', memory: '32Gi', pods: '110' }, conditions: [{ type: 'Ready', status: 'True' }] } } as V1Node);
    objs.nodes = [node('n1'), node('other')];
    const base = buildSnapshot(objs);
    const { snapshot } = withStandalonePools(base, objs);
    expect(snapshot.limits.batch!.used).to.deep.equal({ cpu: 8000, memory: 32 * 2 ** 30, nodes: 1 });
    expect(snapshot.limits.gpu!.used).to.deep.equal({ cpu: 16_000, memory: 64 * 2 ** 30, nodes: 1 });
    const n1 = snapshot.nodes.find((n) => n.name === 'n1')!;
    expect(n1.groupId).to.equal('MachineSet/capi/headroom-nodepool-batch');
    expect(base.nodes.find((n) => n.name === 'n1')!.groupId).to.equal(undefined);
    expect(snapshot.nodes.find((n) => n.name === 'other')).to.equal(base.nodes.find((n) => n.name === 'other'));
    expect(snapshot.nodes.filter((n) => n.inFlight).map((n) => n.name)).to.deep.equal(['in-flight:capi/g1']);
  });

  it('leaves the snapshot alone without standalone pools', () => {
    const objs = emptyClusterObjects();
    const s = buildSnapshot(objs);
    expect(withStandalonePools(s, objs).snapshot).to.equal(s);
  });
});

describe('standaloneMachineName', () => {
  it('is the same for the same decision and differs by ordinal and by the view it was made on', () => {
    const a = standaloneMachineName('batch', ['m2', 'm1'], 2);
    expect(standaloneMachineName('batch', ['m1', 'm2'], 2)).to.equal(a);
    expect(standaloneMachineName('batch', ['m1', 'm2'], 3)).to.not.equal(a);
    expect(standaloneMachineName('batch', ['m1', 'm2', 'm3'], 2)).to.not.equal(a);
    expect(a).to.match(/^batch-[0-9a-f]{10}$/);
  });

  it('is a valid object name for a long pool name', () => {
    const n = standaloneMachineName(`${'a'.repeat(49)}.b-c`, [], 0);
    expect(n.length).to.be.at.most(63);
    expect(n).to.match(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/);
    expect(n).to.not.match(/[-.]-/);
  });
});
