/**
 * `npm run bench:peers-calibrate [-- --scenario a,b] [--runs FILE] [--out FILE]`: the simulator's
 * `periodic` (Cluster-Autoscaler-like) policy against the real Cluster Autoscaler
 * (issue 28). bench:peers' scenarios are played as simulator traces (peers-trace.ts)
 * through `periodic` set up as each Cluster Autoscaler setup was, and set beside that
 * setup's real figures, read from the summary table of docs/comparison.md (nothing is
 * copied here), or with `--runs FILE` the medians of a bench:peers runs.jsonl. Prints a markdown table (docs/simulation.md has it). A few seconds; no
 * cluster.
 *
 * The model's inputs measured on the harness (docs/simulation.md says how):
 * - boot: scale write -> first pod Running, from the same table (harnessBootS);
 * - loop latency: a Cluster Autoscaler loop's start -> its scale-up write, from its logs:
 *   28.8 s at client-go's default 5 QPS (kubernetes/autoscaler#6333), 0.6 s at 100 QPS.
 */

import { readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { ffd } from '../../src/packing/ffd.js';
import { periodicPolicy, type PeriodicOptions } from '../../src/sim/policies/periodic.js';
import { simulationSnapshot } from '../../src/sim/policies.js';
import type { PolicyFactory } from '../../src/sim/policy.js';
import { runPolicy } from '../../src/sim/run.js';
import { median, parseRunsJsonl, percentile, summarize, type RunResult } from './peers-metrics.js';
import { SCENARIOS, type Scenario } from './peers-scenarios.js';
import { scenarioTrace } from './peers-trace.js';

/**
 * The harness's provisioning time, s: from a scale-up write to the first pod Running on
 * the new capacity (CAPI's MachineSet, the kwok provider's 5 s boot, the Node's
 * readiness and kube-scheduler's retry of pods that failed while no node fitted), the
 * median over every run of docs/comparison.md's summary, Headroom's and Cluster
 * Autoscaler's alike (`to Running first` less `first scale-up`). The simulator binds a
 * pod as soon as its node is Ready, so this is the traces' boot delay.
 */
export function harnessBootS(real: ReadonlyMap<string, Figures>): number {
  // Only scenarios whose first pods come at once on an empty cluster: in diurnal and cronjob the
  // first pods may find capacity a predictive autoscaler bought before them (a gap of nothing).
  const continuous = new Set(SCENARIOS.filter((s) => s.durationS !== undefined).map((s) => s.name));
  const gaps = [...real].filter(([k]) => !continuous.has(k.split('/')[0]!)).map(([, f]) => f.first - f.firstScaleUp).filter(Number.isFinite).sort((a, b) => a - b);
  if (gaps.length === 0) throw new Error('docs/comparison.md: no run to take the harness boot time from');
  return median(gaps);
}

/** A Cluster Autoscaler setup of bench:peers, as `periodic` options. */
export interface SimSetup {
  readonly name: 'ca-defaults' | 'ca-faq' | 'ca-tuned' | 'periodic-uncalibrated';
  /** The real setup whose figures it is compared with. */
  readonly real: 'ca-defaults' | 'ca-faq' | 'ca-tuned';
  readonly periodic: Omit<PeriodicOptions, 'pack'>;
}

/** Loop start -> scale-up write in Cluster Autoscaler's logs (every scale-up of the 12 CA runs). */
export const CA_LOOP_LATENCY_MS = { throttled: 28_800, tuned: 600 } as const;

export const SIM_SETUPS: readonly SimSetup[] = [
  // The simulator's `periodic` as `headroom simulate` runs it: a 10 s scan, decisions written at once.
  { name: 'periodic-uncalibrated', real: 'ca-defaults', periodic: {} },
  { name: 'ca-defaults', real: 'ca-defaults', periodic: { scanIntervalMs: 10_000, loopLatencyMs: CA_LOOP_LATENCY_MS.throttled, caTrigger: true } },
  {
    name: 'ca-faq', real: 'ca-faq',
    periodic: { scanIntervalMs: 5000, scaleDownUnneededMs: 60_000, loopLatencyMs: CA_LOOP_LATENCY_MS.throttled, caTrigger: true },
  },
  {
    name: 'ca-tuned', real: 'ca-tuned',
    periodic: {
      scanIntervalMs: 5000, scaleDownUnneededMs: 30_000, scaleDownDelayAfterAddMs: 30_000, loopLatencyMs: CA_LOOP_LATENCY_MS.tuned, caTrigger: true,
    },
  },
];

export interface Figures {
  /** s from the start (real runs only). */
  firstScaleUp: number;
  first: number;
  p50: number;
  last: number;
  nodes: number;
}

/** The real figures of docs/comparison.md's summary table: scenario/setup -> figures (short boots). */
export function realFigures(markdown: string): Map<string, Figures> {
  const out = new Map<string, Figures>();
  const at = markdown.indexOf('### Summary');
  if (at < 0) throw new Error('docs/comparison.md has no "### Summary" table');
  for (const line of markdown.slice(at).split('\n').slice(1)) {
    if (line.startsWith('### ')) break;
    const c = line.split('|').map((x) => x.trim());
    // | scenario | boot | setup | runs | first scale-up s | to Running first s | p50 s | p90 s | last s | pending pod-s | nodes | ...
    if (c.length < 12 || c[2] === 'boot' || c[2] === 'setup' || c[1]!.startsWith('---') || c[2] !== 'short') continue;
    const num = (s: string) => Number(s.split(' ')[0]);
    out.set(`${c[1]}/${c[3]}`, { firstScaleUp: num(c[5]!), first: num(c[6]!), p50: num(c[7]!), last: num(c[9]!), nodes: num(c[11]!) });
  }
  return out;
}

/**
 * The real figures of a bench:peers run's runs.jsonl (`--runs FILE`): the median over
 * the runs of each scenario/setup, short boots with the DaemonSet (the summary's rows).
 */
export function realFiguresFromRuns(results: readonly RunResult[]): Map<string, Figures> {
  const out = new Map<string, Figures>();
  for (const row of summarize(results.filter((r) => r.boot === 'short'))) {
    const m = row.metrics;
    out.set(`${row.scenario}/${row.setup}`, {
      firstScaleUp: m.firstScaleUpS.median, first: m.toRunningFirstS.median, p50: m.toRunningP50S.median, last: m.toRunningLastS.median, nodes: m.nodesCreated.median,
    });
  }
  return out;
}

/** One scenario through `periodic` set up as `setup`: time to bound (first / p50 / last) and nodes created. */
export async function simulate(s: Scenario, setup: SimSetup, bootS: number, seed = 1): Promise<Figures> {
  // Cluster Autoscaler's view of a new node: the DaemonSet's 100m/64Mi and its own 100m kube-proxy.
  // The bench deletes a pod set once every pod of it ran, which a trace cannot say: the
  // deletes come after the settle time instead (time to Running is all this compares).
  const trace = scenarioTrace(s, { bootS, reserved: { cpuMilli: 200, memoryMi: 64 }, deleteDelayS: s.settleS });
  const created = new Map<string, number>();
  const bound = new Map<string, number>();
  const inner = periodicPolicy({ pack: (x) => ffd(x), ...setup.periodic });
  const factory: PolicyFactory = async (ctx) => {
    const off = ctx.cluster.onChange((kind) => {
      if (kind !== 'pods') return;
      const now = ctx.clock.now();
      for (const p of ctx.cluster.objects().pods) {
        const key = `${p.metadata?.namespace}/${p.metadata?.name}`;
        if (!created.has(key)) created.set(key, p.metadata?.creationTimestamp ? new Date(p.metadata.creationTimestamp).getTime() : now);
        if (p.spec?.nodeName && !bound.has(key)) bound.set(key, now);
      }
    });
    const policy = await inner(ctx);
    return { ...policy, stop: () => { off(); policy.stop(); } };
  };
  const run = await runPolicy(trace, factory, { seed, policies: [], buildSnapshot: simulationSnapshot });
  const waits = [...bound].map(([k, t]) => (t - created.get(k)!) / 1000).sort((a, b) => a - b);
  const nodes = run.actions.filter((a) => a.to > a.from).reduce((n, a) => n + a.to - a.from, 0);
  return { firstScaleUp: NaN, first: waits[0] ?? NaN, p50: percentile(waits, 50), last: waits.at(-1) ?? NaN, nodes };
}

const pct = (sim: number, real: number) => (real === 0 ? '–' : `${sim >= real ? '+' : ''}${Math.round((100 * (sim - real)) / real)}%`);
const f1 = (x: number) => (Number.isFinite(x) ? x.toFixed(1) : '–');

/** The calibration table: every scenario with real figures, every setup. */
export async function calibrationTable(real: ReadonlyMap<string, Figures>, scenarios: readonly Scenario[] = SCENARIOS): Promise<string> {
  const bootS = harnessBootS(real);
  const rows = [
    `Boot (scale write -> first pod Running, the median over the table's runs): ${bootS.toFixed(2)} s.`,
    '',
    '| scenario | sim setup | vs real | real first / p50 / last s | sim first / p50 / last s | diff first / p50 / last | real nodes | sim nodes |',
    '| --- | --- | --- | --- | --- | --- | --- | --- |',
  ];
  for (const s of scenarios) {
    for (const setup of SIM_SETUPS) {
      const r = real.get(`${s.name}/${setup.real}`);
      if (!r) continue;
      const m = await simulate(s, setup, bootS);
      rows.push(`| ${s.name} | ${setup.name} | ${setup.real} | ${f1(r.first)} / ${f1(r.p50)} / ${f1(r.last)} | ${f1(m.first)} / ${f1(m.p50)} / ${f1(m.last)} | `
        + `${pct(m.first, r.first)} / ${pct(m.p50, r.p50)} / ${pct(m.last, r.last)} | ${r.nodes} | ${m.nodes} |`);
    }
  }
  return rows.join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({ options: { scenario: { type: 'string' }, out: { type: 'string' }, runs: { type: 'string' } } });
  const names = values.scenario?.split(',');
  for (const n of names ?? []) {
    if (!SCENARIOS.some((s) => s.name === n)) {
      process.stderr.write(`--scenario: no scenario "${n}" (one of ${SCENARIOS.map((s) => s.name).join(', ')})\n`);
      process.exit(2);
    }
  }
  let real: Map<string, Figures>;
  try {
    real = values.runs
      ? realFiguresFromRuns(parseRunsJsonl(readFileSync(values.runs, 'utf8')))
      : realFigures(readFileSync(new URL('../../docs/comparison.md', import.meta.url), 'utf8'));
  } catch (err) {
    process.stderr.write(`bench:peers-calibrate: ${(err as Error).message.split('\n')[0]}\n`);
    process.exit(2);
  }
  const table = await calibrationTable(real, names ? SCENARIOS.filter((s) => names.includes(s.name)) : SCENARIOS);
  process.stdout.write(`${table}\n`);
  if (values.out) writeFileSync(values.out, `${table}\n`);
}
