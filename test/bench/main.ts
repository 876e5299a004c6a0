/**
 * `npm run bench [-- --json] [-- --sizes 1000,5000] [-- --mixes dra] [-- --runs 3] [-- --no-lag] [-- --no-consolidation]`: Headroom's packer against a
 * Karpenter-style first-fit-decreasing baseline on Karpenter's benchmark inputs
 * (see workload.ts), and on a DRA GPU cluster of the same size (dra-workload.ts: its
 * time includes the snapshot builder's DRA step). Each measurement runs in a child process of its own so peak
 * RSS is per solver; figures are from one run after a JIT warm-up, or with `--runs N` the
 * median of N runs (each in a process of its own; every run is printed). `--mixes` picks
 * the rows (mixed, plain, dra); the plain-cost lines need the plain mix.
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { benchSnapshot, lowerBound, type Mix } from './workload.js';

const { values } = parseArgs({ options: {
  json: { type: 'boolean', default: false }, sizes: { type: 'string' }, 'no-lag': { type: 'boolean', default: false },
  'no-consolidation': { type: 'boolean', default: false }, mixes: { type: 'string' }, runs: { type: 'string' },
} });
const MIXES = ['mixed', 'plain', 'dra'] as const;
const mixes = (values.mixes ?? MIXES.join(',')).split(',').map((s) => s.trim()) as Array<Mix | 'dra'>;
if (mixes.length === 0 || mixes.some((m) => !(MIXES as readonly string[]).includes(m))) {
  console.error(`bench: --mixes takes a comma-separated subset of ${MIXES.join(',')}`);
  process.exit(2);
}
const runs = Number(values.runs ?? 1);
if (!Number.isInteger(runs) || runs <= 0) {
  console.error('bench: --runs takes a positive integer, e.g. --runs 3');
  process.exit(2);
}
const sizes = (values.sizes ?? '1000,5000,10000,20000').split(',').map((s) => Number(s.trim()));
if (sizes.some((n) => !Number.isInteger(n) || n <= 0)) {
  console.error('bench: --sizes takes positive integers, e.g. --sizes 1000,5000');
  process.exit(2);
}
const here = (f: string) => fileURLToPath(new URL(f, import.meta.url));
const log = (msg: string) => { if (!values.json) console.error(msg); };

interface Run { ms: number; cpuMs: number; draMs?: number; podsPerSecond: number; cpuPodsPerSecond: number; nodes: number; costPerHour: number; unschedulable: number; peakRssMb: number }

function child(script: string, args: string[]): string {
  return execFileSync(process.execPath, ['--expose-gc', '--import', 'tsx', here(script), ...args], { encoding: 'utf8', maxBuffer: 1 << 24 });
}

function runOne(solver: string, mix: Mix | 'dra', pods: number): Run {
  return JSON.parse(child('./run-one.ts', ['--solver', solver, '--mix', mix, '--pods', String(pods)])) as Run;
}

const median = (xs: number[]) => { const s = [...xs].sort((a, b) => a - b); const m = s.length >> 1; return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2; };

/** `runs` measurements, each in a process of its own: every one logged, the median of each figure returned. */
function measure(solver: string, mix: Mix | 'dra', pods: number): Run {
  const all: Run[] = [];
  for (let i = 0; i < runs; i++) {
    const r = runOne(solver, mix, pods);
    all.push(r);
    if (runs > 1) log(`  run ${i + 1}/${runs}: ${Math.round(r.podsPerSecond)} pods/s (cpu ${Math.round(r.cpuPodsPerSecond)}), ${r.nodes} nodes, ${r.costPerHour.toFixed(2)}/h, ${r.unschedulable} unschedulable${r.draMs !== undefined ? `, dra step ${Math.round(r.draMs)} ms` : ''}`);
  }
  if (runs === 1) return all[0]!;
  const m = (f: (r: Run) => number) => median(all.map(f));
  const draMs = all[0]!.draMs !== undefined ? { draMs: m((r) => r.draMs!) } : {};
  return {
    ms: m((r) => r.ms), cpuMs: m((r) => r.cpuMs), ...draMs, podsPerSecond: m((r) => r.podsPerSecond), cpuPodsPerSecond: m((r) => r.cpuPodsPerSecond),
    nodes: m((r) => r.nodes), costPerHour: m((r) => r.costPerHour), unschedulable: m((r) => r.unschedulable), peakRssMb: m((r) => r.peakRssMb),
  };
}

