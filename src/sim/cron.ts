import { SIM_EPOCH } from './virtual-clock.js';

/**
 * The five-field cron schedule of a CronJob (minute hour day-of-month month
 * day-of-week), with `*`, `a-b`, `a,b`, and `/step`. Simulated time starts at
 * 00:00 on a Monday, 1 January (so day-of-week 1 and day-of-month 1).
 */
export interface CronSchedule {
  minute: Set<number>;
  hour: Set<number>;
  dayOfMonth: Set<number>;
  month: Set<number>;
  dayOfWeek: Set<number>;
  /** True when a day field is restricted: cron ORs the two day fields then. */
  domRestricted: boolean;
  dowRestricted: boolean;
}

const RANGES: [number, number][] = [[0, 59], [0, 23], [1, 31], [1, 12], [0, 7]];
const MACROS: Record<string, string> = {
  '@hourly': '0 * * * *', '@daily': '0 0 * * *', '@midnight': '0 0 * * *', '@weekly': '0 0 * * 0',
  '@monthly': '0 0 1 * *', '@yearly': '0 0 1 1 *', '@annually': '0 0 1 1 *',
};

function parseField(field: string, [lo, hi]: [number, number]): Set<number> | string {
  const out = new Set<number>();
  for (const part of field.split(',')) {
    const m = /^(\*|(\d+)(?:-(\d+))?)(?:\/(\d+))?$/.exec(part);
    if (!m) return `bad field "${field}"`;
    let from = lo;
    let to = hi;
    if (m[1] !== '*') {
      from = Number(m[2]);
      to = m[3] !== undefined ? Number(m[3]) : (m[4] !== undefined ? hi : from);
    }
    const step = m[4] !== undefined ? Number(m[4]) : 1;
    if (from < lo || to > hi || from > to || step < 1) return `"${part}" is out of range ${lo}-${hi}`;
    for (let v = from; v <= to; v += step) out.add(v);
  }
  return out;
}

/** Parses a schedule; returns a message on error. */
export function parseCron(expr: string): CronSchedule | string {
  const fields = (MACROS[expr.trim()] ?? expr).trim().split(/\s+/);
  if (fields.length !== 5) return `expected 5 fields, got ${fields.length}`;
  const sets: Set<number>[] = [];
  for (let i = 0; i < 5; i++) {
    const s = parseField(fields[i]!, RANGES[i]!);
    if (typeof s === 'string') return s;
    sets.push(s);
  }
  const dow = sets[4]!;
  if (dow.has(7)) dow.add(0);
  return {
    minute: sets[0]!, hour: sets[1]!, dayOfMonth: sets[2]!, month: sets[3]!, dayOfWeek: dow,
    domRestricted: fields[2] !== '*', dowRestricted: fields[4] !== '*',
  };
}

const MINUTE = 60_000;

/** Every firing time in [0, end) milliseconds of simulated time. */
export function cronTimes(s: CronSchedule, end: number): number[] {
  const out: number[] = [];
  for (let t = 0; t < end; t += MINUTE) {
    const d = new Date(SIM_EPOCH + t);
    if (!s.minute.has(d.getUTCMinutes()) || !s.hour.has(d.getUTCHours()) || !s.month.has(d.getUTCMonth() + 1)) continue;
    const dom = s.dayOfMonth.has(d.getUTCDate());
    const dow = s.dayOfWeek.has(d.getUTCDay());
    const dayOk = s.domRestricted && s.dowRestricted ? dom || dow : dom && dow;
    if (dayOk) out.push(t);
  }
  return out;
}
