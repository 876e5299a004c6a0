import { expect } from 'chai';
import { scaleTarget } from '../../../src/capi/scale-target.js';

const bounds = { minSize: 1, maxSize: 10 };

describe('scaleTarget (the one rule both actuators write by)', () => {
  it('scales up to max(current, to): a stale or repeated plan adds nothing twice', () => {
    expect(scaleTarget(3, 3, 5, bounds)).to.equal(5);
    expect(scaleTarget(5, 3, 5, bounds)).to.equal(5);
    expect(scaleTarget(7, 3, 5, bounds)).to.equal(7);
  });

  it('scales down only while replicas are still `from`', () => {
    expect(scaleTarget(4, 4, 2, bounds)).to.equal(2);
    expect(scaleTarget(5, 4, 2, bounds)).to.equal(5);
  });

  it('stays within [min, max]', () => {
    expect(scaleTarget(3, 3, 20, bounds)).to.equal(10);
    expect(scaleTarget(2, 2, 0, bounds)).to.equal(1);
    expect(scaleTarget(12, 12, 12, bounds)).to.equal(10);
  });
});
