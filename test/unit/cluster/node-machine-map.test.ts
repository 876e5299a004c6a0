import { expect } from 'chai';
import type { V1Node } from '@kubernetes/client-node';
import { parseMachine, parseNodeGroupObject, type MachineView, type NodeGroupView } from '../../../src/api/capi.js';
import { mapNodesToGroups, normalizeProviderID } from '../../../src/cluster/node-machine-map.js';

const V = 'cluster.x-k8s.io/v1beta2';

function group(kind: string, name: string, extra: Record<string, unknown> = {}, meta: Record<string, unknown> = {}): NodeGroupView {
  return parseNodeGroupObject({ apiVersion: V, kind, metadata: { name, namespace: 'ns', ...meta }, spec: { clusterName: 'c', template: { spec: {} }, ...extra } } as never);
}
function machine(name: string, meta: Record<string, unknown> = {}, spec: Record<string, unknown> = {}, status: Record<string, unknown> = {}): MachineView {
  return parseMachine({ apiVersion: V, kind: 'Machine', metadata: { name, namespace: 'ns', ...meta }, spec: { clusterName: 'c', ...spec }, status } as never);
}
function node(name: string, providerID?: string, annotations: Record<string, string> = {}): V1Node {
  return { apiVersion: 'v1', kind: 'Node', metadata: { name, annotations }, spec: providerID ? { providerID } : {} };
}

describe('node-machine map', () => {
  it('normalises providerIDs as Cluster Autoscaler does', () => {
    expect(normalizeProviderID('aws:///us-east-1a/i-0ABC')).to.equal('i-0abc');
    expect(normalizeProviderID('aws://us-east-1a/i-0abc')).to.equal('i-0abc');
    expect(normalizeProviderID('docker:////kind-worker')).to.equal('kind-worker');
    expect(normalizeProviderID('azure:///subscriptions/s/resourceGroups/RG/providers/Microsoft.Compute/virtualMachines/VM-1/')).to.equal('vm-1');
    expect(normalizeProviderID('i-1')).to.equal('i-1');
  });

  const md = group('MachineDeployment', 'md');
  const ms = group('MachineSet', 'md-abc', {}, { ownerReferences: [{ apiVersion: V, kind: 'MachineDeployment', name: 'md', uid: 'u', controller: true }] });
  const lone = group('MachineSet', 'lone');
  const mp = group('MachinePool', 'mp', { providerIDList: ['aws:///us-east-1b/i-POOL1'] }, {});
  const mpWithRefs = parseNodeGroupObject({ apiVersion: V, kind: 'MachinePool', metadata: { name: 'mp2', namespace: 'ns' }, spec: { clusterName: 'c', template: { spec: {} } }, status: { nodeRefs: [{ name: 'pool2-node' }] } } as never);
  const msOwner = [{ apiVersion: V, kind: 'MachineSet', name: 'md-abc', uid: 'u', controller: true }];

  it('maps nodes via nodeRef, providerID and the machine annotation; MachineSets resolve to their MachineDeployment', () => {
    const machines = [
      machine('m-ref', { ownerReferences: msOwner }, {}, { nodeRef: { name: 'n-ref' } }),
      machine('m-pid', { ownerReferences: msOwner }, { providerID: 'aws:///us-east-1a/i-PID' }),
      machine('m-ann', { labels: { 'cluster.x-k8s.io/set-name': 'lone' } }),
      machine('m-pending', { ownerReferences: msOwner }),
      machine('m-gone', { ownerReferences: msOwner, deletionTimestamp: '2026-01-01T00:00:00Z' }),
    ];
    const nodes = [
      node('n-ref'),
      node('n-pid', 'aws://us-east-1a/i-pid'),
      node('n-ann', undefined, { 'cluster.x-k8s.io/machine': 'm-ann', 'cluster.x-k8s.io/cluster-namespace': 'ns' }),
      node('n-pool', 'aws:///us-east-1b/i-pool1'),
      node('pool2-node'),
      node('n-owner', undefined, { 'cluster.x-k8s.io/owner-kind': 'MachineSet', 'cluster.x-k8s.io/owner-name': 'md-abc', 'cluster.x-k8s.io/cluster-namespace': 'ns' }),
      node('stranger', 'aws:///x/i-unknown'),
    ];
    const map = mapNodesToGroups(nodes, machines, [md, ms, lone, mp, mpWithRefs]);
    expect(Object.fromEntries(map.groupOfNode)).to.deep.equal({
      'n-ref': 'MachineDeployment/ns/md',
      'n-pid': 'MachineDeployment/ns/md',
      'n-ann': 'MachineSet/ns/lone',
      'n-pool': 'MachinePool/ns/mp',
      'pool2-node': 'MachinePool/ns/mp2',
      'n-owner': 'MachineDeployment/ns/md',
    });
    expect(map.machineOfNode.get('n-pid')?.name).to.equal('m-pid');
    expect(map.machineOfNode.get('n-ann')?.name).to.equal('m-ann');
    expect(map.nodesOfGroup.get('MachineDeployment/ns/md')).to.deep.equal(['n-ref', 'n-pid', 'n-owner']);
    expect(map.pendingMachinesOfGroup.get('MachineDeployment/ns/md')?.map((m) => m.name)).to.deep.equal(['m-pending']);
    expect(map.groupOfMachine.get('ns/m-gone')).to.equal('MachineDeployment/ns/md');
  });

  it('uses the deployment-name and pool-name labels when owners are missing', () => {
    const machines = [
      machine('a', { labels: { 'cluster.x-k8s.io/deployment-name': 'md' } }, {}, { nodeRef: { name: 'na' } }),
      machine('b', { labels: { 'cluster.x-k8s.io/pool-name': 'mp' } }, {}, { nodeRef: { name: 'nb' } }),
      machine('c', { ownerReferences: [{ apiVersion: V, kind: 'MachinePool', name: 'mp', uid: 'x', controller: true }] }, {}, { nodeRef: { name: 'nc' } }),
    ];
    const map = mapNodesToGroups([node('na'), node('nb'), node('nc')], machines, [md, mp]);
    expect(map.groupOfNode.get('na')).to.equal('MachineDeployment/ns/md');
    expect(map.groupOfNode.get('nb')).to.equal('MachinePool/ns/mp');
    expect(map.groupOfNode.get('nc')).to.equal('MachinePool/ns/mp');
  });

  it('a machine whose node exists under its nodeRef is not pending', () => {
    const m = machine('m', { ownerReferences: msOwner }, {}, { nodeRef: { name: 'n' } });
    expect(mapNodesToGroups([node('n')], [m], [md, ms]).pendingMachinesOfGroup.size).to.equal(0);
    // ...but one whose node is not in the input yet is.
    expect(mapNodesToGroups([], [m], [md, ms]).pendingMachinesOfGroup.get('MachineDeployment/ns/md')).to.have.length(1);
  });
});
