import { expect } from 'chai';
import type { V1Node } from '@kubernetes/client-node';
import { DISRUPTION_TAINT } from '../../../../src/api/disruption-taint.js';
import { emptyClusterObjects } from '../../../../src/cluster/objects.js';
import type { DisruptionNodePort } from '../../../../src/disruption/orchestration/node-port.js';
import { orphanTaints, untaintOrphans } from '../../../../src/disruption/orchestration/orphan-taints.js';
import { node as snapNode, snapshot } from '../../packing/snapshot-builders.js';

const node = (name: string, tainted: boolean): V1Node => ({ metadata: { name }, spec: tainted ? { taints: [{ ...DISRUPTION_TAINT }] } : {} });

describe('orphan disruption taints', () => {
  it('are our taints on nodes no removal of ours is working on', () => {
    const objects = { ...emptyClusterObjects(), nodes: [node('a', true), node('b', true), node('c', false)] };
    expect(orphanTaints(objects, (n) => n === 'b')).to.deep.equal(['a']);
    expect(orphanTaints(objects, () => false)).to.deep.equal(['a', 'b']);
  });

  it('are taken back, except on nodes whose Machine is leaving already; a failed untaint is logged, not thrown', async () => {
    const untainted: string[] = [];
    const port = {
      untaintNode: async (n: string) => {
        if (n === 'c') throw new Error('conflict');
        untainted.push(n);
      },
    } as unknown as DisruptionNodePort;
    const snap = snapshot({
      nodes: [snapNode('a'), { ...snapNode('b'), machine: { namespace: 'default', name: 'm-b', leaving: true } }, snapNode('c')],
    });
    const logged: string[] = [];
    await untaintOrphans(snap, ['a', 'b', 'c'], port, (m) => logged.push(m));
    expect(untainted).to.deep.equal(['a']);
    expect(logged).to.deep.equal(['untainted node a: no removal of it is under way', 'untainting node c failed: conflict']);
  });
});
