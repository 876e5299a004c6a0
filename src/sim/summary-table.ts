import { staticPendingAtCost } from './buffer-sweep.js';
import type { TraceResult } from './result.js';

/** The summary as rows of strings, shared by the terminal table and the HTML report. */
export function summaryRows(results: TraceResult[]): { header: string[]; rows: string[][] } {
  const header = ['trace', 'policy', 'pending p50', 'p95', 'p99', 'max (s)', 'pending pod-s', 'waited pods', 'cost', 'cost floor', 'node-hours', 'peak nodes', 'util cpu', 'util mem', 'scale actions', 'evictions'];
  const rows: string[][] = [];
  for (const r of results) {
    for (const [name, run] of Object.entries(r.policies)) {
      const s = run.summary;
      rows.push([
        r.trace, name, fmt(s.pendingSeconds.p50), fmt(s.pendingSeconds.p95), fmt(s.pendingSeconds.p99), fmt(s.pendingSeconds.max),
        fmt(s.pendingPodSeconds), String(s.waitedPods), fmt(s.cost), fmt(s.costFloor), fmt(s.nodeHours), String(s.peakNodes), pct(s.utilization.cpu), pct(s.utilization.memory), String(s.scaleActions), String(s.evictions),
      ]);
    }
  }
  return { header, rows };
}

/**
 * Per trace and policy, pending pod-seconds and cost of each simulated day (day 1
 * first), so the first day, with nothing learnt, is seen apart from the later ones.
 */
export function perDayRows(results: TraceResult[]): { header: string[]; rows: string[][] } {
  const header = ['trace', 'policy', 'pending pod-s per day', 'cost per day'];
  const rows: string[][] = [];
  for (const r of results) {
    for (const [name, run] of Object.entries(r.policies)) {
      const d = run.summary.perDay;
      rows.push([r.trace, name, d.pendingPodSeconds.map(fmt).join(' | '), d.cost.map(fmt).join(' | ')]);
    }
  }
  return { header, rows };
}

/**
 * `--buffer-sweep`: per trace, headroom as run against the static-spare line (pending
 * @ cost at each buffer percent), and the line's pending at headroom's cost.
 */
export function sweepRows(results: TraceResult[]): { header: string[]; rows: string[][] } {
  const percents = results.find((r) => r.bufferSweep)?.bufferSweep?.map((p) => p.percent) ?? [];
  const header = ['trace', 'policy', 'pending pod-s @ cost', ...percents.map((p) => `static ${p}%`), 'static at same cost'];
  const rows: string[][] = [];
  for (const r of results) {
    const h = r.policies.headroom?.summary;
    if (!r.bufferSweep || !h) continue;
    const same = staticPendingAtCost(r.bufferSweep, h.cost);
    rows.push([r.trace, 'headroom', `${fmt(h.pendingPodSeconds)} @ ${fmt(h.cost)}`, ...r.bufferSweep.map((p) => `${fmt(p.pendingPodSeconds)} @ ${fmt(p.cost)}`), same === undefined ? 'outside the sweep' : fmt(same)]);
  }
  return { header, rows };
}

/** The sweep table (sweepRows) as plain text. */
export function formatSweepTable(results: TraceResult[]): string {
  return textTable(sweepRows(results));
}

/** Printed under every table: why cost, not node-hours, compares policies. */
export const PRICE_NOTE = 'cost (price x hours, boot included) is the price measure; node-hours mix node sizes and are shown for reference only; cost floor is what capacity exactly covering the pods\' requests at every instant would cost (no boot, fractional nodes): a policy costs less only by leaving pods pending';

/** A plain-text table with right-aligned numbers. */
export function formatTable(results: TraceResult[]): string {
  return textTable(summaryRows(results));
}

/** The per-day table (perDayRows) as plain text. */
export function formatPerDayTable(results: TraceResult[]): string {
  return textTable(perDayRows(results));
}

function textTable({ header, rows }: { header: string[]; rows: string[][] }): string {
  const all = [header, ...rows];
  const widths = header.map((_, i) => Math.max(...all.map((r) => r[i]!.length)));
  const line = (r: string[]) => r.map((c, i) => (i < 2 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ').trimEnd();
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

function fmt(x: number): string {
  return Number.isInteger(x) ? String(x) : x.toFixed(Math.abs(x) >= 100 ? 1 : 2);
}

function pct(x: number): string {
  return `${(x * 100).toFixed(1)}%`;
}
