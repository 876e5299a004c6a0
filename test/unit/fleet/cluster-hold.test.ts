import { expect } from 'chai';
import { clusterHold, FLEET_CONDITION, fleetCondition, kubeconfigSecretName, withCondition } from '../../../src/fleet/cluster-hold.js';
import { clusterLeaseName, clusterStateName, labelValue, replicaLeaseName } from '../../../src/fleet/names.js';

const cluster = (extra: { paused?: boolean; deleting?: boolean; annotations?: Record<string, string> } = {}) => ({
  metadata: { name: 'eu', namespace: 'capi', uid: 'u1', generation: 3, ...(extra.deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}), ...(extra.annotations ? { annotations: extra.annotations } : {}) },
  spec: { paused: extra.paused ?? false },
});

describe('fleet: what a Cluster says before it is autoscaled', () => {
  it('holds a paused (spec or CAPI annotation) or deleting Cluster, deleting first', () => {
    expect(clusterHold(cluster())).to.equal(undefined);
    expect(clusterHold(cluster({ paused: true }))?.reason).to.equal('Paused');
    expect(clusterHold(cluster({ annotations: { 'cluster.x-k8s.io/paused': '' } }))?.reason).to.equal('Paused');
    expect(clusterHold(cluster({ paused: true, deleting: true }))?.reason).to.equal('Deleting');
  });

  it('reads CAPI\'s <cluster>-kubeconfig, or the Secret the annotation names; a bad name holds the Cluster', () => {
    expect(kubeconfigSecretName(cluster())).to.deep.equal({ name: 'eu-kubeconfig' });
    expect(kubeconfigSecretName(cluster({ annotations: { 'headroom.dev/kubeconfig-secret': 'eu-headroom' } }))).to.deep.equal({ name: 'eu-headroom' });
    const bad = cluster({ annotations: { 'headroom.dev/kubeconfig-secret': '../Other' } });
    expect(clusterHold(bad)?.reason).to.equal('InvalidAnnotation');
    expect(clusterHold(bad)?.message).to.include('headroom.dev/kubeconfig-secret');
  });

  it('sets its condition without touching CAPI\'s, keeps the transition time while the status stays, and writes nothing when nothing changed', () => {
    const capi = [{ type: 'Available', status: 'True', reason: 'Available', message: '', lastTransitionTime: 't0' }];
    const held = fleetCondition({ reason: 'Paused', message: 'paused' }, 'r1', 3);
    const a = withCondition(capi, held, 't1');
    expect(a.changed).to.equal(true);
    expect(a.conditions[0]).to.deep.equal(capi[0]);
    expect(a.conditions[1]).to.include({ type: FLEET_CONDITION, status: 'False', reason: 'Paused', lastTransitionTime: 't1', observedGeneration: 3 });
    expect(withCondition(a.conditions, held, 't2').changed).to.equal(false);
    const unreachable = withCondition(a.conditions, fleetCondition({ reason: 'WorkloadAPIUnreachable', message: 'x' }, 'r1'), 't3');
    expect(unreachable.conditions[1]).to.include({ reason: 'WorkloadAPIUnreachable', lastTransitionTime: 't1' });
    const ok = withCondition(unreachable.conditions, fleetCondition(undefined, 'r2'), 't4');
    expect(ok.conditions[1]).to.include({ status: 'True', reason: 'Autoscaling', lastTransitionTime: 't4' });
    expect(ok.conditions[1]!.message).to.include('r2');
    expect(ok.conditions).to.have.length(2);
  });
});

describe('fleet: names of its objects', () => {
  it('names a cluster\'s Lease after it, a DNS subdomain distinct for distinct Clusters, hashed past 253 characters', () => {
    expect(clusterLeaseName({ namespace: 'capi', name: 'eu' })).to.equal('headroom-capi.eu');
    // a-b/c and a/b-c must not share a Lease.
    expect(clusterLeaseName({ namespace: 'a-b', name: 'c' })).to.not.equal(clusterLeaseName({ namespace: 'a', name: 'b-c' }));
    const long = clusterLeaseName({ namespace: 'n'.repeat(63), name: `${'c'.repeat(200)}.x` });
    const other = clusterLeaseName({ namespace: 'n'.repeat(63), name: `${'c'.repeat(200)}.y` });
    expect(long.length).to.be.at.most(253);
    expect(long).to.match(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/);
    expect(long).to.not.equal(other);
  });

  it('keys the prediction state by the Cluster\'s uid, replicas by a hash of their identity, label values within 63', () => {
    expect(clusterStateName('hr-headroom-prediction', 'u1')).to.equal('hr-headroom-prediction-u1');
    expect(replicaLeaseName('pod-a_1')).to.match(/^headroom-fleet-[0-9a-f]{10}$/);
    expect(replicaLeaseName('pod-a_1')).to.not.equal(replicaLeaseName('pod-a_2'));
    expect(labelValue('short')).to.equal('short');
    expect(labelValue('x'.repeat(64))).to.have.length(16);
  });
});
