import { expect } from 'chai';
import { Random } from '../../../src/sim/random.js';

describe('sim Random', () => {
  it('repeats the same sequence for the same seed', () => {
    const a = new Random(42);
    const b = new Random(42);
    const xs = Array.from({ length: 100 }, () => a.next());
    const ys = Array.from({ length: 100 }, () => b.next());
    expect(xs).to.deep.equal(ys);
  });

  it('gives different sequences for different seeds and stream names', () => {
    expect(new Random(1).next()).to.not.equal(new Random(2).next());
    expect(Random.stream(1, 'a').next()).to.not.equal(Random.stream(1, 'b').next());
    expect(Random.stream(1, 'a').next()).to.equal(Random.stream(1, 'a').next());
  });

  it('draws uniformly in [0, 1) and normals with the right moments', () => {
    const r = new Random(7);
    let sum = 0;
    let sq = 0;
    const n = 20000;
    for (let i = 0; i < n; i++) {
      const u = r.next();
      expect(u).to.be.at.least(0).and.below(1);
      const z = r.normal(10, 2);
      sum += z;
      sq += z * z;
    }
    const mean = sum / n;
    const sd = Math.sqrt(sq / n - mean * mean);
    expect(mean).to.be.closeTo(10, 0.1);
    expect(sd).to.be.closeTo(2, 0.1);
  });
});
