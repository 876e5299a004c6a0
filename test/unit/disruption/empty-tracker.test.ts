import { expect } from 'chai';
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import { EmptyTracker } from '../../../src/disruption/empty-tracker.js';

const node = (name: string): V1Node => ({ apiVersion: 'v1', kind: 'Node', metadata: { name } });
const pod = (name: string, nodeName: string, ownerKind = 'ReplicaSet', phase = 'Running'): V1Pod => ({
  apiVersion: 'v1', kind: 'Pod',
  metadata: { name, namespace: 'default', ownerReferences: [{ apiVersion: 'v1', kind: ownerKind, name: 'o', uid: 'o', controller: true }] },
  spec: { nodeName, containers: [] }, status: { phase },
});

describe('EmptyTracker', () => {
  it('remembers since when each node has had only DaemonSet, mirror or finished pods, and forgets nodes that are gone', () => {
    const t = new EmptyTracker();
    const nodes = [node('a'), node('b'), node('c')];
    t.observe(nodes, [pod('web', 'a'), pod('ds', 'b', 'DaemonSet'), pod('done', 'c', 'Job', 'Succeeded')], 100);
    expect([...t.emptySince()]).to.deep.equal([['b', 100], ['c', 100]]);
    // Still empty later: the first time is kept. a empties now.
    t.observe(nodes, [pod('ds', 'b', 'DaemonSet'), pod('mirror', 'a', 'Node')], 200);
    expect(Object.fromEntries(t.emptySince())).to.deep.equal({ a: 200, b: 100, c: 100 });
    // A pod lands on b; c goes away.
    const present = t.observe([node('a'), node('b')], [pod('web2', 'b')], 300);
    expect([...present]).to.deep.equal(['a', 'b']);
    expect(Object.fromEntries(t.emptySince())).to.deep.equal({ a: 200 });
  });
});
