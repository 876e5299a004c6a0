import { expect } from 'chai';
import { DRIVER, claim, deviceClass, gpus, md, node, placedOn, plan, pod, scaled, slice, template } from './dra-objects.js';

/**
 * Pods sharing a ResourceClaim are placed as a unit (src/packing/claim-units.ts): the
 * claim's devices are allocated on one node, so the node its first pod goes to must
 * hold them all, and keeps room for the ones not placed yet.
 */

const gpuGroup = (name: string, cpu: string, gpuCount: string, price: string) => md(name, {
  'capacity.cluster-autoscaler.kubernetes.io/dra-driver': DRIVER, 'capacity.cluster-autoscaler.kubernetes.io/gpu-count': gpuCount,
  'capacity.cluster-autoscaler.kubernetes.io/cpu': cpu, 'headroom.dev/price': price,
});
const sharing = (names: string[], owner: string, cpu: string, claims = ['shared']) =>
  names.map((n) => pod(n, claims.map((c, i) => ({ name: `gpu-${i}`, resourceClaimName: c })), { owner, cpu }));
const nodesOf = (p: ReturnType<typeof plan>['plan']) => new Set(Object.values(placedOn(p)));

describe('packing: pods sharing a DRA claim are placed as a unit', () => {
  for (const packer of ['solve', 'ffd'] as const) {
    describe(packer, () => {
      it('opens a node that holds every pod of the claim, not the cheapest that holds the first', () => {
        const { plan: p } = plan([
          gpuGroup('small', '4', '1', '1'), gpuGroup('big', '16', '1', '3'), deviceClass('gpu'), claim('shared', 1),
          ...sharing(['s-0', 's-1', 's-2'], 's', '3'),
        ], packer);
        expect(p.unschedulable).to.deep.equal([]);
        expect(scaled(p)).to.deep.equal({ big: 1 });
        expect(nodesOf(p)).to.deep.equal(new Set(['big#0']));
      });

      it('counts pods of different workloads naming one claim together', () => {
        const { plan: p } = plan([
          gpuGroup('small', '4', '1', '1'), gpuGroup('big', '16', '1', '3'), deviceClass('gpu'), claim('shared', 1),
          ...sharing(['a-0', 'a-1'], 'a', '3'), ...sharing(['b-0', 'b-1'], 'b', '2'),
        ], packer);
        expect(p.unschedulable).to.deep.equal([]);
        expect(nodesOf(p)).to.deep.equal(new Set(['big#0']));
      });

      it('does not start the claim on an existing node with room for only part of its pods', () => {
        const { plan: p } = plan([
          gpuGroup('big', '16', '1', '3'), deviceClass('gpu'), claim('shared', 1),
          node('n1', '4'), slice('n1', gpus(1)),
          ...sharing(['s-0', 's-1', 's-2'], 's', '3'),
        ], packer);
        expect(p.unschedulable).to.deep.equal([]);
        expect(nodesOf(p)).to.deep.equal(new Set(['big#0']));
      });

      it('still uses an existing node that holds the whole claim', () => {
        const { plan: p } = plan([
          gpuGroup('big', '16', '1', '3'), deviceClass('gpu'), claim('shared', 1),
          node('n1', '16'), slice('n1', gpus(1)),
          ...sharing(['s-0', 's-1', 's-2'], 's', '3'),
        ], packer);
        expect(p.scaleUps).to.deep.equal([]);
        expect(nodesOf(p)).to.deep.equal(new Set(['n1']));
      });

      it('joins pods naming several claims, transitively, into one unit with each claim\'s devices once', () => {
        const { plan: p } = plan([
          gpuGroup('one-gpu', '16', '1', '1'), gpuGroup('two-gpu-small', '4', '2', '2'), gpuGroup('two-gpu', '16', '2', '4'),
          deviceClass('gpu'), claim('x', 1), claim('y', 1),
          ...sharing(['xy-0'], 'xy', '3', ['x', 'y']), ...sharing(['y-0'], 'y', '3', ['y']), ...sharing(['x-0'], 'x', '3', ['x']),
        ], packer);
        // Two GPUs (x and y once each) and 9 CPUs: only a two-gpu node holds the three.
        expect(p.unschedulable).to.deep.equal([]);
        expect(scaled(p)).to.deep.equal({ 'two-gpu': 1 });
        expect(nodesOf(p)).to.deep.equal(new Set(['two-gpu#0']));
      });

      it('holds the rest of the claim\'s room on its node against other GPU pods', () => {
        // One 2-GPU node type. Three pods share claim `shared` (1 GPU) and need 4 CPUs each;
        // pods with a GPU of their own need 1 CPU. The claim's node must keep 12 CPUs and a GPU
        // for it, whatever order the classes come in.
        const { plan: p } = plan([
          gpuGroup('gpu', '13', '2', '1'), deviceClass('gpu'), claim('shared', 1), template('one', 1),
          ...sharing(['s-0', 's-1', 's-2'], 's', '4'),
          ...[0, 1, 2, 3].map((i) => pod(`own-${i}`, [{ name: 'gpu', resourceClaimTemplateName: 'one' }], { owner: 'own', cpu: '1' })),
        ], packer);
        expect(p.unschedulable).to.deep.equal([]);
        const on = placedOn(p);
        expect(new Set(['s-0', 's-1', 's-2'].map((n) => on[`default/${n}`]))).to.have.property('size', 1);
        // 1 shared + 4 own GPUs on 2-GPU nodes: three nodes.
        expect(scaled(p)).to.deep.equal({ gpu: 3 });
      });

      it('keeps the room of a claim\'s smaller pod, placed later, from pods placed in between', () => {
        // FFD order (CPU, descending): a (4 CPUs) starts the claim, the own-GPU pods (2 CPUs)
        // come next, b (1 CPU, same claim) last. A 6-CPU node must keep b's CPU for it.
        const { plan: p } = plan([
          gpuGroup('gpu', '6', '2', '1'), deviceClass('gpu'), claim('shared', 1), template('one', 1),
          ...sharing(['a'], 'a', '4'), ...sharing(['b'], 'b', '1'),
          ...[0, 1].map((i) => pod(`own-${i}`, [{ name: 'gpu', resourceClaimTemplateName: 'one' }], { owner: 'own', cpu: '2' })),
        ], packer);
        expect(p.unschedulable).to.deep.equal([]);
        const on = placedOn(p);
        expect(on['default/a']).to.equal(on['default/b']);
        expect(scaled(p)).to.deep.equal({ gpu: 2 });
      });
    });
  }
});
