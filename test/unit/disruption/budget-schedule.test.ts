import { expect } from 'chai';
import { allowedByBudgets } from '../../../src/disruption/allowance.js';
import { budgetActive } from '../../../src/disruption/budget-schedule.js';

const at = (iso: string) => Date.parse(iso);
const H = 3600_000;

describe('disruption budget schedules (UTC cron + duration)', () => {
  const workHours = { nodes: '0', schedule: '0 9 * * 1-5', durationMs: 8 * H };

  it('is in force from each firing for its duration, and not outside', () => {
    // 2026-11-30 is a Monday.
    expect(budgetActive(workHours, at('2026-11-30T09:00:00Z'))).to.equal(true);
    expect(budgetActive(workHours, at('2026-11-30T16:59:00Z'))).to.equal(true);
    expect(budgetActive(workHours, at('2026-11-30T17:00:00Z'))).to.equal(false);
    expect(budgetActive(workHours, at('2026-11-30T08:59:00Z'))).to.equal(false);
    expect(budgetActive(workHours, at('2026-12-05T10:00:00Z')), 'Saturday').to.equal(false);
    // A window that runs past midnight.
    const night = { nodes: '0', schedule: '0 22 * * *', durationMs: 4 * H };
    expect(budgetActive(night, at('2026-12-01T01:30:00Z'))).to.equal(true);
    expect(budgetActive(night, at('2026-12-01T02:00:00Z'))).to.equal(false);
  });

  it('without a schedule, without a time, or with a schedule that does not parse, the budget is always in force', () => {
    expect(budgetActive({ nodes: '1' }, at('2026-11-30T03:00:00Z'))).to.equal(true);
    expect(budgetActive(workHours, undefined)).to.equal(true);
    expect(budgetActive({ nodes: '0', schedule: 'every day', durationMs: H }, at('2026-11-30T03:00:00Z'))).to.equal(true);
  });

  it('the most restrictive budget in force wins', () => {
    const budgets = [{ nodes: '50%' }, workHours];
    expect(allowedByBudgets(budgets, 'Empty', 10, at('2026-11-30T10:00:00Z'))).to.equal(0);
    expect(allowedByBudgets(budgets, 'Empty', 10, at('2026-11-30T20:00:00Z'))).to.equal(5);
  });
});
