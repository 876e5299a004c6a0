import { expect } from 'chai';
import { DRIVER, deviceClass, gpus, md, node, placedOn, plan, pod, scaled, slice, template } from './dra-objects.js';

/**
 * ADR 0146: the cost-aware packer weighs pods that claim DRA devices by what their
 * devices cost. Each case is one where the CPU/memory view (main before ADR 0146)
 * bought more, or dearer, GPU nodes than the pods need.
 */

const CA_GPUS = (n: number) => ({ 'capacity.cluster-autoscaler.kubernetes.io/dra-driver': DRIVER, 'capacity.cluster-autoscaler.kubernetes.io/gpu-count': String(n) });
const MAX = 'cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size';
const CPU = 'capacity.cluster-autoscaler.kubernetes.io/cpu';
const PRICE = 'headroom.dev/price';
const MODEL = (m: string) => `device.attributes["${DRIVER}"].model == "${m}"`;
const pods = (prefix: string, n: number, claim: string, cpu: string) =>
  Array.from({ length: n }, (_, i) => pod(`${prefix}-${i}`, [{ name: 'gpu', resourceClaimTemplateName: claim }], { owner: prefix, cpu }));
const count = (p: ReturnType<typeof plan>['plan'], prefix: string, on: (n: string) => boolean) =>
  Object.entries(placedOn(p)).filter(([k, n]) => k.startsWith(`default/${prefix}-`) && on(n)).length;

describe('packing: DRA pods weighed by what their devices cost (ADR 0146)', () => {
  it('picks the group with the least price per pod its node holds, not per core: one-GPU nodes over cheap-per-core 4-GPU ones', () => {
    // 240 pods (more than the FFD fallback's 200) of one GPU and 4 cores. "wide" (4 GPUs, 96 cores, 4/h) is cheaper per core than
    // "narrow" (1 GPU, 8 cores, 0.5/h), but a node of it holds 4 of these pods (1/h each), one of narrow 1 (0.5/h).
    const { plan: p } = plan([
      md('wide', { ...CA_GPUS(4), [CPU]: '96', [PRICE]: '4', [MAX]: '300' }),
      md('narrow', { ...CA_GPUS(1), [CPU]: '8', [PRICE]: '0.5', [MAX]: '300' }),
      deviceClass('gpu'), template('one', 1), ...pods('w', 240, 'one', '4'),
    ]);
    expect(p.unschedulable).to.deep.equal([]);
    expect(scaled(p)).to.deep.equal({ narrow: 240 });
    expect(p.cost.addedPerHour).to.equal(120);
  });

  it('gives an existing node\'s free devices to the pod whose devices cost most elsewhere, whatever the cpu sizes', () => {
    // h-node has 4 free h100s. The 4-GPU h100 pod can only otherwise get a 10/h node; the
    // one-GPU pods (more cpu each, so first by size) have 0.5/h one-GPU nodes.
    const { plan: p } = plan([
      md('h100', { 'headroom.dev/template-resource-slices': 'h100-template', [PRICE]: '10' }),
      md('small', { ...CA_GPUS(1), [PRICE]: '0.5' }),
      slice('template-h100', gpus(4, 'h100'), { name: 'h100-template' }),
      node('h-node'), slice('h-node', gpus(4, 'h100')),
      deviceClass('gpu'), template('x4', 4, [MODEL('h100')]), template('one', 1),
      pod('big-0', [{ name: 'gpu', resourceClaimTemplateName: 'x4' }], { cpu: '1' }),
      ...pods('any', 4, 'one', '2'),
    ]);
    expect(p.unschedulable).to.deep.equal([]);
    expect(placedOn(p)['default/big-0']).to.equal('h-node');
    expect(scaled(p)).to.deep.equal({ small: 4 });
    expect(p.cost.addedPerHour).to.equal(2);
  });

  it('fills the devices of a node it opens for device pods before opening another (more than the FFD fallback\'s 200 pods)', () => {
    // 64 pods need an a100 ("eight": 8 a100s, 64 cores, 8/h); 192 take any GPU ("one": 1 GPU, 0.3/h).
    // A quota of the a100 pods per node (their share of the cluster's cpu) left each eight-GPU
    // node half empty, for the one-GPU pods to fill at 1/h a device instead of 0.3.
    const { plan: p } = plan([
      md('eight', { 'headroom.dev/template-resource-slices': 'eight-template', [CPU]: '64', [PRICE]: '8', [MAX]: '300' }),
      md('one', { ...CA_GPUS(1), [CPU]: '8', [PRICE]: '0.3', [MAX]: '300' }),
      slice('template-eight', gpus(8, 'a100'), { name: 'eight-template' }),
      deviceClass('gpu'), template('a100', 1, [MODEL('a100')]), template('any', 1),
      ...pods('a', 64, 'a100', '4'), ...pods('b', 192, 'any', '4'),
    ]);
    expect(p.unschedulable).to.deep.equal([]);
    expect(scaled(p)).to.deep.equal({ eight: 8, one: 192 });
    expect(count(p, 'b', (n) => n.startsWith('eight#'))).to.equal(0);
    expect(p.cost.addedPerHour).to.be.closeTo(8 * 8 + 192 * 0.3, 1e-6);
  });

  it('leaves pods without device claims where they were: a CPU pod still fills a GPU node\'s spare cores', () => {
    const { plan: p } = plan([
      md('gpu', { ...CA_GPUS(1), [PRICE]: '1' }), md('cpu', { [PRICE]: '0.8' }),
      deviceClass('gpu'), template('one', 1),
      pod('g-0', [{ name: 'gpu', resourceClaimTemplateName: 'one' }], { cpu: '2' }),
      pod('c-0', [], { cpu: '2' }),
    ]);
    expect(placedOn(p)).to.deep.equal({ 'default/g-0': 'gpu#0', 'default/c-0': 'gpu#0' });
  });
});