const round = (x: number, d = 2) => Math.round(x * 10 ** d) / 10 ** d;
const results: Array<{ solver: string; mix: Mix | 'dra'; pods: number; podsPerSecond: number; nodes: number; costPerHour: number; peakRssMb: number }> = [];
const extra: Array<{ cpuPodsPerSecond: number; unschedulable: number; draMs?: number }> = [];
const lowerBounds = new Map<number, number>();
for (const pods of sizes) {
  for (const mix of mixes) {
    for (const solver of ['headroom', 'ffd']) {
      log(`running ${solver} ${mix} ${pods}${runs > 1 ? ` (median of ${runs})` : ''} ...`);
      const r = measure(solver, mix, pods);
      results.push({ solver, mix, pods, podsPerSecond: round(r.podsPerSecond, 0), nodes: r.nodes, costPerHour: round(r.costPerHour), peakRssMb: round(r.peakRssMb, 1) });
      extra.push({ cpuPodsPerSecond: round(r.cpuPodsPerSecond, 0), unschedulable: r.unschedulable, ...(r.draMs !== undefined ? { draMs: round(r.draMs, 0) } : {}) });
    }
  }
  if (mixes.includes('plain')) lowerBounds.set(pods, lowerBound(benchSnapshot(pods, 'plain')));
}
const plainSize = sizes.includes(10000) ? 10000 : Math.max(...sizes);
const costOf = (solver: string) => results.find((r) => r.solver === solver && r.mix === 'plain' && r.pods === plainSize)!.costPerHour;
const plain = mixes.includes('plain') ? { pods: plainSize, headroomCost: costOf('headroom'), ffdCost: costOf('ffd'), lowerBound: round(lowerBounds.get(plainSize)!) } : undefined;

let eventLoopLag: unknown;
if (!values['no-lag']) {
  const lagPods = sizes.includes(20000) ? 20000 : Math.max(...sizes);
  log(`measuring event-loop lag during a ${lagPods}-pod solve ...`);
  eventLoopLag = JSON.parse(child('./event-loop-lag.ts', ['--pods', String(lagPods)]));
}

// A full consolidation evaluation at 1,000 nodes and 10,000 pods (issue 14: <= 2 s), Headroom's
// against the simulator's Karpenter-like settings, medians of 5 runs each (test/bench/consolidation.ts).
interface ConsolidationRun { method: string; cluster: string; nodes: number; pods: number; runsMs: number[]; medianMs: number; solves: number; removed: number; replaced: boolean; savedPerHour: number }
const consolidation: ConsolidationRun[] = [];
if (!values['no-consolidation']) {
  for (const cluster of ['loose', 'tight']) {
    for (const method of ['headroom', 'karpenter']) {
      log(`consolidation ${method} ${cluster} 1000 nodes / 10000 pods ...`);
      consolidation.push(JSON.parse(child('./consolidation.ts', ['--method', method, '--cluster', cluster, '--runs', '5'])) as ConsolidationRun);
    }
  }
}

if (values.json) {
  console.log(JSON.stringify({ results, plain, eventLoopLag, consolidation }));
} else {
  const rows = [['solver', 'mix', 'pods', 'pods/s', 'pods/s (cpu)', 'nodes', 'cost/h', 'vs ffd', 'peak RSS MB', 'unsched', 'dra step ms']];
  results.forEach((r, i) => {
    const base = results.find((x) => x.solver === 'ffd' && x.mix === r.mix && x.pods === r.pods)!;
    rows.push([r.solver, r.mix, String(r.pods), String(r.podsPerSecond), String(extra[i]!.cpuPodsPerSecond), String(r.nodes),
      r.costPerHour.toFixed(2), `${(r.costPerHour / base.costPerHour).toFixed(3)}x`, r.peakRssMb.toFixed(1), String(extra[i]!.unschedulable),
      extra[i]!.draMs !== undefined ? String(extra[i]!.draMs) : '']);
  });
  const w = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  for (const r of rows) console.log(r.map((c, i) => c.padStart(w[i]!)).join('  '));
  console.log('');
  for (const pods of mixes.includes('plain') ? sizes : []) {
    const lb = lowerBounds.get(pods)!;
    const h = results.find((r) => r.solver === 'headroom' && r.mix === 'plain' && r.pods === pods)!.costPerHour;
    const f = results.find((r) => r.solver === 'ffd' && r.mix === 'plain' && r.pods === pods)!.costPerHour;
    console.log(`plain ${pods}: lower bound ${lb.toFixed(2)}/h; headroom ${(h / lb).toFixed(4)}x, ffd ${(f / lb).toFixed(4)}x`);
  }
  if (eventLoopLag) {
    type Lag = { maxMs: number; p99Ms: number; maxGapMs: number; solveMs: number };
    const l = eventLoopLag as { pods: number; inProcess: Lag; pool: Lag };
    const f = (x: Lag) => `event-loop delay max ${x.maxMs.toFixed(1)} ms, p99 ${x.p99Ms.toFixed(1)} ms, longest 5 ms-timer gap ${x.maxGapMs.toFixed(1)} ms (solve ${x.solveMs.toFixed(0)} ms)`;
    console.log(`\nmain thread during a ${l.pods}-pod mixed solve:\n  in-process:    ${f(l.inProcess)}\n  piscina pool:  ${f(l.pool)}`);
  }
  if (consolidation.length) {
    console.log('\nconsolidation evaluation, 1,000 nodes / 10,000 pods (median of 5 runs; every run in ms):');
    for (const c of consolidation) {
      const base = consolidation.find((x) => x.method === 'karpenter' && x.cluster === c.cluster)!;
      console.log(`  ${c.method.padEnd(9)} ${c.cluster.padEnd(5)}  median ${c.medianMs.toFixed(0).padStart(5)} ms (${(c.medianMs / base.medianMs).toFixed(2)}x karpenter-like)  runs ${c.runsMs.join('/')}  solves ${c.solves}  removes ${c.removed}${c.replaced ? ' (replace)' : ''}, saves ${c.savedPerHour}/h`);
    }
  }
}
