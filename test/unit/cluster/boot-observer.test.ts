import type { V1Node } from '@kubernetes/client-node';
import { expect } from 'chai';
import type { UnstructuredObject } from '../../../src/api/unstructured-object.js';
import { BootObserver } from '../../../src/cluster/boot-observer.js';

const md: UnstructuredObject = {
  apiVersion: 'cluster.x-k8s.io/v1beta2', kind: 'MachineDeployment',
  metadata: { name: 'workers', namespace: 'capi', uid: 'md1' },
  spec: { clusterName: 'c1', replicas: 2, template: { spec: { clusterName: 'c1' } } },
};

function machine(name: string, created: string, nodeName?: string, deleting = false): UnstructuredObject {
  return {
    apiVersion: 'cluster.x-k8s.io/v1beta2', kind: 'Machine',
    metadata: {
      name, namespace: 'capi', uid: name, creationTimestamp: new Date(created),
      labels: { 'cluster.x-k8s.io/deployment-name': 'workers' },
      ...(deleting ? { deletionTimestamp: new Date(created) } : {}),
    },
    spec: { clusterName: 'c1' },
    status: nodeName ? { nodeRef: { name: nodeName } } : {},
  };
}

function node(name: string, readyAt?: string): V1Node {
  return {
    metadata: { name },
    status: { conditions: [{ type: 'Ready', status: readyAt ? 'True' : 'False', ...(readyAt ? { lastTransitionTime: new Date(readyAt) } : {}) }] },
  };
}

describe('BootObserver (Machine created -> Node Ready, per node group)', () => {
  it('times a Machine seen booting once its node is Ready, once, under its MachineDeployment', () => {
    const obs = new BootObserver();
    const created = '2026-03-02T10:00:00Z';
    expect(obs.observe({ nodeGroups: [md], machines: [machine('m1', created)], nodes: [] })).to.deep.equal([]);
    expect(obs.tracking).to.equal(1);
    // Node registered, not Ready yet.
    expect(obs.observe({ nodeGroups: [md], machines: [machine('m1', created, 'n1')], nodes: [node('n1')] })).to.deep.equal([]);
    const done = obs.observe({ nodeGroups: [md], machines: [machine('m1', created, 'n1')], nodes: [node('n1', '2026-03-02T10:02:30Z')] });
    expect(done).to.deep.equal([{ groupId: 'MachineDeployment/capi/workers', machine: 'capi/m1', ms: 150_000 }]);
    expect(obs.observe({ nodeGroups: [md], machines: [machine('m1', created, 'n1')], nodes: [node('n1', '2026-03-02T10:02:30Z')] })).to.deep.equal([]);
    expect(obs.tracking).to.equal(0);
  });

  it('never times nodes that were already Ready when first seen (a controller restart), and forgets deleted Machines', () => {
    const obs = new BootObserver();
    expect(obs.observe({
      nodeGroups: [md], machines: [machine('old', '2026-03-01T00:00:00Z', 'n0')], nodes: [node('n0', '2026-03-02T09:00:00Z')],
    })).to.deep.equal([]);
    obs.observe({ nodeGroups: [md], machines: [machine('gone', '2026-03-02T10:00:00Z')], nodes: [] });
    expect(obs.tracking).to.equal(1);
    obs.observe({ nodeGroups: [md], machines: [machine('gone', '2026-03-02T10:00:00Z', undefined, true)], nodes: [] });
    expect(obs.tracking).to.equal(0);
  });
});
