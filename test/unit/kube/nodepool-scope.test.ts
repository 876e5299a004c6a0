import { expect } from 'chai';
import type { KubernetesObject } from '@kubernetes/client-node';
import { clusterInDiscovery, nodePoolScope, parseGroupDiscoverySpec } from '../../../src/kube/discovery.js';

const pool = (name: string, clusterRef?: unknown): KubernetesObject =>
  ({ apiVersion: 'headroom.dev/v1alpha1', kind: 'NodePool', metadata: { name }, spec: { nodeGroupSelector: {}, ...(clusterRef === undefined ? {} : { clusterRef }) } }) as KubernetesObject;

describe('which NodePools a controller serves (nodePoolScope, ADR 0140)', () => {
  const pools = [pool('eu', { namespace: 'fleet', name: 'eu' }), pool('us', { namespace: 'fleet', name: 'us' }), pool('legacy'), pool('broken', 'eu')];
  const names = (filter: ((o: KubernetesObject) => boolean) | undefined) => pools.filter((p) => !filter || filter(p)).map((p) => p.metadata!.name);

  it('without discovery: every pool (back-compat)', () => {
    expect(nodePoolScope([], false)).to.equal(undefined);
  });

  it('discovery naming one Cluster: the pools naming it, those naming none, and malformed ones (to report them)', () => {
    expect(names(nodePoolScope([parseGroupDiscoverySpec('clusterapi:namespace=fleet,clusterName=eu')], false))).to.deep.equal(['eu', 'legacy', 'broken']);
    expect(names(nodePoolScope([parseGroupDiscoverySpec('clusterapi:namespace=other,clusterName=eu')], false))).to.deep.equal(['legacy', 'broken']);
  });

  it('a namespace-only spec serves every Cluster of the namespace', () => {
    expect(names(nodePoolScope([parseGroupDiscoverySpec('clusterapi:namespace=fleet')], false))).to.deep.equal(['eu', 'us', 'legacy', 'broken']);
  });

  it('fleet mode (requireClusterRef): pools without clusterRef are left out', () => {
    expect(names(nodePoolScope([parseGroupDiscoverySpec('clusterapi:namespace=fleet,clusterName=us')], true))).to.deep.equal(['us', 'broken']);
    expect(names(nodePoolScope([], true))).to.deep.equal(['eu', 'us', 'broken']);
  });

  it('clusterInDiscovery ORs the specs', () => {
    const specs = ['clusterapi:namespace=a,clusterName=x', 'clusterapi:clusterName=y'].map(parseGroupDiscoverySpec);
    expect(clusterInDiscovery(specs, 'a', 'x')).to.equal(true);
    expect(clusterInDiscovery(specs, 'b', 'x')).to.equal(false);
    expect(clusterInDiscovery(specs, 'b', 'y')).to.equal(true);
  });
});
