import { type CronSchedule, nextCronRun } from '../prediction/cron-schedule.js';
import { SIM_EPOCH } from './virtual-clock.js';

/**
 * CronJob firing times in simulated time, which starts at 00:00 UTC on a Monday,
 * 1 January (so day-of-week 1 and day-of-month 1). The schedule itself is the
 * prediction's parser (src/prediction/cron-schedule.ts): the simulated CronJob
 * controller and the forecaster read schedules the same way.
 */
export { parseCron, type CronSchedule } from '../prediction/cron-schedule.js';

/** Every firing time in [0, end) milliseconds of simulated time. */
export function cronTimes(s: CronSchedule, end: number): number[] {
  const out: number[] = [];
  for (let t = nextCronRun(s, SIM_EPOCH - 1); t !== undefined && t < SIM_EPOCH + end; t = nextCronRun(s, t)) out.push(t - SIM_EPOCH);
  return out;
}
