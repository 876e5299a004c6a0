import { expect } from 'chai';
import {
  parseNodePoolOnce,
  NodePoolError, nodePoolForGroup, parseDuration, parseNodePool, requirementsMatch, type NodePool,
} from '../../../src/api/nodepool.js';

function pool(spec: Record<string, unknown>, name = 'default') {
  return { apiVersion: 'headroom.dev/v1alpha1', kind: 'NodePool', metadata: { name }, spec };
}

describe('NodePool parsing', () => {
  it('parses a Karpenter-style spot pool with limits, weight and disruption', () => {
    const p = parseNodePool(pool({
      weight: 10,
      nodeGroupSelector: { matchLabels: { 'headroom.dev/autoscale': 'true' } },
      requirements: [{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['spot'] }],
      limits: { cpu: '100', memory: '400Gi', nodes: 20 },
      disruption: {
        consolidationPolicy: 'WhenEmpty', consolidateAfter: '30s', expireAfter: 'Never',
        budgets: [{ nodes: '10%' }, { nodes: '0', schedule: '0 9 * * 1-5', duration: '8h' }],
      },
    }));
    expect(p.weight).to.equal(10);
    expect(p.limits).to.deep.equal({ cpu: 100_000, memory: 400 * 2 ** 30, nodes: 20 });
    expect(p.disruption.consolidateAfterMs).to.equal(30_000);
    expect(p.disruption.expireAfterMs).to.equal(null);
    expect(p.disruption.consolidationPolicy).to.equal('WhenEmpty');
    expect(p.disruption.budgets[1]).to.deep.equal({ nodes: '0', schedule: '0 9 * * 1-5', durationMs: 8 * 3600_000 });
    expect(p.machineTemplate).to.equal(undefined);
  });

  it('applies the same defaults as the CRD', () => {
    const p = parseNodePool(pool({ nodeGroupSelector: {} }));
    expect(p.weight).to.equal(1);
    expect(p.limits).to.deep.equal({});
    expect(p.disruption).to.deep.equal({
      consolidationPolicy: 'WhenEmptyOrUnderutilized', consolidateAfterMs: 30_000, expireAfterMs: null,
      budgets: [{ nodes: '10%', reasons: ['Underutilized', 'Drifted', 'Expired'] }, { nodes: '10', reasons: ['Empty'] }],
    });
  });

  it('parses a standalone machine template', () => {
    const p = parseNodePool(pool({
      machineTemplate: {
        namespace: 'capi', clusterName: 'c1', version: 'v1.31.0',
        bootstrapConfigTemplateRef: { apiVersion: 'bootstrap.cluster.x-k8s.io/v1beta2', kind: 'KubeadmConfigTemplate', name: 'b' },
        infrastructureTemplateRef: { apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta2', kind: 'DockerMachineTemplate', name: 'i' },
        capacity: { cpu: '4', memory: '16Gi', pods: 110 },
        labels: { role: 'batch' }, taints: [{ key: 'batch', effect: 'NoSchedule' }], pricePerHour: '0.12',
      },
    }));
    expect(p.machineTemplate?.capacity).to.deep.equal({ cpu: 4000, memory: 16 * 2 ** 30, pods: 110 });
    expect(p.machineTemplate?.infrastructureTemplateRef.kind).to.equal('DockerMachineTemplate');
    expect(p.machineTemplate?.pricePerHour).to.equal(0.12);
    expect(p.machineTemplate?.taints).to.deep.equal([{ key: 'batch', effect: 'NoSchedule' }]);
  });

  const invalid: Array<[string, Record<string, unknown>, RegExp]> = [
    ['neither selector nor template', {}, /exactly one of/],
    ['both selector and template', { nodeGroupSelector: {}, machineTemplate: {} }, /exactly one of/],
    ['weight out of range', { nodeGroupSelector: {}, weight: 101 }, /weight/],
    ['In without values', { nodeGroupSelector: {}, requirements: [{ key: 'a', operator: 'In' }] }, /needs at least one value/],
    ['Exists with values', { nodeGroupSelector: {}, requirements: [{ key: 'a', operator: 'Exists', values: ['x'] }] }, /takes no values/],
    ['Gt with a non-integer', { nodeGroupSelector: {}, requirements: [{ key: 'a', operator: 'Gt', values: ['x'] }] }, /integer/],
    ['unknown operator', { nodeGroupSelector: {}, requirements: [{ key: 'a', operator: 'Near', values: ['x'] }] }, /operator/],
    ['bad limit quantity', { nodeGroupSelector: {}, limits: { cpu: 'lots' } }, /limits\.cpu/],
    ['unsupported limit', { nodeGroupSelector: {}, limits: { gpus: 1 } }, /not supported/],
    ['bad duration', { nodeGroupSelector: {}, disruption: { consolidateAfter: '5 minutes' } }, /consolidateAfter/],
    ['bad budget', { nodeGroupSelector: {}, disruption: { budgets: [{ nodes: '150%' }] } }, /budgets\[0\]/],
    ['schedule without duration', { nodeGroupSelector: {}, disruption: { budgets: [{ nodes: '1', schedule: '@daily' }] } }, /go together/],
    ['template without refs', { machineTemplate: { namespace: 'n', clusterName: 'c' } }, /bootstrapConfigTemplateRef/],
    ['prediction not an object', { nodeGroupSelector: {}, prediction: true }, /prediction must be an object/],
    ['prediction.enabled not a boolean', { nodeGroupSelector: {}, prediction: { enabled: 'yes' } }, /prediction\.enabled/],
    ['quantile above 0.99', { nodeGroupSelector: {}, prediction: { quantile: 1 } }, /prediction\.quantile/],
    ['quantile below 0.5', { nodeGroupSelector: {}, prediction: { quantile: '0.2' } }, /prediction\.quantile/],
    ['quantile not a number', { nodeGroupSelector: {}, prediction: { quantile: 'high' } }, /prediction\.quantile/],
    ['negative cost cap', { nodeGroupSelector: {}, prediction: { maxExtraCostPerHour: '-1' } }, /maxExtraCostPerHour/],
    ['empty cost cap', { nodeGroupSelector: {}, prediction: { maxExtraCostPerHour: '' } }, /maxExtraCostPerHour/],
    ['fractional node cap', { nodeGroupSelector: {}, prediction: { maxPredictedNodes: 1.5 } }, /maxPredictedNodes/],
    ['unknown prediction field', { nodeGroupSelector: {}, prediction: { horizon: '5m' } }, /prediction\.horizon is not supported/],
  ];
  for (const [what, spec, message] of invalid) {
    it(`rejects ${what}`, () => {
      expect(() => parseNodePool(pool(spec, 'bad'))).to.throw(NodePoolError, message);
    });
  }

  it('parses the prediction block: defaults when absent (on, spare bounded), CRD defaults, caps as numbers', () => {
    expect(parseNodePool(pool({ nodeGroupSelector: {} })).prediction).to.equal(undefined);
    expect(parseNodePool(pool({ nodeGroupSelector: {}, prediction: {} })).prediction).to.deep.equal({ enabled: true, quantile: 0.9, maxSparePercent: 10 });
    expect(parseNodePool(pool({ nodeGroupSelector: {}, prediction: { enabled: false } })).prediction?.enabled).to.equal(false);
    expect(parseNodePool(pool({
      nodeGroupSelector: {}, prediction: { enabled: true, quantile: 0.95, maxSparePercent: 25, maxExtraCostPerHour: '1.25', maxPredictedNodes: 3 },
    })).prediction).to.deep.equal({ enabled: true, quantile: 0.95, maxSparePercent: 25, maxExtraCostPerHour: 1.25, maxPredictedNodes: 3 });
    expect(() => parseNodePool(pool({ nodeGroupSelector: {}, prediction: { maxSparePercent: 150 } }))).to.throw(NodePoolError, /maxSparePercent must be a number in \[0, 100\]/);
    expect(() => parseNodePool(pool({ nodeGroupSelector: {}, prediction: { maxSparePercent: '10%' } }))).to.throw(NodePoolError, /maxSparePercent/);
  });

  it('names the pool and the field in one line when the prediction block is wrong', () => {
    expect(() => parseNodePool(pool({ nodeGroupSelector: {}, prediction: { quantile: 2 } }, 'batch')))
      .to.throw('NodePool batch: prediction.quantile must be a number in [0.5, 0.99]');
  });

  it('parses Go durations', () => {
    expect(parseDuration('1h30m')).to.equal(5_400_000);
    expect(parseDuration('1.5s')).to.equal(1500);
    expect(parseDuration('Never')).to.equal(null);
    expect(() => parseDuration('10')).to.throw();
  });
});

describe('NodePool requirements and group membership', () => {
  it('matches requirements with node-affinity semantics', () => {
    const labels = { 'karpenter.sh/capacity-type': 'spot', cores: '8' };
    expect(requirementsMatch([{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['spot'] }], labels)).to.equal(true);
    expect(requirementsMatch([{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] }], labels)).to.equal(false);
    expect(requirementsMatch([{ key: 'zone', operator: 'NotIn', values: ['a'] }], labels)).to.equal(true);
    expect(requirementsMatch([{ key: 'zone', operator: 'Exists', values: [] }], labels)).to.equal(false);
    expect(requirementsMatch([{ key: 'cores', operator: 'Gt', values: ['4'] }], labels)).to.equal(true);
    expect(requirementsMatch([{ key: 'cores', operator: 'Lt', values: ['4'] }], labels)).to.equal(false);
  });

  it('assigns a group to the matching pool with the highest weight', () => {
    const pools: NodePool[] = [
      parseNodePool(pool({ weight: 5, nodeGroupSelector: { matchLabels: { team: 'a' } } }, 'low')),
      parseNodePool(pool({
        weight: 50, nodeGroupSelector: { matchLabels: { team: 'a' } },
        requirements: [{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['spot'] }],
      }, 'spot')),
      parseNodePool(pool({ weight: 99, nodeGroupSelector: { matchExpressions: [{ key: 'team', operator: 'In', values: ['b'] }] } }, 'b')),
    ];
    expect(nodePoolForGroup(pools, { team: 'a' }, { 'karpenter.sh/capacity-type': 'spot' })?.name).to.equal('spot');
    expect(nodePoolForGroup(pools, { team: 'a' }, { 'karpenter.sh/capacity-type': 'on-demand' })?.name).to.equal('low');
    expect(nodePoolForGroup(pools, { team: 'b' }, {})?.name).to.equal('b');
    expect(nodePoolForGroup(pools, { team: 'c' }, {})).to.equal(undefined);
  });
});

describe('parseNodePoolOnce', () => {
  const obj = () => ({ apiVersion: 'headroom.dev/v1alpha1', kind: 'NodePool', metadata: { name: 'p' }, spec: { nodeGroupSelector: {}, weight: 3 } });

  it('parses each object once: the same object gives the very same NodePool, a new version is parsed again', () => {
    const o = obj();
    const first = parseNodePoolOnce(o);
    expect(first).to.deep.equal(parseNodePool(obj()));
    expect(parseNodePoolOnce(o)).to.equal(first);
    const changed = { ...o, spec: { nodeGroupSelector: {}, weight: 9 } };
    expect(parseNodePoolOnce(changed).weight).to.equal(9);
  });

  it('throws again for an invalid object, every time (each build reports it)', () => {
    const bad = { ...obj(), spec: { nodeGroupSelector: {}, weight: 'heavy' } };
    expect(() => parseNodePoolOnce(bad)).to.throw(NodePoolError);
    expect(() => parseNodePoolOnce(bad)).to.throw(NodePoolError);
  });
});
