import { expect } from 'chai';
import { isNodeSyncedLabel, nodeSyncedLabels } from '../../../src/api/capi-node-labels.js';

describe('labels CAPI copies from a Machine to its Node (v1.14 GetManagedLabels)', () => {
  it('copies node-role.kubernetes.io/*, and node-restriction.kubernetes.io / node.cluster.x-k8s.io with subdomains', () => {
    for (const k of ['node-role.kubernetes.io/worker', 'node-restriction.kubernetes.io/a', 'x.node-restriction.kubernetes.io/a', 'node.cluster.x-k8s.io/a', 'y.node.cluster.x-k8s.io/a']) {
      expect(isNodeSyncedLabel(k), k).to.equal(true);
    }
  });

  it('keeps every other label on the Machine: other domains, look-alikes, subdomains of node-role, bare keys', () => {
    for (const k of ['node.headroom.dev/size', 'cluster.x-k8s.io/deployment-name', 'xnode.cluster.x-k8s.io/a', 'a.node-role.kubernetes.io/b', 'node-role.kubernetes.io.evil/a', 'role', 'topology.kubernetes.io/zone']) {
      expect(isNodeSyncedLabel(k), k).to.equal(false);
    }
    expect(nodeSyncedLabels({ 'node-role.kubernetes.io/worker': '', app: 'x', 'node.cluster.x-k8s.io/size': 's' })).to.deep.equal({ 'node-role.kubernetes.io/worker': '', 'node.cluster.x-k8s.io/size': 's' });
  });
});
