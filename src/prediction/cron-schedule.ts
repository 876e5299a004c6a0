/**
 * A CronJob's five-field schedule (minute hour day-of-month month day-of-week),
 * with `*`, `a-b`, `a,b`, `/step` and the @-macros, evaluated in UTC (the CronJob
 * controller's default; `spec.timeZone` is not interpreted yet). Pure.
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
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
/** Far enough for any schedule that fires at least once a year (Feb 29 aside). */
const SEARCH_LIMIT = 400 * DAY;

function dayMatches(s: CronSchedule, d: Date): boolean {
  if (!s.month.has(d.getUTCMonth() + 1)) return false;
  const dom = s.dayOfMonth.has(d.getUTCDate());
  const dow = s.dayOfWeek.has(d.getUTCDay());
  return s.domRestricted && s.dowRestricted ? dom || dow : dom && dow;
}

/**
 * The first firing time strictly after `afterMs` (epoch ms), or undefined when
 * none within about a year. Skips whole days and hours that cannot match.
 */
export function nextCronRun(s: CronSchedule, afterMs: number): number | undefined {
  let t = Math.floor(afterMs / MINUTE) * MINUTE + MINUTE;
  const limit = afterMs + SEARCH_LIMIT;
  while (t <= limit) {
    const d = new Date(t);
    if (!dayMatches(s, d)) {
      t = Math.floor(t / DAY) * DAY + DAY;
      continue;
    }
    if (!s.hour.has(d.getUTCHours())) {
      t = Math.floor(t / HOUR) * HOUR + HOUR;
      continue;
    }
    if (s.minute.has(d.getUTCMinutes())) return t;
    t += MINUTE;
  }
  return undefined;
}
