import { expect } from 'chai';
import { cronTimes, parseCron } from '../../../src/sim/cron.js';

const times = (expr: string, hours: number) => {
  const s = parseCron(expr);
  if (typeof s === 'string') throw new Error(s);
  return cronTimes(s, hours * 3_600_000).map((t) => t / 60_000);
};

describe('sim cron', () => {
  it('expands steps, lists and ranges', () => {
    expect(times('*/15 * * * *', 1)).to.deep.equal([0, 15, 30, 45]);
    expect(times('5 * * * *', 3)).to.deep.equal([5, 65, 125]);
    expect(times('0,30 1-2 * * *', 4)).to.deep.equal([60, 90, 120, 150]);
    expect(times('@hourly', 2)).to.deep.equal([0, 60]);
  });

  it('knows that simulated day 0 is a Monday, 1 January', () => {
    expect(times('0 0 * * 1', 48)).to.deep.equal([0]);
    expect(times('0 0 * * 2', 48)).to.deep.equal([1440]);
    expect(times('0 0 2 1 *', 48)).to.deep.equal([1440]);
  });

  it('rejects malformed schedules with a reason', () => {
    expect(parseCron('* * * *')).to.match(/5 fields/);
    expect(parseCron('61 * * * *')).to.match(/out of range/);
    expect(parseCron('*/0 * * * *')).to.match(/out of range/);
    expect(parseCron('x * * * *')).to.match(/bad field/);
  });
});
