import { expect } from 'chai';
import type { ConsolidationCandidate } from '../../../src/disruption/consolidation-candidates.js';
import { twinKey } from '../../../src/disruption/twin-candidates.js';

function candidate(name: string, podKeys: string[], zone = 'a'): ConsolidationCandidate {
  const pods = podKeys.map((k, i) => ({ key: `ns/${name}-${i}`, name: `${name}-${i}`, uid: `${name}-${i}`, equivalenceKey: k }));
  return {
    node: { name, labels: { 'kubernetes.io/hostname': name, 'topology.kubernetes.io/zone': zone }, taints: [], allocatable: { cpu: 4000 }, pods, inFlight: false, unschedulable: false },
    group: { id: 'ns/md-1' }, price: 1, disruption: podKeys.length,
  } as unknown as ConsolidationCandidate;
}

describe('twinKey', () => {
  it('is the same for nodes alike but for their name and pods\' names', () => {
    expect(twinKey(candidate('n1', ['web#x', 'web#x', 'db#y']))).to.equal(twinKey(candidate('n2', ['db#y', 'web#x', 'web#x'])));
  });
  it('tells apart other pods, another zone or another group', () => {
    const base = twinKey(candidate('n1', ['web#x', 'web#x']));
    expect(twinKey(candidate('n2', ['web#x']))).to.not.equal(base);
    expect(twinKey(candidate('n2', ['web#x', 'web#x'], 'b'))).to.not.equal(base);
    const other = candidate('n2', ['web#x', 'web#x']);
    expect(twinKey({ ...other, group: { ...other.group, id: 'ns/md-2' } })).to.not.equal(base);
  });
});
