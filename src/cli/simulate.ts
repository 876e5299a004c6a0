import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { SWEEP_PERCENTS, sweepPoint, withStaticBuffers } from '../sim/buffer-sweep.js';
import { ALL_BUILTIN_TRACES, BUILTIN_SUITES, loadBuiltinTrace } from '../sim/builtin.js';
import { runParallel } from '../sim/parallel.js';
import { parseQueryRange, replayReplicas } from '../sim/prometheus-replay.js';
import { renderReport } from '../sim/report-html.js';
import { POLICY_NAMES, type PolicyName, type TraceResult, summaryJson } from '../sim/result.js';
import { PRICE_NOTE, formatPerDayTable, formatSweepTable, formatTable } from '../sim/summary-table.js';
import { type Trace, TraceError } from '../sim/trace.js';
import { parseTrace } from '../sim/trace-parse.js';
import { type Command, CliError, UsageError } from './command.js';

const usage = `Usage: headroom simulate --trace FILE|builtin:NAME|builtin:all [--policy headroom,reactive,periodic,oracle] [--seed N] [--no-prediction] [--replicas-from FILE] [--buffer-sweep] [--out DIR] [--json]

Replays a workload trace through a simulated Cluster API cluster, once per policy,
and compares time-to-capacity and cost.

Options:
  --trace T     a trace YAML file, or builtin:${ALL_BUILTIN_TRACES.join('|builtin:')},
                or builtin:all (the suite, the default job), builtin:datacenter (the
                three datacenter traces) or builtin:dra (GPU pods with DRA claims)
  --policy P    comma-separated policies (default: ${POLICY_NAMES.join(',')})
  --seed N      random seed (default 1); the same seed gives the same result
  --no-prediction
                run headroom without prediction, to measure its provisioning and
                consolidation on their own against reactive and periodic
  --replicas-from FILE
                replay your own demand: FILE is the JSON of a Prometheus query_range
                over kube_deployment_spec_replicas (or an HPA's desired replicas);
                each series replaces the replicas of the trace's Deployment of the
                same namespace and name, the trace giving pod templates and groups
  --buffer-sweep
                also run headroom without prediction plus a static CapacityBuffer of
                0-20% of each Deployment, and draw headroom (as set) against that line
  --out DIR     write DIR/report.html (charts + summary; self-contained)
  --json        print the JSON summary instead of the table (an array for a suite)`;

