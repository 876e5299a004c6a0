/**
 * One benchmark measurement in a process of its own, so peak RSS belongs to one
 * solver and one size. Prints one JSON line. Usage:
 *   node --import tsx test/bench/run-one.ts --solver headroom|ffd --mix mixed|plain|dra --pods N
 * The `dra` mix (dra-workload.ts) starts from the DRA objects: its time includes the
 * snapshot builder's DRA step (claims resolved, CEL selectors evaluated on every
 * device), reported apart as draMs, then the solve.
 */
import { parseArgs } from 'node:util';
import { ffd } from '../../src/packing/ffd.js';
import { solve } from '../../src/packing/solve.js';
import { draBenchInput, draBenchSnapshot } from './dra-workload.js';
import { type Mix, benchSnapshot } from './workload.js';

const { values } = parseArgs({ options: { solver: { type: 'string' }, mix: { type: 'string' }, pods: { type: 'string' } } });
const solver = values.solver === 'ffd' ? ffd : solve;
const mix = (values.mix ?? 'mixed') as Mix | 'dra';
const pods = Number(values.pods ?? 1000);

// Warm the JIT on a small, different input, as Go's testing.B warms by repetition.
if (mix === 'dra') solver(draBenchSnapshot(draBenchInput(300, 7)));
else solver(benchSnapshot(300, mix, 7));
const input = mix === 'dra' ? draBenchInput(pods) : undefined;
const ready = mix === 'dra' ? undefined : benchSnapshot(pods, mix);
const cpu0 = process.cpuUsage();
const t0 = performance.now();
const snapshot = input ? draBenchSnapshot(input) : ready!;
const draMs = performance.now() - t0;
const plan = solver(snapshot);
const ms = performance.now() - t0;
const cpu = process.cpuUsage(cpu0);
const cpuMs = (cpu.user + cpu.system) / 1000;
let nodes = 0;
for (const s of plan.scaleUps) nodes += s.to - s.from;
process.stdout.write(`${JSON.stringify({
  ms, cpuMs, ...(input ? { draMs } : {}), podsPerSecond: pods / (ms / 1000), cpuPodsPerSecond: pods / (cpuMs / 1000), nodes,
  costPerHour: plan.cost.addedPerHour, unschedulable: plan.unschedulable.length,
  placed: plan.placements.length, peakRssMb: process.resourceUsage().maxRSS / 1024,
})}\n`);
