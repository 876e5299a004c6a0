import { expect } from 'chai';
import type { V1Pod, V1Volume } from '@kubernetes/client-node';
import { podBlocker, unsafeLocalVolumes } from '../../../src/disruption/validation.js';

function pod(o: { owner?: string; annotations?: Record<string, string>; volumes?: V1Volume[]; phase?: string } = {}): V1Pod {
  return {
    metadata: {
      namespace: 'ns', name: 'p', uid: 'u',
      ...(o.annotations ? { annotations: o.annotations } : {}),
      ...(o.owner ? { ownerReferences: [{ apiVersion: 'apps/v1', kind: o.owner, name: 'x', uid: 'o', controller: true }] } : {}),
    },
    spec: { containers: [{ name: 'c' }], ...(o.volumes ? { volumes: o.volumes } : {}) },
    status: { phase: o.phase ?? 'Running' },
  };
}

describe('disruption blockers on pods', () => {
  it('a pod with no controller keeps its node, unless safe-to-evict=true; finished pods keep nothing', () => {
    expect(podBlocker(pod())).to.equal('pod ns/p has no controller to recreate it elsewhere');
    expect(podBlocker(pod({ annotations: { 'cluster-autoscaler.kubernetes.io/safe-to-evict': 'true' } }))).to.equal(undefined);
    expect(podBlocker(pod({ phase: 'Succeeded' }))).to.equal(undefined);
    expect(podBlocker(pod({ owner: 'ReplicaSet' }))).to.equal(undefined);
  });

  it('DaemonSet and mirror pods never block by owner or storage, but do-not-disrupt on them still does', () => {
    const hostPath = [{ name: 'logs', hostPath: { path: '/var/log' } }];
    expect(podBlocker(pod({ owner: 'DaemonSet', volumes: hostPath }))).to.equal(undefined);
    expect(podBlocker(pod({ owner: 'Node', volumes: hostPath }))).to.equal(undefined);
    expect(podBlocker(pod({ owner: 'DaemonSet', annotations: { 'karpenter.sh/do-not-disrupt': 'true' } }))).to.match(/karpenter.sh\/do-not-disrupt/);
  });

  it('local storage (hostPath, emptyDir on disk) keeps the node unless safe-to-evict-local-volumes lists every such volume', () => {
    const volumes = [
      { name: 'cache', emptyDir: {} },
      { name: 'ram', emptyDir: { medium: 'Memory' } },
      { name: 'host', hostPath: { path: '/data' } },
      { name: 'cfg', configMap: { name: 'c' } },
    ];
    expect(unsafeLocalVolumes(pod({ volumes }))).to.deep.equal(['cache', 'host']);
    expect(podBlocker(pod({ owner: 'ReplicaSet', volumes }))).to.equal(
      'pod ns/p has local storage (cache, host) not listed in cluster-autoscaler.kubernetes.io/safe-to-evict-local-volumes',
    );
    const some = { 'cluster-autoscaler.kubernetes.io/safe-to-evict-local-volumes': 'cache' };
    expect(podBlocker(pod({ owner: 'ReplicaSet', volumes, annotations: some }))).to.match(/\(host\)/);
    const all = { 'cluster-autoscaler.kubernetes.io/safe-to-evict-local-volumes': 'cache, host' };
    expect(podBlocker(pod({ owner: 'ReplicaSet', volumes, annotations: all }))).to.equal(undefined);
    expect(podBlocker(pod({ owner: 'ReplicaSet', volumes, annotations: { 'cluster-autoscaler.kubernetes.io/safe-to-evict': 'true' } }))).to.equal(undefined);
  });

  it('safe-to-evict=false and do-not-disrupt block any pod', () => {
    expect(podBlocker(pod({ owner: 'ReplicaSet', annotations: { 'cluster-autoscaler.kubernetes.io/safe-to-evict': 'false' } }))).to.match(/safe-to-evict=false/);
    expect(podBlocker(pod({ owner: 'ReplicaSet', annotations: { 'headroom.dev/do-not-disrupt': 'true' } }))).to.match(/headroom.dev\/do-not-disrupt/);
  });
});
