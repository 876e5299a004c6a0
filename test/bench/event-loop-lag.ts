/**
 * Main-thread event-loop delay (perf_hooks.monitorEventLoopDelay) while one large
 * solve runs in-process, and while the same solve runs on the piscina pool.
 * Prints one JSON line. Usage: node --expose-gc --import tsx test/bench/event-loop-lag.ts --pods N
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { SolverPool } from '../../src/packing/solver-pool.js';
import { solve } from '../../src/packing/solve.js';
import { benchSnapshot } from './workload.js';

const { values } = parseArgs({ options: { pods: { type: 'string' } } });
const pods = Number(values.pods ?? 20000);
const snapshot = benchSnapshot(pods, 'mixed');

interface Lag { maxMs: number; p99Ms: number; meanMs: number; maxGapMs: number; solveMs: number }

async function measure(run: () => Promise<unknown>): Promise<Lag> {
  // Collect the previous phase's garbage first, so one phase's GC is not billed to the other.
  (globalThis as { gc?: () => void }).gc?.();
  const h = monitorEventLoopDelay({ resolution: 5 });
  h.enable();
  // A ticking timer stands in for HTTP handlers waiting for their turn; its largest
  // gap is the longest a request would have waited.
  let last = performance.now();
  let maxGap = 0;
  const tick = setInterval(() => {
    const now = performance.now();
    maxGap = Math.max(maxGap, now - last);
    last = now;
  }, 5);
  await new Promise((r) => setTimeout(r, 100));
  h.reset();
  maxGap = 0;
  const t0 = performance.now();
  await run();
  const solveMs = performance.now() - t0;
  await new Promise((r) => setTimeout(r, 50));
  h.disable();
  clearInterval(tick);
  return { maxMs: h.max / 1e6, p99Ms: h.percentile(99) / 1e6, meanMs: h.mean / 1e6, maxGapMs: maxGap, solveMs };
}

const pool = new SolverPool().start(1);
await pool.solve(benchSnapshot(300, 'mixed', 7)); // worker started and warm
solve(benchSnapshot(300, 'mixed', 7));
// Yield once first so the timers are armed before the synchronous solve blocks the loop.
const inProcess = await measure(async () => { await new Promise((r) => setTimeout(r, 10)); solve(snapshot); });
const onPool = await measure(() => pool.solve(snapshot));
await pool.destroy();
process.stdout.write(`${JSON.stringify({ pods, inProcess, pool: onPool })}\n`);
