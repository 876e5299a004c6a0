/**
 * Simulator benchmark: CPU and wall time per policy for one trace (default the
 * built-in diurnal day, 2,000 pods at peak). Each run is a child process of its own
 * (as each `headroom simulate` job is a fresh worker), timing runPolicy alone;
 * the figures are medians over the runs. Also checks that every run of a policy
 * produced the same summary (determinism for a seed).
 *
 *   node --import tsx test/bench/simulate.ts [--trace diurnal] [--runs 3] [--policy headroom,reactive,periodic] [--seed 1] [--json]
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { loadBuiltinTrace } from '../../src/sim/builtin.js';
import { POLICY_FACTORIES, simulationSnapshot } from '../../src/sim/policies.js';
import { POLICY_NAMES, type PolicyName } from '../../src/sim/result.js';
import { runPolicy } from '../../src/sim/run.js';

const { values } = parseArgs({
  options: {
    json: { type: 'boolean', default: false },
    trace: { type: 'string', default: 'diurnal' },
    runs: { type: 'string', default: '3' },
    policy: { type: 'string', default: POLICY_NAMES.join(',') },
    seed: { type: 'string', default: '1' },
    child: { type: 'boolean', default: false },
  },
});

interface ChildResult { policy: PolicyName; cpuMs: number; wallMs: number; events: number; summary: string }

if (values.child) {
  // One measurement: a fresh process, the trace loaded before the clock starts.
  const policy = values.policy as PolicyName;
  const trace = loadBuiltinTrace(values.trace!);
  const cpu0 = process.cpuUsage();
  const wall0 = performance.now();
  const run = await runPolicy(trace, POLICY_FACTORIES[policy], { seed: Number(values.seed), policies: [], buildSnapshot: simulationSnapshot });
  const wallMs = performance.now() - wall0;
  const cpu = process.cpuUsage(cpu0);
  const out: ChildResult = { policy, cpuMs: (cpu.user + cpu.system) / 1000, wallMs, events: run.events, summary: JSON.stringify(run.summary) };
  process.stdout.write(JSON.stringify(out));
  process.exit(0);
}

const runs = Number(values.runs);
const policies = values.policy!.split(',').map((s) => s.trim()) as PolicyName[];
if (!Number.isInteger(runs) || runs <= 0 || policies.some((p) => !(POLICY_NAMES as readonly string[]).includes(p))) {
  console.error(`bench: --runs takes a positive integer and --policy a list of ${POLICY_NAMES.join(', ')}`);
  process.exit(2);
}
const log = (msg: string) => { if (!values.json) console.error(msg); };
const here = fileURLToPath(import.meta.url);
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
const round = (x: number) => Math.round(x);

const results: Array<{ policy: PolicyName; cpuMs: number; wallMs: number; runs: number; events: number; deterministic: boolean; summary: unknown }> = [];
for (const policy of policies) {
  const samples: ChildResult[] = [];
  for (let i = 0; i < runs; i++) {
    log(`${values.trace}/${policy}: run ${i + 1}/${runs} ...`);
    const stdout = execFileSync(process.execPath, ['--import', 'tsx', here, '--child', '--policy', policy, '--trace', values.trace!, '--seed', values.seed!],
      { encoding: 'utf8', maxBuffer: 1 << 24 });
    samples.push(JSON.parse(stdout) as ChildResult);
  }
  results.push({
    policy,
    cpuMs: round(median(samples.map((s) => s.cpuMs))),
    wallMs: round(median(samples.map((s) => s.wallMs))),
    runs,
    events: samples[0]!.events,
    deterministic: samples.every((s) => s.summary === samples[0]!.summary),
    summary: JSON.parse(samples[0]!.summary) as unknown,
  });
}
const total = { cpuMs: results.reduce((a, r) => a + r.cpuMs, 0), wallMs: results.reduce((a, r) => a + r.wallMs, 0) };

if (values.json) {
  console.log(JSON.stringify({ trace: values.trace, seed: Number(values.seed), results, total }));
} else {
  const rows = [['policy', 'cpu s (median)', 'wall s (median)', 'runs', 'events', 'same summary'],
    ...results.map((r) => [r.policy, (r.cpuMs / 1000).toFixed(2), (r.wallMs / 1000).toFixed(2), String(r.runs), String(r.events), r.deterministic ? 'yes' : 'NO']),
    ['total (serial)', (total.cpuMs / 1000).toFixed(2), (total.wallMs / 1000).toFixed(2), '', '', '']];
  const w = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  console.log(`trace ${values.trace}, seed ${values.seed}`);
  for (const r of rows) console.log(r.map((c, i) => (i === 0 ? c.padEnd(w[i]!) : c.padStart(w[i]!))).join('  '));
}
