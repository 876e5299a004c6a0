import type { DisruptionBudget } from '../api/nodepool.js';
import { nextCronRun, parseCron, type CronSchedule } from '../prediction/cron-schedule.js';

/**
 * When a budget is in force (Karpenter's semantics): always without a schedule;
 * with one, from each firing of its cron `schedule` (UTC) for `duration`. A schedule
 * that does not parse keeps the budget always in force: stricter, never looser. Pure.
 */

const parsed = new Map<string, CronSchedule | string>();

function schedule(expr: string): CronSchedule | string {
  let s = parsed.get(expr);
  if (s === undefined) {
    s = parseCron(expr);
    if (parsed.size > 1000) parsed.clear(); // schedules come from NodePools: few, but bound it
    parsed.set(expr, s);
  }
  return s;
}

/**
 * Each budget whose schedule does not parse, as `spec.disruption.budgets[i].schedule`
 * with why: the CRD rejects them, but a pool stored before that rule (Helm does not
 * upgrade CRDs) still has them; they are said, on the pool, not silently kept in force.
 */
export function invalidBudgetSchedules(budgets: readonly DisruptionBudget[]): string[] {
  const out: string[] = [];
  budgets.forEach((b, i) => {
    if (b.schedule === undefined) return;
    const s = schedule(b.schedule);
    if (typeof s === 'string') out.push(`spec.disruption.budgets[${i}].schedule ${JSON.stringify(b.schedule)}: not a cron schedule (${s}); the budget is treated as always in force`);
  });
  return out;
}

/** True when `budget` is in force at `now` (epoch ms); undefined `now` counts every budget as in force. */
export function budgetActive(budget: DisruptionBudget, now: number | undefined): boolean {
  if (budget.schedule === undefined || now === undefined) return true;
  const s = schedule(budget.schedule);
  if (typeof s === 'string' || budget.durationMs === undefined) return true;
  // The first firing strictly after now - duration; the window [fire, fire + duration) holds now iff it is <= now.
  const fire = nextCronRun(s, now - budget.durationMs);
  return fire !== undefined && fire <= now;
}
