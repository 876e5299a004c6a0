import { expect } from 'chai';
import { formatInteger, formatMilliCpu, parseInteger, parseMilliCpu } from '../../../src/scheduling/quantity.js';

describe('quantity formatting', () => {
  it('formats millicores', () => {
    expect(formatMilliCpu(2000)).to.equal('2');
    expect(formatMilliCpu(1500)).to.equal('1500m');
    expect(formatMilliCpu(0)).to.equal('0');
  });

  it('formats integers in the largest exact unit, binary first', () => {
    expect(formatInteger(2 ** 30)).to.equal('1Gi');
    expect(formatInteger(1536 * 2 ** 20)).to.equal('1536Mi');
    expect(formatInteger(16e9)).to.equal('16G');
    expect(formatInteger(1500)).to.equal('1500');
    expect(formatInteger(2000)).to.equal('2k');
    expect(formatInteger(1024)).to.equal('1Ki');
    expect(formatInteger(0)).to.equal('0');
    expect(formatInteger(110)).to.equal('110');
  });

  it('round-trips through the parsers', () => {
    for (const v of [1, 999, 1024, 4096 * 1024, 3e9, 7569 * 2 ** 20, 123456789]) expect(parseInteger(formatInteger(v))).to.equal(v);
    for (const m of [1, 100, 1000, 1930, 16000]) expect(parseMilliCpu(formatMilliCpu(m))).to.equal(m);
  });
});
