import { expect } from 'chai';
import type { V1Node } from '@kubernetes/client-node';
import { DISRUPTION_TAINT_KEY } from '../../../src/api/disruption-taint.js';
import { emptyClusterObjects, type ClusterObjects } from '../../../src/cluster/objects.js';
import type { ClusterStateSource } from '../../../src/cluster/state.js';
import { LiveExtenderState } from '../../../src/controller/live-extender-state.js';

const node = (name: string): V1Node => ({
  apiVersion: 'v1', kind: 'Node', metadata: { name },
  status: { allocatable: { cpu: '4', memory: '16Gi', pods: '110' }, conditions: [{ type: 'Ready', status: 'True' }] },
});

describe("the extender's view of nodes being disrupted", () => {
  it('marks the nodes the Disruptor is removing, with its reason', async () => {
    const objs: ClusterObjects = { ...emptyClusterObjects(), nodes: [node('a'), node('b')] };
    const state: ClusterStateSource = { objects: () => objs, synced: () => true, onChange: () => () => {} };
    const removing = new Map([['b', 'Empty: node empty (DaemonSet pods only) for 31 s']]);
    const live = new LiveExtenderState(state, 250, (err) => { throw err; }, () => removing);
    live.start();
    await live.settled();
    expect(live.get().disruptionReason('a')).to.equal(undefined);
    expect(live.get().disruptionReason('b')).to.equal('Empty: node empty (DaemonSet pods only) for 31 s');
    live.stop();
    // Without the feed, nothing in these objects says b is going away.
    const plain = new LiveExtenderState(state);
    plain.start();
    await plain.settled();
    expect(plain.get().disruptionReason('b')).to.equal(undefined);
    plain.stop();
  });

  it('treats a node carrying the headroom.dev/disrupted taint as being disrupted, without the feed', async () => {
    const tainted: V1Node = { ...node('c'), spec: { taints: [{ key: DISRUPTION_TAINT_KEY, effect: 'NoSchedule' }] } };
    const objs: ClusterObjects = { ...emptyClusterObjects(), nodes: [node('a'), tainted] };
    const state: ClusterStateSource = { objects: () => objs, synced: () => true, onChange: () => () => {} };
    const live = new LiveExtenderState(state);
    live.start();
    await live.settled();
    expect(live.get().disruptionReason('a')).to.equal(undefined);
    expect(live.get().disruptionReason('c')).to.match(/Headroom is removing this node/);
    live.stop();
  });
});
