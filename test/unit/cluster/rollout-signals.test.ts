import type { V1Deployment } from '@kubernetes/client-node';
import { expect } from 'chai';
import { deploymentDesired, rolloutSignals } from '../../../src/cluster/rollout-signals.js';

function deployment(name: string, spec: Partial<NonNullable<V1Deployment['spec']>>, status: V1Deployment['status'] = {}, generation = 1): V1Deployment {
  return {
    metadata: { name, namespace: 'ns', generation },
    spec: { selector: {}, template: {}, ...spec },
    status: { observedGeneration: 1, ...status },
  };
}

describe('rollout signals (pods a workload is about to create)', () => {
  it('a Deployment scaled up wants its new replicas', () => {
    expect(rolloutSignals([deployment('web', { replicas: 10 }, { replicas: 4, updatedReplicas: 10 })])).to.deep.equal([
      { key: 'Deployment/ns/web', current: 4, desired: 10 },
    ]);
  });

  it('a rolling update adds maxSurge (default 25%, rounded up; an int; none for Recreate or paused)', () => {
    expect(deploymentDesired(deployment('a', { replicas: 8 }, { replicas: 8, updatedReplicas: 2 }))).to.equal(10);
    expect(deploymentDesired(deployment('b', { replicas: 8, strategy: { rollingUpdate: { maxSurge: 3 } } }, { replicas: 8, updatedReplicas: 0 }))).to.equal(11);
    expect(deploymentDesired(deployment('c', { replicas: 8, strategy: { rollingUpdate: { maxSurge: '50%' } } }, { replicas: 8, updatedReplicas: 0 }))).to.equal(12);
    expect(deploymentDesired(deployment('d', { replicas: 8, strategy: { type: 'Recreate' } }, { replicas: 8, updatedReplicas: 0 }))).to.equal(8);
    expect(deploymentDesired(deployment('e', { replicas: 8, paused: true }, { replicas: 8, updatedReplicas: 0 }))).to.equal(8);
    // A new generation not yet observed is a rollout about to start.
    expect(deploymentDesired(deployment('f', { replicas: 4 }, { replicas: 4, updatedReplicas: 4 }, 2))).to.equal(5);
  });

  it('a settled Deployment and a StatefulSet at its replicas announce nothing; a scaled-up StatefulSet does', () => {
    expect(rolloutSignals(
      [deployment('web', { replicas: 3 }, { replicas: 3, updatedReplicas: 3 })],
      [
        { metadata: { name: 'db', namespace: 'ns' }, spec: { replicas: 3 }, status: { replicas: 3 } },
        { metadata: { name: 'kv', namespace: 'ns' }, spec: { replicas: 5 }, status: { replicas: 2 } },
      ] as never,
    )).to.deep.equal([{ key: 'StatefulSet/ns/kv', current: 2, desired: 5 }]);
  });
});
