import { expect } from 'chai';
import { parseInteger, parseMilliCpu, parseQuantity, QuantityError } from '../../../src/scheduling/quantity.js';

describe('quantity', () => {
  it('parses decimal and binary suffixes differently', () => {
    expect(parseInteger('1G')).to.equal(1_000_000_000);
    expect(parseInteger('1Gi')).to.equal(1_073_741_824);
    expect(parseInteger('128974848')).to.equal(128974848);
    expect(parseInteger('129e6')).to.equal(129_000_000);
    expect(parseInteger('123Mi')).to.equal(123 * 1024 * 1024);
    expect(parseInteger('1k')).to.equal(1000);
  });

  it('parses cpu into millicores, rounding up', () => {
    expect(parseMilliCpu('100m')).to.equal(100);
    expect(parseMilliCpu('1.5')).to.equal(1500);
    expect(parseMilliCpu(2)).to.equal(2000);
    expect(parseMilliCpu('0.0001')).to.equal(1);
    expect(parseMilliCpu('250000u')).to.equal(250);
  });

  it('treats E as exa but e3 as an exponent', () => {
    expect(parseQuantity('1E')).to.equal(1e18);
    expect(parseQuantity('1e3')).to.equal(1000);
    expect(parseQuantity('1E3')).to.equal(1000);
  });

  it('refuses negative quantities with one clear line (issue 10 defect 6), and reads -0 as 0', () => {
    for (const neg of ['-1', '-1000000', '-500m', '-1Gi', -2]) {
      expect(() => parseQuantity(neg)).to.throw(QuantityError, `invalid quantity ${JSON.stringify(neg)}: must not be negative`);
    }
    expect(Object.is(parseQuantity('-0'), 0)).to.equal(true);
    expect(parseMilliCpu('+1')).to.equal(1000);
  });

  it('names an unparsable value by its type or a cut prefix, never by serializing it', () => {
    let deep: unknown = [];
    for (let i = 0; i < 20_000; i++) deep = [deep];
    expect(() => parseQuantity(deep as string)).to.throw(QuantityError, /^invalid quantity an array$/);
    expect(() => parseQuantity({} as string)).to.throw(QuantityError, /^invalid quantity an object$/);
    expect(() => parseQuantity('x'.repeat(10_000))).to.throw(QuantityError, /^invalid quantity "x{64}\.\.\."$/);
  });

  for (const bad of ['12Qi', '', 'Gi', '1.2.3', 'ten', '1 Gi', '--1']) {
    it(`rejects ${JSON.stringify(bad)}`, () => {
      expect(() => parseQuantity(bad)).to.throw(QuantityError, 'invalid quantity');
    });
  }
});
