import { expect } from 'chai';
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import { emptyClusterObjects, type ClusterObjects } from '../../../src/cluster/objects.js';
import { HEADROOM_DO_NOT_DISRUPT_ANNOTATION, SAFE_TO_EVICT_ANNOTATION } from '../../../src/disruption/validation.js';
import { nodesToKeep, type KeepInput } from '../../../src/disruption/nodes-to-keep.js';
import type { Plan } from '../../../src/packing/plan.js';
import { node as snapNode, pod as snapPod, snapshot } from '../packing/snapshot-builders.js';

function node(name: string, annotations: Record<string, string> = {}): V1Node {
  return { metadata: { name, annotations }, spec: {}, status: { conditions: [{ type: 'Ready', status: 'True' }] } };
}

/** A pod on `nodeName` that may not move (safe-to-evict=false). */
function stuck(name: string, nodeName: string): V1Pod {
  return {
    metadata: { name, namespace: 'default', annotations: { [SAFE_TO_EVICT_ANNOTATION]: 'false' }, ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'o', uid: 'o', controller: true }] },
    spec: { nodeName, containers: [] }, status: { phase: 'Running' },
  };
}

describe('nodesToKeep', () => {
  const objects: ClusterObjects = {
    ...emptyClusterObjects(),
    nodes: ['a', 'b', 'c', 'd'].map((n) => node(n, n === 'b' ? { [HEADROOM_DO_NOT_DISRUPT_ANNOTATION]: 'true' } : {})),
    pods: [stuck('p-c', 'c'), stuck('p-d', 'd')],
  };
  const solves: number[] = [];
  const base = (o: Partial<KeepInput> = {}): KeepInput => ({
    objects, snapshot: snapshot({ nodes: ['a', 'b', 'c', 'd'].map((n) => snapNode(n)) }), busy: [], empty: [], drifted: new Map(), due: false, expiryOn: false,
    solve: async () => {
      solves.push(1);
      return { placements: [{ pod: 'default/pending', node: 'a' }], scaleUps: [], unschedulable: [] } as unknown as Plan;
    },
    explain: () => {},
    ...o,
  });

  it('keeps busy nodes, do-not-disrupt nodes, and nodes with a pod that may not move: only candidates (empty, drifted) unless expiry is on', async () => {
    expect([...await nodesToKeep(base({ busy: ['a'] }))].sort()).to.deep.equal(['a', 'b']);
    expect([...await nodesToKeep(base({ empty: ['c'] }))].sort()).to.deep.equal(['b', 'c']);
    expect([...await nodesToKeep(base({ drifted: new Map([['d', 'old template']]) }))].sort()).to.deep.equal(['b', 'd']);
    expect([...await nodesToKeep(base({ expiryOn: true }))].sort()).to.deep.equal(['b', 'c', 'd']);
  });

  it('keeps the nodes the solver puts pending pods on, only when an empty node is due (one solve)', async () => {
    const pending = snapshot({ nodes: ['a', 'b', 'c', 'd'].map((n) => snapNode(n)), pendingPods: [snapPod('pending')] });
    solves.length = 0;
    expect([...await nodesToKeep(base({ snapshot: pending }))]).to.not.include('a');
    expect(solves).to.have.length(0);
    expect([...await nodesToKeep(base({ snapshot: pending, due: true }))]).to.include('a');
    expect(solves).to.have.length(1);
    // Nothing pending: no solve even when due.
    await nodesToKeep(base({ due: true }));
    expect(solves).to.have.length(1);
  });
});
