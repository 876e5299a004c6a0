import { expect } from 'chai';
import { DERIVED_PRICE_RATES, derivedPricePerHour } from '../../../src/api/price.js';
import { readRepoFile, section } from './doc-tables.js';

/** The price unit and the derived-price formula are in the docs, outside ADR 0021, with the code's rates (issue 25, item 8). */
describe('docs: prices', () => {
  const { perCore, perGiB, perGpu, spotFactor } = DERIVED_PRICE_RATES;
  const formula = `${perCore} × vCPUs + ${perGiB} × GiB`;

  it('concepts.md gives the unit and the formula with the rates of src/api/price.ts, and its example adds up', () => {
    const prices = section(readRepoFile('docs/concepts.md'), 'Prices').join('\n');
    expect(prices).to.match(/per \*\*node-hour\*\*/).and.match(/same currency/);
    expect(prices).to.include(`${formula} of memory + ${perGpu} × GPUs`).and.include(`times ${spotFactor} when`);
    const example = /A 4-vCPU, 16 GiB on-demand node is thus\s+[^=]+= ([\d.]+) per hour/.exec(prices);
    expect(Number(example?.[1])).to.equal(derivedPricePerHour({ cpu: 4000, memory: 16 * 2 ** 30 }));
  });

  it('reference.md gives the same formula at the annotation', () => {
    const row = readRepoFile('docs/reference.md').split('\n').find((l) => l.startsWith('| `headroom.dev/price`'));
    expect(row).to.include(`${formula} + ${perGpu} × GPUs`).and.include(`× ${spotFactor} for spot`);
  });
});
