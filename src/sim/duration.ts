/**
 * Durations in traces: a number of seconds, or a string like "90s", "15m", "1h30m",
 * "250ms". Returned in milliseconds (the Clock's unit).
 */
const PART = /(\d+(?:\.\d+)?)(ms|s|m|h|d)/g;
const UNIT: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

export function parseDuration(input: unknown): number | undefined {
  if (typeof input === 'number') return Number.isFinite(input) && input >= 0 ? input * 1000 : undefined;
  if (typeof input !== 'string') return undefined;
  const s = input.trim();
  if (s === '') return undefined;
  if (/^\d+(\.\d+)?$/.test(s)) return Number(s) * 1000;
  let total = 0;
  let consumed = 0;
  for (const m of s.matchAll(PART)) {
    if (m.index !== consumed) return undefined;
    total += Number(m[1]) * UNIT[m[2]!]!;
    consumed += m[0].length;
  }
  return consumed === s.length ? total : undefined;
}

/** "1h30m" style, for labels in the report and terminal. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`;
  let s = Math.round(ms / 1000);
  const parts: string[] = [];
  for (const [unit, size] of [['d', 86400], ['h', 3600], ['m', 60], ['s', 1]] as const) {
    if (s >= size) {
      parts.push(`${Math.floor(s / size)}${unit}`);
      s %= size;
    }
  }
  return parts.join('');
}
