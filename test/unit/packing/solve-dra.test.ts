import { expect } from 'chai';
import { stringify } from 'yaml';
import { buildSnapshot } from '../../../src/cluster/build-snapshot.js';
import { loadObjects } from '../../../src/cluster/load-objects.js';
import { DRIVER, claim, deviceClass, gpus, md, node, placedOn, plan, pod, scaled, slice, template } from './dra-objects.js';

/**
 * DRA end to end through the pure core: objects as kubectl prints them -> buildSnapshot
 * -> both packers. Devices on existing nodes come from ResourceSlices; new nodes' from
 * Cluster Autoscaler's dra-driver + gpu-count, or a template ResourceSlice.
 */

describe('DRA in the packers', () => {
  for (const packer of ['solve', 'ffd'] as const) {
    describe(packer, () => {
      it('counts devices exactly: 2-GPU pods on 4-GPU nodes scaled from zero on dra-driver + gpu-count', () => {
        const { plan: p } = plan([
          md('gpu', { 'capacity.cluster-autoscaler.kubernetes.io/dra-driver': DRIVER, 'capacity.cluster-autoscaler.kubernetes.io/gpu-count': '4' }),
          md('cpu', {}), deviceClass('gpu'), template('two-gpus', 2),
          ...[0, 1, 2, 3, 4].map((i) => pod(`train-${i}`, [{ name: 'gpu', resourceClaimTemplateName: 'two-gpus' }], { owner: 'train' })),
        ], packer);
        // Five pods of two GPUs need ten GPUs: three 4-GPU nodes; none on the CPU group, which has none.
        expect(scaled(p)).to.deep.equal({ gpu: 3 });
        expect(p.unschedulable).to.deep.equal([]);
        const perNode = new Map<string, number>();
        for (const n of Object.values(placedOn(p))) perNode.set(n, (perNode.get(n) ?? 0) + 1);
        expect(Math.max(...perNode.values())).to.equal(2);
      });

      it('does not give a device twice: free devices on a node net of allocated claims', () => {
        const allocated = { allocation: { devices: { results: [{ request: 'gpu', driver: DRIVER, pool: 'n1', device: 'gpu-0' }, { request: 'gpu', driver: DRIVER, pool: 'n1', device: 'gpu-1' }] }, nodeSelector: { nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n1'] }] }] } } };
        const { plan: p } = plan([
          md('gpu', { 'capacity.cluster-autoscaler.kubernetes.io/dra-driver': DRIVER, 'capacity.cluster-autoscaler.kubernetes.io/gpu-count': '4' }),
          deviceClass('gpu'), template('one-gpu', 1), node('n1'), slice('n1', gpus(3)),
          claim('held', 2, allocated), pod('running', [{ name: 'gpu', resourceClaimName: 'held' }], { nodeName: 'n1' }),
          ...[0, 1].map((i) => pod(`w-${i}`, [{ name: 'gpu', resourceClaimTemplateName: 'one-gpu' }], { owner: 'w' })),
        ], packer);
        // n1 has 3 GPUs, 2 allocated: one pod fits there, the other needs a new node.
        expect(Object.values(placedOn(p)).sort()).to.deep.equal(['gpu#0', 'n1']);
        expect(scaled(p)).to.deep.equal({ gpu: 1 });
      });

      it('selects on device attributes: only nodes whose devices match the selector', () => {
        const { plan: p } = plan([
          md('a100', { 'headroom.dev/template-resource-slices': 'a100-template' }),
          md('t4', { 'headroom.dev/template-resource-slices': 't4-template', 'headroom.dev/price': '0.1' }),
          slice('template-a100', gpus(8, 'a100', '80Gi'), { name: 'a100-template' }), slice('template-t4', gpus(8, 't4', '16Gi'), { name: 't4-template' }),
          deviceClass('gpu'), template('big', 1, [`device.capacity["${DRIVER}"].memory.compareTo(quantity("40Gi")) >= 0`]),
          template('any', 1), node('t4-node'), slice('t4-node', gpus(1, 't4', '16Gi')),
          pod('big-0', [{ name: 'gpu', resourceClaimTemplateName: 'big' }]),
          pod('small-0', [{ name: 'gpu', resourceClaimTemplateName: 'any' }]),
        ], packer);
        // The big pod needs an A100 (the T4 node and the cheaper T4 group do not match); the small one uses the free T4.
        expect(placedOn(p)).to.deep.equal({ 'default/big-0': 'a100#0', 'default/small-0': 't4-node' });
      });

      it('a shared claim takes its devices once and keeps its pods on one node', () => {
        const { plan: p } = plan([
          md('gpu', { 'capacity.cluster-autoscaler.kubernetes.io/dra-driver': DRIVER, 'capacity.cluster-autoscaler.kubernetes.io/gpu-count': '2' }),
          deviceClass('gpu'), claim('shared', 2),
          ...[0, 1, 2].map((i) => pod(`s-${i}`, [{ name: 'gpu', resourceClaimName: 'shared' }], { owner: 's', cpu: '4' })),
        ], packer);
        expect(scaled(p)).to.deep.equal({ gpu: 1 });
        expect(new Set(Object.values(placedOn(p)))).to.deep.equal(new Set(['gpu#0']));
      });

      it('a shared claim\'s pods that do not fit its node together stay pending, never on a second node', () => {
        const { plan: p } = plan([
          md('gpu', { 'capacity.cluster-autoscaler.kubernetes.io/dra-driver': DRIVER, 'capacity.cluster-autoscaler.kubernetes.io/gpu-count': '2' }),
          deviceClass('gpu'), claim('shared', 1),
          ...[0, 1, 2].map((i) => pod(`s-${i}`, [{ name: 'gpu', resourceClaimName: 'shared' }], { owner: 's', cpu: '7' })),
        ], packer);
        expect(scaled(p)).to.deep.equal({ gpu: 1 });
        expect(p.placements).to.have.length(2);
        expect(p.unschedulable).to.have.length(1);
      });

      it('a pod whose claim is allocated runs only on that node, scaling nothing', () => {
        const allocated = { allocation: { devices: { results: [{ request: 'gpu', driver: DRIVER, pool: 'n1', device: 'gpu-0' }] }, nodeSelector: { nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n1'] }] }] } } };
        const { plan: p } = plan([
          md('gpu', { 'capacity.cluster-autoscaler.kubernetes.io/dra-driver': DRIVER, 'capacity.cluster-autoscaler.kubernetes.io/gpu-count': '2' }),
          deviceClass('gpu'), node('n1', '1'), slice('n1', gpus(1)), claim('mine', 1, allocated),
          pod('pinned', [{ name: 'gpu', resourceClaimName: 'mine' }], { cpu: '2' }),
        ], packer);
        expect(p.scaleUps).to.deep.equal([]);
        expect(p.unschedulable[0]?.reason).to.match(/DRA claim allocated elsewhere/);
      });

      it('a claim no group can satisfy scales nothing and says why', () => {
        const { plan: p } = plan([
          md('gpu', { 'capacity.cluster-autoscaler.kubernetes.io/dra-driver': DRIVER, 'capacity.cluster-autoscaler.kubernetes.io/gpu-count': '4' }),
          deviceClass('gpu'), template('eight', 8),
          pod('huge', [{ name: 'gpu', resourceClaimTemplateName: 'eight' }]),
        ], packer);
        expect(p.scaleUps).to.deep.equal([]);
        expect(p.unschedulable[0]?.reason).to.match(/insufficient DRA devices \(8 × class gpu\)/);
      });

      it('holds a pod it cannot model, with one reason, and scales nothing', () => {
        const base = [md('gpu', { 'capacity.cluster-autoscaler.kubernetes.io/dra-driver': DRIVER, 'capacity.cluster-autoscaler.kubernetes.io/gpu-count': '4' }), deviceClass('gpu')];
        const cases: Array<[object[], RegExp]> = [
          [[template('t', 1, [], 'no-such-class')], /DeviceClass no-such-class not found/],
          [[template('t', 1, ['device.attributes["gpu.example.com"].type.frobnicate()'])], /cannot model DRA claim: CEL selector .* unbound function/],
          [[template('t', 1, ['device.driver =='])], /does not parse/],
          [[{ ...template('t', 1), spec: { spec: { devices: { requests: [{ name: 'gpu', exactly: { deviceClassName: 'gpu', allocationMode: 'All' } }] } } } }], /allocationMode All/],
          [[{ ...template('t', 1), spec: { spec: { devices: { requests: [{ name: 'gpu', firstAvailable: [{ name: 'a', deviceClassName: 'gpu' }] }] } } } }], /firstAvailable/],
          [[], /ResourceClaimTemplate default\/t not found/],
        ];
        for (const [extra, reason] of cases) {
          const { plan: p } = plan([...base, ...extra, pod('p', [{ name: 'gpu', resourceClaimTemplateName: 't' }])], packer);
          expect(p.scaleUps, String(reason)).to.deep.equal([]);
          expect(p.unschedulable.map((u) => u.reason).join(), String(reason)).to.match(reason);
          expect(p.unschedulable[0]!.reason, String(reason)).to.match(/cannot model DRA claim/);
        }
      });
    });
  }

  it('dra-driver + gpu-count give devices, not an extended resource (unless gpu-type names one), as CA does', () => {
    const build = (extra: Record<string, string>) => buildSnapshot(loadObjects(stringify(md('g', {
      'capacity.cluster-autoscaler.kubernetes.io/dra-driver': DRIVER, 'capacity.cluster-autoscaler.kubernetes.io/gpu-count': '2', ...extra,
    }))));
    expect(build({}).groups[0]!.template.allocatable).to.not.have.property('nvidia.com/gpu');
    expect(build({ 'capacity.cluster-autoscaler.kubernetes.io/gpu-type': 'nvidia.com/gpu' }).groups[0]!.template.allocatable).to.include({ 'nvidia.com/gpu': 2 });
  });

  it('template-resource-slices: a missing slice is reported on the group, which then offers no devices; a named slice wins over dra-driver + gpu-count', () => {
    const sel = [`device.attributes["${DRIVER}"].model == "a100"`];
    const { plan: p, issues } = plan([
      md('gone', { 'headroom.dev/template-resource-slices': 'no-such-slice', 'capacity.cluster-autoscaler.kubernetes.io/dra-driver': DRIVER, 'capacity.cluster-autoscaler.kubernetes.io/gpu-count': '8' }),
      deviceClass('gpu'), template('a100', 1, sel),
      pod('a', [{ name: 'gpu', resourceClaimTemplateName: 'a100' }]),
    ]);
    expect(issues.map((i) => i.message).join('\n')).to.match(/MachineDeployment default\/gone: annotation headroom\.dev\/template-resource-slices: ResourceSlice no-such-slice not found/);
    expect(p.scaleUps).to.deep.equal([]);
    expect(p.unschedulable[0]?.reason).to.match(/insufficient DRA devices \(1 × class gpu, 1 selector\)/);

    // With the slice there, its two A100s are what a new node offers, not the annotations' eight attribute-less GPUs.
    const { plan: q } = plan([
      md('named', { 'headroom.dev/template-resource-slices': 'a100s', 'capacity.cluster-autoscaler.kubernetes.io/dra-driver': DRIVER, 'capacity.cluster-autoscaler.kubernetes.io/gpu-count': '8' }),
      slice('template-a100', gpus(2, 'a100'), { name: 'a100s' }),
      deviceClass('gpu'), template('a100', 1, sel),
      ...[0, 1, 2].map((i) => pod(`a-${i}`, [{ name: 'gpu', resourceClaimTemplateName: 'a100' }], { owner: 'a' })),
    ]);
    expect(scaled(q)).to.deep.equal({ named: 2 });
    expect(q.unschedulable).to.deep.equal([]);
  });

  it('an attribute selector on a group with only dra-driver + gpu-count scales nothing (its devices have no such attribute), and says so', () => {
    const { plan: p } = plan([
      md('ca', { 'capacity.cluster-autoscaler.kubernetes.io/dra-driver': DRIVER, 'capacity.cluster-autoscaler.kubernetes.io/gpu-count': '4' }),
      deviceClass('gpu'), template('a100', 1, [`device.attributes["${DRIVER}"].model == "a100"`]),
      pod('a', [{ name: 'gpu', resourceClaimTemplateName: 'a100' }]),
    ]);
    expect(p.scaleUps).to.deep.equal([]);
    expect(p.unschedulable).to.have.length(1);
    expect(p.unschedulable[0]!.reason).to.match(/DRA selector error on a device \(class gpu, 1 selector\): MachineDeployment\/default\/ca/);
  });

  it('learns a group\'s devices from its Ready node\'s slices, and reports a bad gpu-count', () => {
    const machine = {
      apiVersion: 'cluster.x-k8s.io/v1beta1', kind: 'Machine',
      metadata: { name: 'm1', namespace: 'default', labels: { 'cluster.x-k8s.io/deployment-name': 'learned' }, ownerReferences: [{ apiVersion: 'cluster.x-k8s.io/v1beta1', kind: 'MachineSet', name: 'learned-x', uid: 'x', controller: true }] },
      spec: { clusterName: 'c', bootstrap: {}, infrastructureRef: {}, providerID: 'p://n1' }, status: { nodeRef: { name: 'n1' } },
    };
    const { plan: p, issues } = plan([
      md('learned', {}, 1), md('bad', { 'capacity.cluster-autoscaler.kubernetes.io/dra-driver': DRIVER, 'capacity.cluster-autoscaler.kubernetes.io/gpu-count': 'many' }),
      machine, { ...node('n1'), spec: { providerID: 'p://n1' } }, slice('n1', gpus(1, 'h100')),
      deviceClass('gpu'), template('h100', 1, [`device.attributes["${DRIVER}"].model == "h100"`]),
      ...[0, 1].map((i) => pod(`h-${i}`, [{ name: 'gpu', resourceClaimTemplateName: 'h100' }], { owner: 'h' })),
    ]);
    expect(issues.map((i) => i.message).join('\n')).to.match(/gpu-count.*"many"/);
    expect(p.placements).to.have.length(2);
    expect(scaled(p)).to.deep.equal({ learned: 1 });
  });
});