function loadTraces(spec: string): Trace[] {
  try {
    const suite = spec.startsWith('builtin:') ? BUILTIN_SUITES.get(spec.slice('builtin:'.length)) : undefined;
    if (suite) return suite.map((n) => loadBuiltinTrace(n));
    if (spec.startsWith('builtin:')) return [loadBuiltinTrace(spec.slice('builtin:'.length))];
    let text: string;
    try {
      text = readFileSync(spec, 'utf8');
    } catch (err) {
      throw new CliError(`cannot read trace ${spec}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
    return [parseTrace(text, spec)];
  } catch (err) {
    if (err instanceof CliError) throw err;
    if (err instanceof TraceError) throw new CliError(err.message);
    throw new CliError((err as Error).message.split('\n')[0]!);
  }
}

/** `--replicas-from`: the one trace with its Deployments' replicas from a Prometheus query_range export. */
function replayFrom(traces: Trace[], spec: string, file: string): Trace {
  if (traces.length !== 1) throw new UsageError(`simulate: --replicas-from needs one trace (the workloads' pod templates), not the suite ${spec}`);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new CliError(`cannot read replica series ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  try {
    return replayReplicas(traces[0]!, parseQueryRange(text, file), file);
  } catch (err) {
    if (err instanceof TraceError) throw new CliError(err.message);
    throw err;
  }
}

function parsePolicies(raw: string | undefined): PolicyName[] {
  if (raw === undefined) return [...POLICY_NAMES];
  const names = raw.split(',').map((s) => s.trim()).filter(Boolean);
  if (names.length === 0) throw new UsageError('simulate: --policy needs at least one policy');
  for (const n of names) {
    if (!(POLICY_NAMES as readonly string[]).includes(n)) throw new UsageError(`simulate: unknown policy "${n}" (one of ${POLICY_NAMES.join(', ')})`);
  }
  return [...new Set(names)] as PolicyName[];
}

function parseSeed(raw: string | undefined): number {
  if (raw === undefined) return 1;
  if (!/^\d+$/.test(raw) || Number(raw) > 0xffffffff) throw new UsageError(`simulate: --seed must be an integer in [0, 4294967295], got "${raw}"`);
  return Number(raw);
}

/** A one-line progress bar on stderr, only when stderr is a terminal. */
function progressBar(): { update(fraction: number, label: string): void; done(): void } {
  const tty = process.stderr.isTTY === true;
  let lastDraw = 0;
  return {
    update(overall, label) {
      if (!tty) return;
      const now = Date.now();
      if (now - lastDraw < 80 && overall < 1) return;
      lastDraw = now;
      const width = 30;
      const filled = Math.round(overall * width);
      process.stderr.write(`\r[${'#'.repeat(filled)}${' '.repeat(width - filled)}] ${(overall * 100).toFixed(0).padStart(3)}% ${label}`.padEnd(80));
    },
    done() {
      if (tty) process.stderr.write(`\r${' '.repeat(80)}\r`);
    },
  };
}

export const simulateCommand: Command = {
  name: 'simulate',
  summary: 'replay a workload trace through a simulated cluster and compare autoscaling policies',
  usage,
  options: {
    trace: { type: 'string' },
    policy: { type: 'string' },
    seed: { type: 'string' },
    out: { type: 'string' },
    json: { type: 'boolean' },
    'no-prediction': { type: 'boolean' },
    'replicas-from': { type: 'string' },
    'buffer-sweep': { type: 'boolean' },
  },
  async run(values) {
    const spec = values.trace as string | undefined;
    if (!spec) throw new UsageError('simulate: --trace is required (a file, builtin:NAME or builtin:all)');
    const policies = parsePolicies(values.policy as string | undefined);
    const seed = parseSeed(values.seed as string | undefined);
    let traces = loadTraces(spec);
    const replicasFrom = values['replicas-from'] as string | undefined;
    if (replicasFrom !== undefined) traces = [replayFrom(traces, spec, replicasFrom)];
    const bar = progressBar();
    const wall = performance.now();
    let results: TraceResult[];
    try {
      // Every trace x policy is an independent job: run them on all cores.
      results = await runParallel(traces, { seed, policies, prediction: values['no-prediction'] !== true, onProgress: (f, label) => bar.update(f, label) });
      if (values['buffer-sweep']) {
        const swept = traces.flatMap((t) => SWEEP_PERCENTS.map((p) => withStaticBuffers(t, p)));
        const runs = await runParallel(swept, { seed, policies: ['headroom'], prediction: false, onProgress: (f, label) => bar.update(f, `static spare: ${label}`) });
        results.forEach((r, i) => {
          r.bufferSweep = SWEEP_PERCENTS.map((p, j) => sweepPoint(p, runs[i * SWEEP_PERCENTS.length + j]!.policies.headroom!));
        });
      }
    } catch (err) {
      bar.done();
      throw new CliError(`simulation failed: ${(err as Error).message.split('\n')[0]}`);
    }
    bar.done();
    const seconds = (performance.now() - wall) / 1000;

    let reportPath: string | undefined;
    if (values.out) {
      const dir = resolve(values.out as string);
      try {
        mkdirSync(dir, { recursive: true });
        reportPath = resolve(dir, 'report.html');
        writeFileSync(reportPath, renderReport(results, new Date().toISOString()));
      } catch (err) {
        throw new CliError(`cannot write report to ${dir}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
      }
    }
    if (values.json) {
      const out = spec.startsWith('builtin:') && BUILTIN_SUITES.has(spec.slice('builtin:'.length)) ? results.map(summaryJson) : summaryJson(results[0]!);
      process.stdout.write(`${JSON.stringify(out)}\n`);
      if (reportPath) process.stderr.write(`report: ${reportPath}\n`);
      return 0;
    }
    console.log(formatTable(results));
    console.log(`\n${PRICE_NOTE}.`);
    console.log(`\nper simulated day (day 1 first):\n${formatPerDayTable(results)}`);
    if (values['buffer-sweep']) console.log(`\nprediction against static spare (headroom without prediction + a CapacityBuffer of p% of each Deployment):\n${formatSweepTable(results)}`);
    const notes = [...new Set(results.flatMap((r) => Object.entries(r.policies).flatMap(([name, run]) => run.notes.map((n) => `${name}: ${n}`))))];
    if (notes.length) console.log(`\nnotes:\n${notes.map((n) => `  - ${n}`).join('\n')}`);
    console.log(`\nsimulated ${traces.length} trace(s) x ${policies.length} polic${policies.length === 1 ? 'y' : 'ies'} (seed ${seed}) in ${seconds.toFixed(1)} s`);
    if (reportPath) console.log(`report: ${reportPath}`);
    return 0;
  },
};
