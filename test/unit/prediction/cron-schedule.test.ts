import { expect } from 'chai';
import { nextCronRun, parseCron } from '../../../src/prediction/cron-schedule.js';

const T0 = Date.UTC(2024, 0, 1); // a Monday
const MIN = 60_000;
const sched = (e: string) => {
  const s = parseCron(e);
  if (typeof s === 'string') throw new Error(s);
  return s;
};

describe('prediction/cron-schedule', () => {
  it('finds the next run strictly after a time', () => {
    expect(nextCronRun(sched('*/15 * * * *'), T0)).to.equal(T0 + 15 * MIN);
    expect(nextCronRun(sched('*/15 * * * *'), T0 - 1)).to.equal(T0);
    expect(nextCronRun(sched('7,41 */2 * * *'), T0 + 8 * MIN)).to.equal(T0 + 41 * MIN);
    expect(nextCronRun(sched('7,41 */2 * * *'), T0 + 41 * MIN)).to.equal(T0 + 127 * MIN);
  });

  it('skips days that do not match (weekdays only, day-of-month OR day-of-week)', () => {
    // Saturday 6 January 2024 00:00 -> next weekday 09:30 is Monday 8th.
    const sat = Date.UTC(2024, 0, 6);
    expect(nextCronRun(sched('30 9 * * 1-5'), sat)).to.equal(Date.UTC(2024, 0, 8, 9, 30));
    expect(nextCronRun(sched('0 0 15 * 5'), T0)).to.equal(Date.UTC(2024, 0, 5)); // Friday 5th before the 15th
  });

  it('returns undefined for a schedule that never fires within a year', () => {
    expect(nextCronRun(sched('0 0 31 2 *'), T0)).to.equal(undefined);
  });

  it('rejects malformed schedules with a message', () => {
    expect(parseCron('61 * * * *')).to.be.a('string');
    expect(parseCron('* * *')).to.be.a('string');
  });
});
