/**
 * What `npm run bench:peers` reports (issue 28), from what its watches saw: pure
 * functions of a run's observations (test/bench/peers.ts records them) and of a set of
 * runs (medians and ranges). Times are ms since the epoch in observations, seconds in
 * metrics.
 */

/** A workload pod (DaemonSet pods are not workload). */
export interface PodRecord {
  readonly name: string;
  /** ADDED seen by the watch. */
  readonly createdMs: number;
  /** First seen Running (or Succeeded: a Job pod kwok completed). */
  readonly runningMs?: number;
  /** First seen terminating or deleted. */
  readonly goneMs?: number;
  /** Deleted while its owner still wanted it (not by the scenario): an eviction or a drain. */
  readonly evicted?: boolean;
  /**
   * Deleted by kube-scheduler's preemption (its DisruptionTarget condition, reason
   * PreemptionByScheduler), not by an autoscaler: on the harness, a new node's
   * system-node-critical DaemonSet pod taking the room workload pods filled first.
   */
  readonly preempted?: boolean;
}

export interface NodeRecord {
  readonly name: string;
  /** The node group (its instance type label: the template's name). */
  readonly group: string;
  readonly createdMs: number;
  /** First seen terminating or deleted. */
  readonly goneMs?: number;
}

export interface RunObservations {
  readonly startMs: number;
  readonly endMs: number;
  readonly windowS: number;
  /** $ per hour of a node of each group. */
  readonly prices: Readonly<Record<string, number>>;
  readonly pods: readonly PodRecord[];
  readonly nodes: readonly NodeRecord[];
  /** The first MachineDeployment replicas raise seen. */
  readonly firstScaleUpMs?: number;
  /** The scenario's final delete step (demand gone), if it has one. */
  readonly demandGoneMs?: number;
  /** Scenarios whose load changes all along (diurnal, CronJob): no steady state. */
  readonly continuous?: boolean;
}

export interface RunMetrics {
  readonly pods: number;
  readonly podsRan: number;
  /** Pod creation -> Running, s: first, p50, p90, last (of the pods that ran). */
  readonly toRunningFirstS: number;
  readonly toRunningP50S: number;
  readonly toRunningP90S: number;
  readonly toRunningLastS: number;
  /** The sum over pods of the time each was Pending (until Running, gone or the end). */
  readonly pendingPodSeconds: number;
  readonly nodesCreated: number;
  /** The nodes' cost over [start, start + window]. */
  readonly costWindow: number;
  /**
   * $ per hour of the nodes up once settled: when demand went away, else at the window's
   * end or the last pod's Running if later (NaN for continuous scenarios and when some pod never ran).
   */
  readonly steadyPerHour: number;
  readonly evictions: number;
  /** Workload pods kube-scheduler preempted (not counted in evictions). */
  readonly preemptions: number;
  /** First scale-up write after the start, s. */
  readonly firstScaleUpS: number;
  /** Demand gone -> the last node gone, s (NaN: not every node went before the end, or no such step). */
  readonly scaleDownS: number;
  /** Nodes still up at the end of a scenario with demand gone. */
  readonly nodesLeft: number;
}

/** The p-th percentile (nearest rank) of xs; NaN when empty. */
export function percentile(xs: readonly number[], p: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!;
}

