import { expect } from 'chai';
import { NodePoolError, parseNodePool } from '../../../src/api/nodepool.js';
import { poolsForCluster } from '../../../src/api/nodepool-cluster-ref.js';
import type { UnstructuredObject } from '../../../src/api/unstructured-object.js';
import { buildSnapshot } from '../../../src/cluster/build-snapshot.js';
import { emptyClusterObjects } from '../../../src/cluster/objects.js';

const pool = (name: string, spec: Record<string, unknown>) => ({ apiVersion: 'headroom.dev/v1alpha1', kind: 'NodePool', metadata: { name }, spec });

const md = (namespace: string, clusterName: string, name: string): UnstructuredObject => ({
  apiVersion: 'cluster.x-k8s.io/v1beta2', kind: 'MachineDeployment',
  metadata: {
    name, namespace, labels: { pool: 'general' },
    annotations: {
      'cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size': '0',
      'cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size': '5',
      'capacity.cluster-autoscaler.kubernetes.io/cpu': '4',
      'capacity.cluster-autoscaler.kubernetes.io/memory': '16Gi',
    },
  },
  spec: { clusterName, replicas: 0, template: { spec: { clusterName } } },
});

describe('NodePool spec.clusterRef (ADR 0140)', () => {
  it('parses the Cluster a pool is for', () => {
    const p = parseNodePool(pool('a', { clusterRef: { namespace: 'fleet', name: 'prod-eu' }, nodeGroupSelector: {} }));
    expect(p.clusterRef).to.deep.equal({ namespace: 'fleet', name: 'prod-eu' });
    expect(parseNodePool(pool('b', { nodeGroupSelector: {} })).clusterRef).to.equal(undefined);
  });

  it('refuses a malformed clusterRef, naming the field', () => {
    const bad: Array<[unknown, RegExp]> = [
      ['prod', /clusterRef must be an object/],
      [{ name: 'prod' }, /clusterRef.namespace/],
      [{ namespace: 'Fleet', name: 'prod' }, /clusterRef.namespace/],
      [{ namespace: 'fleet' }, /clusterRef.name must be/],
      [{ namespace: 'fleet', name: 'prod', kind: 'Cluster' }, /clusterRef.kind is not supported/],
    ];
    for (const [ref, message] of bad) {
      expect(() => parseNodePool(pool('x', { clusterRef: ref, nodeGroupSelector: {} })), JSON.stringify(ref)).to.throw(NodePoolError, message);
    }
  });

  it('refuses a machineTemplate in another cluster than clusterRef', () => {
    const machineTemplate = {
      namespace: 'fleet', clusterName: 'prod-us',
      bootstrapConfigTemplateRef: { apiVersion: 'bootstrap.cluster.x-k8s.io/v1beta2', kind: 'KubeadmConfigTemplate', name: 'b' },
      infrastructureTemplateRef: { apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta2', kind: 'DockerMachineTemplate', name: 'i' },
    };
    expect(() => parseNodePool(pool('x', { clusterRef: { namespace: 'fleet', name: 'prod-eu' }, machineTemplate })))
      .to.throw(NodePoolError, /machineTemplate \(fleet\/prod-us\) must be in the cluster of clusterRef \(fleet\/prod-eu\)/);
    expect(parseNodePool(pool('y', { clusterRef: { namespace: 'fleet', name: 'prod-us' }, machineTemplate })).machineTemplate!.clusterName).to.equal('prod-us');
  });

  it('poolsForCluster keeps the pools of that Cluster and those naming none', () => {
    const eu = parseNodePool(pool('eu', { clusterRef: { namespace: 'fleet', name: 'eu' }, nodeGroupSelector: {} }));
    const us = parseNodePool(pool('us', { clusterRef: { namespace: 'fleet', name: 'us' }, nodeGroupSelector: {} }));
    const any = parseNodePool(pool('any', { nodeGroupSelector: {} }));
    expect(poolsForCluster([eu, us, any], 'fleet', 'eu').map((p) => p.name)).to.deep.equal(['eu', 'any']);
    expect(poolsForCluster([eu, us, any], 'other', 'eu').map((p) => p.name)).to.deep.equal(['any']);
  });

  it('in a snapshot, a pool applies to the groups of its Cluster only, and its limits count only them', () => {
    const objects = emptyClusterObjects();
    objects.nodeGroups.push(md('fleet', 'eu', 'eu-workers'), md('fleet', 'us', 'us-workers'));
    objects.nodePools.push(
      pool('eu', { clusterRef: { namespace: 'fleet', name: 'eu' }, weight: 50, nodeGroupSelector: { matchLabels: { pool: 'general' } }, limits: { cpu: '8' } }),
      pool('us', { clusterRef: { namespace: 'fleet', name: 'us' }, weight: 10, nodeGroupSelector: { matchLabels: { pool: 'general' } } }),
    );
    const s = buildSnapshot(objects);
    expect(Object.fromEntries(s.groups.map((g) => [g.id, g.nodePool]))).to.deep.equal({
      'MachineDeployment/fleet/eu-workers': 'eu', 'MachineDeployment/fleet/us-workers': 'us',
    });
    // Without clusterRef the heavier pool would take both groups.
    const before = emptyClusterObjects();
    before.nodeGroups.push(md('fleet', 'eu', 'eu-workers'), md('fleet', 'us', 'us-workers'));
    before.nodePools.push(
      pool('eu', { weight: 50, nodeGroupSelector: { matchLabels: { pool: 'general' } } }),
      pool('us', { weight: 10, nodeGroupSelector: { matchLabels: { pool: 'general' } } }),
    );
    expect(buildSnapshot(before).groups.map((g) => g.nodePool)).to.deep.equal(['eu', 'eu']);
  });
});
