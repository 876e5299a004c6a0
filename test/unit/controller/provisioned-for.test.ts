import type { V1Node } from '@kubernetes/client-node';
import { expect } from 'chai';
import { provisionedForPatches } from '../../../src/controller/provisioned-for.js';
import type { PredictionDecision } from '../../../src/prediction/predictor.js';
import { predictedPods } from '../../../src/prediction/virtual-pods.js';
import { group, node, pod, snapshot } from '../packing/snapshot-builders.js';

function decision(key: string, pods: number, nodes: number, pool = 'batch'): PredictionDecision {
  return {
    key, pool, horizonMs: 240_000, excess: pods, pods, nodes, costPerHour: nodes,
    reason: 'predicted', forecast: { current: 0, point: pods, upper: pods, method: 'schedule', significant: true, noise: 0 },
  };
}

const md = group('md', { nodePool: 'batch' });
const other = group('other', { nodePool: 'web' });
const v1 = (name: string, owners?: string): V1Node => ({ metadata: { name, ...(owners ? { annotations: { 'headroom.dev/provisioned-for': owners } } : {}) } });

describe('provisioned-for (which new nodes a forecast brought up)', () => {
  const template = pod('t', { cpu: '3' });
  const pods = predictedPods('CronJob/default/report', template, 2);

  it('claims up to ceil(node-equivalents) empty nodes of the pool, never busy nodes, other pools or in-flight ones', () => {
    const snap = snapshot({
      groups: [md, other],
      nodes: [
        node('a', { groupId: md.id }), node('b', { groupId: md.id }), node('c', { groupId: md.id }),
        node('busy', { groupId: md.id, bound: [pod('real', { owner: 'x' })] }),
        node('d', { groupId: md.id, inFlight: true }),
        node('w', { groupId: other.id }),
      ],
    });
    expect(provisionedForPatches(snap, [], [decision('CronJob/default/report', 2, 1.5)], pods)).to.deep.equal([
      { node: 'a', owners: ['CronJob/default/report'] },
      { node: 'b', owners: ['CronJob/default/report'] },
    ]);
  });

  it('counts the nodes a workload already holds, and does not take nodes claimed by another workload', () => {
    const snap = snapshot({ groups: [md], nodes: [node('a', { groupId: md.id }), node('b', { groupId: md.id }), node('c', { groupId: md.id })] });
    const nodes = [v1('a', 'CronJob/default/report'), v1('b', 'Deployment/default/web')];
    expect(provisionedForPatches(snap, nodes, [decision('CronJob/default/report', 2, 2)], pods)).to.deep.equal([
      { node: 'c', owners: ['CronJob/default/report'] },
    ]);
    expect(provisionedForPatches(snap, [...nodes, v1('c', 'CronJob/default/report')], [decision('CronJob/default/report', 2, 2)], pods)).to.deep.equal([]);
  });

  it('skips nodes the workload\'s pods do not fit, and workloads that hold nothing', () => {
    const snap = snapshot({ groups: [md], nodes: [node('small', { groupId: md.id, cpu: '2' })] });
    expect(provisionedForPatches(snap, [], [decision('CronJob/default/report', 2, 2)], pods)).to.deep.equal([]);
    expect(provisionedForPatches(snapshot({ groups: [md], nodes: [node('a', { groupId: md.id })] }), [], [decision('CronJob/default/report', 0, 0)], pods)).to.deep.equal([]);
  });
});