/** The median (mean of the middle two for an even count); NaN when empty or all NaN. */
export function median(xs: readonly number[]): number {
  const s = xs.filter((x) => !Number.isNaN(x)).sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  const m = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

const overlapMs = (a0: number, a1: number, b0: number, b1: number) => Math.max(0, Math.min(a1, b1) - Math.max(a0, b0));

export function runMetrics(o: RunObservations): RunMetrics {
  const ran = o.pods.filter((p) => p.runningMs !== undefined);
  const toRunning = ran.map((p) => (p.runningMs! - p.createdMs) / 1000);
  const pendingMs = o.pods.reduce((sum, p) => sum + Math.max(0, Math.min(p.runningMs ?? o.endMs, p.goneMs ?? o.endMs, o.endMs) - p.createdMs), 0);
  const windowEnd = o.startMs + o.windowS * 1000;
  const price = (n: NodeRecord) => {
    const x = o.prices[n.group];
    if (x === undefined) throw new Error(`node ${n.name}: no price for group ${n.group}`);
    return x;
  };
  const costWindow = o.nodes.reduce((sum, n) => sum + (price(n) * overlapMs(n.createdMs, n.goneMs ?? o.endMs, o.startMs, windowEnd)) / 3_600_000, 0);
  const lastRunning = ran.length === o.pods.length && ran.length > 0 ? Math.max(...ran.map((p) => p.runningMs!)) : NaN;
  const upAt = (t: number) => o.nodes.filter((n) => n.createdMs <= t && (n.goneMs ?? Infinity) > t);
  // Settled: when demand went away (just before), else at the window's end or the last pod's Running, whichever is later
  // (a node that comes after the last pod ran is still paid for until it is removed).
  const settledMs = o.demandGoneMs !== undefined ? o.demandGoneMs - 1 : Math.max(windowEnd, lastRunning);
  const steadyPerHour = o.continuous || Number.isNaN(lastRunning) ? NaN : upAt(settledMs).reduce((s, n) => s + price(n), 0);
  let scaleDownS = NaN;
  let nodesLeft = 0;
  if (o.demandGoneMs !== undefined) {
    const left = o.nodes.filter((n) => n.goneMs === undefined);
    nodesLeft = left.length;
    if (left.length === 0) scaleDownS = Math.max(0, ...o.nodes.map((n) => (n.goneMs! - o.demandGoneMs!) / 1000));
  }
  return {
    pods: o.pods.length,
    podsRan: ran.length,
    toRunningFirstS: ran.length ? Math.min(...toRunning) : NaN,
    toRunningP50S: percentile(toRunning, 50),
    toRunningP90S: percentile(toRunning, 90),
    toRunningLastS: ran.length ? Math.max(...toRunning) : NaN,
    pendingPodSeconds: pendingMs / 1000,
    nodesCreated: o.nodes.length,
    costWindow,
    steadyPerHour,
    evictions: o.pods.filter((p) => p.evicted).length,
    preemptions: o.pods.filter((p) => p.preempted).length,
    firstScaleUpS: o.firstScaleUpMs === undefined ? NaN : (o.firstScaleUpMs - o.startMs) / 1000,
    scaleDownS,
    nodesLeft,
  };
}

/** One run's identity and its metrics (one line of the full table). */
export interface RunResult {
  readonly scenario: string;
  readonly setup: string;
  readonly boot: string;
  /** 1-based round (runs are interleaved: round r plays every setup before round r+1). */
  readonly round: number;
  readonly metrics: RunMetrics;
  /** Why the run is incomplete, if it is (pods never Running, an autoscaler that exited). */
  readonly note?: string;
}

export interface Spread {
  readonly median: number;
  readonly min: number;
  readonly max: number;
}

export interface SummaryRow {
  readonly scenario: string;
  readonly setup: string;
  readonly boot: string;
  readonly runs: number;
  readonly metrics: Readonly<Record<keyof RunMetrics, Spread>>;
}

/** The median and range of each metric over the runs of each (scenario, boot, setup), in first-seen order. NaNs are left out of a spread (all NaN: NaN). */
export function summarize(results: readonly RunResult[]): SummaryRow[] {
  const groups = new Map<string, RunResult[]>();
  for (const r of results) {
    const key = `${r.scenario}\u0000${r.boot}\u0000${r.setup}`;
    groups.set(key, [...(groups.get(key) ?? []), r]);
  }
  return [...groups.values()].map((rs) => {
    const keys = Object.keys(rs[0]!.metrics) as (keyof RunMetrics)[];
    const metrics = Object.fromEntries(keys.map((k) => {
      const xs = rs.map((r) => r.metrics[k]).filter((x) => !Number.isNaN(x));
      return [k, { median: median(xs), min: xs.length ? Math.min(...xs) : NaN, max: xs.length ? Math.max(...xs) : NaN }];
    })) as Record<keyof RunMetrics, Spread>;
    return { scenario: rs[0]!.scenario, setup: rs[0]!.setup, boot: rs[0]!.boot, runs: rs.length, metrics };
  });
}

const num = (x: number, digits: number) => (Number.isNaN(x) ? '–' : x.toFixed(digits));
/** "median (min–max)", or the single value for one run. */
export function formatSpread(s: Spread, digits = 1): string {
  if (Number.isNaN(s.median)) return '–';
  return s.min === s.max ? num(s.median, digits) : `${num(s.median, digits)} (${num(s.min, digits)}–${num(s.max, digits)})`;
}

const SUMMARY_COLUMNS: ReadonlyArray<[string, keyof RunMetrics, number]> = [
  ['first scale-up s', 'firstScaleUpS', 1],
  ['to Running first s', 'toRunningFirstS', 1],
  ['p50 s', 'toRunningP50S', 1],
  ['p90 s', 'toRunningP90S', 1],
  ['last s', 'toRunningLastS', 1],
  ['pending pod-s', 'pendingPodSeconds', 0],
  ['nodes', 'nodesCreated', 0],
  ['$ in window', 'costWindow', 3],
  ['steady $/h', 'steadyPerHour', 2],
  ['evictions', 'evictions', 0],
  ['preempted', 'preemptions', 0],
  ['scale-down s', 'scaleDownS', 0],
  ['nodes left', 'nodesLeft', 0],
];

/** A Markdown table of the summary: one line per (scenario, boot, setup), medians with ranges. */
export function summaryTable(rows: readonly SummaryRow[]): string {
  const head = ['scenario', 'boot', 'setup', 'runs', ...SUMMARY_COLUMNS.map((c) => c[0])];
  const lines = rows.map((r) => [r.scenario, r.boot, r.setup, String(r.runs), ...SUMMARY_COLUMNS.map(([, k, d]) => formatSpread(r.metrics[k], d))]);
  return [head, head.map(() => '---'), ...lines].map((l) => `| ${l.join(' | ')} |`).join('\n');
}

/** A Markdown table of every run, one line each, in the order they ran. */
export function runsTable(results: readonly RunResult[]): string {
  const head = ['round', 'scenario', 'boot', 'setup', 'pods ran', ...SUMMARY_COLUMNS.map((c) => c[0]), 'note'];
  const lines = results.map((r) => [String(r.round), r.scenario, r.boot, r.setup, `${r.metrics.podsRan}/${r.metrics.pods}`,
    ...SUMMARY_COLUMNS.map(([, k, d]) => num(r.metrics[k], d)), r.note ?? '']);
  return [head, head.map(() => '---'), ...lines].map((l) => `| ${l.join(' | ')} |`).join('\n');
}

/** Every metric of RunMetrics (a Record, so that tsc says when one is missing). */
const METRIC_KEYS = Object.keys({
  pods: true, podsRan: true, toRunningFirstS: true, toRunningP50S: true, toRunningP90S: true, toRunningLastS: true, pendingPodSeconds: true,
  nodesCreated: true, costWindow: true, steadyPerHour: true, evictions: true, preemptions: true, firstScaleUpS: true, scaleDownS: true, nodesLeft: true,
} satisfies Record<keyof RunMetrics, true>) as (keyof RunMetrics)[];

/**
 * The finished runs of a bench:peers `runs.jsonl` (a line per run; a failed run's line,
 * which has an `error` and no metrics, is left out). JSON made the metrics' NaN null,
 * and a file written before a metric existed lacks it: both read back as NaN.
 */
export function parseRunsJsonl(text: string): RunResult[] {
  const out: RunResult[] = [];
  for (const [i, line] of text.split('\n').entries()) {
    if (line.trim() === '') continue;
    let r: { scenario?: unknown; setup?: unknown; boot?: unknown; round?: unknown; note?: unknown; metrics?: Record<string, unknown> };
    try {
      r = JSON.parse(line) as typeof r;
    } catch {
      throw new Error(`runs.jsonl line ${i + 1}: not JSON`);
    }
    if (!r.metrics) continue;
    if (typeof r.scenario !== 'string' || typeof r.setup !== 'string' || typeof r.boot !== 'string' || typeof r.round !== 'number') {
      throw new Error(`runs.jsonl line ${i + 1}: no scenario, setup, boot or round`);
    }
    const m = r.metrics;
    const metrics = Object.fromEntries(METRIC_KEYS.map((k) => [k, typeof m[k] === 'number' ? m[k] : NaN])) as unknown as RunMetrics;
    out.push({ scenario: r.scenario, setup: r.setup, boot: r.boot, round: r.round, metrics, ...(typeof r.note === 'string' && r.note ? { note: r.note } : {}) });
  }
  return out;
}

