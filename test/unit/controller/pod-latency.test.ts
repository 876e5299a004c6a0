import type { V1Node, V1Pod } from '@kubernetes/client-node';
import { expect } from 'chai';
import { emptyClusterObjects, type ClusterObjects } from '../../../src/cluster/objects.js';
import { PodLatencyTracker } from '../../../src/controller/pod-latency.js';

function pod(firstSeen?: string, nodeName?: string): V1Pod {
  return {
    metadata: {
      name: 'p', namespace: 'ns', uid: 'u1', creationTimestamp: new Date('2026-03-02T10:00:01Z'),
      ...(firstSeen ? { annotations: { 'headroom.dev/first-seen': firstSeen } } : {}),
    },
    spec: { containers: [], ...(nodeName ? { nodeName } : {}) },
  };
}

const node: V1Node = {
  metadata: { name: 'n1' },
  status: { conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: new Date('2026-03-02T10:00:31Z') }] },
};

function run(unbound: V1Pod, bound: V1Pod): number[] {
  let objects: ClusterObjects = { ...emptyClusterObjects(), pods: [unbound], nodes: [node] };
  const seen: number[] = [];
  const tracker = new PodLatencyTracker({ objects: () => objects, synced: () => true, onChange: () => () => {} }, (s) => seen.push(s));
  tracker.scan();
  objects = { ...objects, pods: [bound] };
  tracker.scan();
  return seen;
}

describe('PodLatencyTracker (pod startup latency)', () => {
  it('measures from the webhook\'s first-seen time (milliseconds) when the pod carries it', () => {
    expect(run(pod('2026-03-02T10:00:00.250Z'), pod('2026-03-02T10:00:00.250Z', 'n1'))).to.deep.equal([30.75]);
  });

  it('falls back to creationTimestamp without the annotation (or with an unreadable one)', () => {
    expect(run(pod(), pod(undefined, 'n1'))).to.deep.equal([30]);
    expect(run(pod('yesterday'), pod('yesterday', 'n1'))).to.deep.equal([30]);
  });
});

describe('PodLatencyTracker (creation to Running)', () => {
  function phases(...seq: Array<string | undefined>): number[] {
    let objects: ClusterObjects = emptyClusterObjects();
    const seen: number[] = [];
    const now = new Date('2026-03-02T10:01:01Z').getTime();
    const tracker = new PodLatencyTracker({ objects: () => objects, synced: () => true, onChange: () => () => {} }, () => {}, 500, (s) => seen.push(s), () => now);
    for (const phase of seq) {
      objects = { ...objects, pods: [{ ...pod(), status: phase ? { phase } : {} }] };
      tracker.scan();
    }
    return seen;
  }

  it('observes a pod seen Pending once, when it is seen Running, from its creation', () => {
    expect(phases('Pending', 'Pending', 'Running', 'Running')).to.deep.equal([60]);
  });

  it('a pod first seen Running (it ran before Headroom started) or that fails is not observed', () => {
    expect(phases('Running', 'Running')).to.deep.equal([]);
    expect(phases(undefined, 'Failed', 'Running')).to.deep.equal([]);
  });
});
