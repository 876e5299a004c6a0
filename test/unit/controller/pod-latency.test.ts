import type { V1Node, V1Pod } from '@kubernetes/client-node';
import { expect } from 'chai';
import { emptyClusterObjects, type ClusterObjects } from '../../../src/cluster/objects.js';
import type { ClusterStateSource, StateChange } from '../../../src/cluster/state.js';
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

describe('PodLatencyTracker: change by change, one whole pass only at the start', () => {
  it('observes from pod and Node events without reading the whole cache again (a heartbeat costs nothing)', async () => {
    let objects: ClusterObjects = { ...emptyClusterObjects(), nodes: [{ metadata: { name: 'n2' }, status: { conditions: [] } }] };
    let reads = 0;
    let emit: (kind: keyof ClusterObjects, change?: StateChange) => void = () => {};
    const source: ClusterStateSource = {
      objects: () => {
        reads++;
        return objects;
      },
      synced: () => true,
      onChange: (fn) => {
        emit = fn;
        return () => {};
      },
    };
    const ready: number[] = [];
    const startup: number[] = [];
    const now = new Date('2026-03-02T10:02:01Z').getTime();
    const tracker = new PodLatencyTracker(source, (s) => ready.push(s), 5, (s) => startup.push(s), () => now);
    tracker.start();
    await new Promise((r) => setTimeout(r, 30));
    expect(reads, 'one whole pass at the start').to.equal(1);
    const p = { ...pod(), status: { phase: 'Pending' } };
    objects = { ...objects, pods: [p] };
    emit('pods', { type: 'ADDED', object: p });
    // Bound to n2, which is not Ready yet: waits for the node.
    const bound = { ...pod(undefined, 'n2'), status: { phase: 'Pending' } };
    emit('pods', { type: 'MODIFIED', object: bound });
    for (let i = 0; i < 50; i++) {
      emit('nodes', { type: 'MODIFIED', object: { metadata: { name: 'n2' }, status: { conditions: [{ type: 'Ready', status: 'False', lastHeartbeatTime: new Date(i) }] } } as V1Node });
    }
    expect(ready).to.deep.equal([]);
    emit('nodes', { type: 'MODIFIED', object: { metadata: { name: 'n2' }, status: { conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: new Date('2026-03-02T10:00:41Z') }] } } as V1Node });
    expect(ready, 'observed when its node became Ready').to.deep.equal([40]);
    emit('pods', { type: 'MODIFIED', object: { ...bound, status: { phase: 'Running' } } as V1Pod });
    expect(startup).to.deep.equal([120]);
    await new Promise((r) => setTimeout(r, 30));
    expect(reads, 'no whole pass for changes that carry their object').to.equal(1);
    emit('pods', { type: 'RELIST' });
    await new Promise((r) => setTimeout(r, 30));
    expect(reads, 'a relist reads everything again').to.equal(2);
    tracker.stop();
  });
});
