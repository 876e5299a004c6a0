import { expect } from 'chai';
import fc from 'fast-check';
import { CostFloor, type FloorGroup } from '../../../src/sim/cost-floor.js';

const GI = 2 ** 30;
const g = (cpu: number, memGi: number, price: number, minSize = 0): FloorGroup => ({ cpu: cpu * 1000, memory: memGi * GI, pricePerHour: price, minSize });

describe('sim cost floor', () => {
  it('prices CPU-bound demand at the cheapest price per core, whatever the node sizes', () => {
    // Price proportional to size: 0.048 per core either way; memory is not binding (2 GiB per core requested, 4 offered).
    const floor = new CostFloor([g(2, 8, 0.096), g(16, 64, 0.768)]);
    expect(floor.ratePerHour(10_000, 20 * GI)).to.be.closeTo(10 * 0.048, 1e-9);
    expect(floor.ratePerHour(0, 0)).to.equal(0);
  });

  it('mixes shapes when CPU and memory both bind, as the cheapest fractional cover does', () => {
    // Demand 8 cores and 64 GiB of compute nodes (2c/4Gi) and memory nodes (~0c/8Gi): the optimum
    // has both constraints tight, 2x + 0.001y = 8 and 4x + 8y = 64, so about 4 + 6 nodes at 0.1 = 1.0.
    const floor = new CostFloor([g(2, 4, 0.1), g(0.001, 8, 0.1)]);
    const rate = floor.ratePerHour(8000, 64 * GI);
    expect(rate).to.be.closeTo(1.0, 1e-3);
    // Either shape alone costs more: CPU-only would need 16 compute nodes (1.6), memory-only 8000 memory nodes.
    expect(rate).to.be.below(1.6);
  });

  it('always pays the min-size nodes and counts their capacity first', () => {
    const floor = new CostFloor([g(4, 16, 0.192, 2), g(16, 64, 0.768)]);
    expect(floor.ratePerHour(0, 0)).to.be.closeTo(0.384, 1e-9);
    expect(floor.ratePerHour(8000, 16 * GI)).to.be.closeTo(0.384, 1e-9);
    expect(floor.ratePerHour(12_000, 16 * GI)).to.be.closeTo(0.384 + 4 * 0.048, 1e-9);
  });

  it('never exceeds the price of any whole-node cover of the demand (it is a lower bound)', () => {
    const shape = fc.record({ cpu: fc.integer({ min: 1, max: 64 }), mem: fc.integer({ min: 1, max: 256 }), price: fc.double({ min: 0.01, max: 5, noNaN: true }) });
    fc.assert(fc.property(fc.array(shape, { minLength: 1, maxLength: 5 }), fc.integer({ min: 0, max: 200_000 }), fc.integer({ min: 0, max: 800 }), fc.array(fc.nat({ max: 40 }), { minLength: 5, maxLength: 5 }), (shapes, cpu, memGi, counts) => {
      const groups = shapes.map((s) => g(s.cpu, s.mem, s.price));
      const floor = new CostFloor(groups);
      const rate = floor.ratePerHour(cpu, memGi * GI);
      // Any integer mix that covers the demand costs at least the floor.
      let c = 0; let m = 0; let price = 0;
      groups.forEach((gr, i) => { c += gr.cpu * counts[i]!; m += gr.memory * counts[i]!; price += gr.pricePerHour * counts[i]!; });
      if (c >= cpu && m >= memGi * GI) expect(rate).to.be.at.most(price * (1 + 1e-9));
      // And each single shape alone, rounded up, covers it too.
      for (const gr of groups) {
        const n = Math.max(Math.ceil(cpu / gr.cpu), Math.ceil((memGi * GI) / gr.memory));
        expect(rate).to.be.at.most(n * gr.pricePerHour * (1 + 1e-9));
      }
    }));
  });
});
