import { expect } from 'chai';
import { buildSnapshot } from '../../../src/cluster/build-snapshot.js';
import { emptyClusterObjects } from '../../../src/cluster/objects.js';
import { enforceLimits } from '../../../src/provisioning/limits.js';
import { machineDeployment } from '../../integration/controller-objects.js';

describe('enforceLimits', () => {
  function snapshotWith(poolLimits: Record<string, unknown>) {
    const objs = emptyClusterObjects();
    objs.nodeGroups = [
      machineDeployment({ namespace: 'default', name: 'a', replicas: 1, min: 0, max: 10, cpu: '4', memory: '16Gi', labels: { pool: 'p' } }),
      machineDeployment({ namespace: 'default', name: 'b', replicas: 0, min: 0, max: 2, cpu: '8', memory: '32Gi', labels: { pool: 'p' } }),
    ];
    objs.nodePools = [{ apiVersion: 'headroom.dev/v1alpha1', kind: 'NodePool', metadata: { name: 'p' }, spec: { nodeGroupSelector: { matchLabels: { pool: 'p' } }, limits: poolLimits } }];
    return buildSnapshot(objs);
  }

  it('trims by max size', () => {
    const s = snapshotWith({});
    const out = enforceLimits(s, [{ kind: 'MachineDeployment', namespace: 'default', name: 'b', from: 0, to: 5 }]);
    expect(out).to.deep.equal([{ kind: 'MachineDeployment', namespace: 'default', name: 'b', from: 0, to: 2, requestedTo: 5, trimmedBy: 'maxSize' }]);
  });

  it('trims by NodePool node and cpu limits, counting in-flight nodes and earlier scale-ups of the plan', () => {
    // One in-flight node of a (4 cpu) already counts: 3 more nodes fit a limit of 4.
    let s = snapshotWith({ nodes: 4 });
    expect(s.limits.p!.used.nodes).to.equal(1);
    let out = enforceLimits(s, [
      { kind: 'MachineDeployment', namespace: 'default', name: 'a', from: 1, to: 3 },
      { kind: 'MachineDeployment', namespace: 'default', name: 'b', from: 0, to: 2 },
    ]);
    expect(out.map((u) => [u.name, u.to])).to.deep.equal([['a', 3], ['b', 1]]);
    // cpu: 4 used + 2 x 4 = 12 <= 14; b's 8-cpu node would make 20.
    s = snapshotWith({ cpu: '14' });
    out = enforceLimits(s, [
      { kind: 'MachineDeployment', namespace: 'default', name: 'a', from: 1, to: 3 },
      { kind: 'MachineDeployment', namespace: 'default', name: 'b', from: 0, to: 1 },
    ]);
    expect(out.map((u) => [u.name, u.to, u.trimmedBy])).to.deep.equal([['a', 3, undefined]]);
  });
});
