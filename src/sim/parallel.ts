import { availableParallelism } from 'node:os';
import { MessageChannel } from 'node:worker_threads';
import { Piscina } from 'piscina';
import type { PolicyName, PolicyRun, TraceResult } from './result.js';
import type { Trace } from './trace.js';
import type { SimulationTask } from './worker.js';

function workerUrl(): string {
  const ext = import.meta.url.endsWith('.ts') ? 'ts' : 'js';
  return new URL(`./worker.${ext}`, import.meta.url).href;
}

export interface ParallelOptions {
  seed: number;
  policies: PolicyName[];
  /** False: headroom runs without prediction. Default true. */
  prediction?: boolean;
  /** Worker threads (default: the machine's cores, at most the number of jobs). */
  threads?: number;
  /** Overall fraction done and a label of the job that moved. */
  onProgress?: (fraction: number, label: string) => void;
}

/**
 * The order the jobs are handed to the pool: longest first (simulated time; headroom,
 * which also predicts, before the baselines), so no long job starts last while the
 * other threads sit idle. Only the start order changes: results keep the job order.
 */
export function startOrder(jobs: readonly { trace: Pick<Trace, 'duration'>; policy: PolicyName }[]): number[] {
  return jobs.map((_, i) => i).sort((a, b) => jobs[b]!.trace.duration - jobs[a]!.trace.duration
    || Number(jobs[b]!.policy === 'headroom') - Number(jobs[a]!.policy === 'headroom') || a - b);
}

/**
 * Runs every trace x policy job on a piscina pool: the jobs are independent (each
 * has its own cluster, clock and seeded streams), so the result is the same as
 * running them one after another in-process, only sooner on a multi-core machine.
 */
export async function runParallel(traces: Trace[], opts: ParallelOptions): Promise<TraceResult[]> {
  const jobs = traces.flatMap((trace) => opts.policies.map((policy) => ({ trace, policy })));
  const threads = Math.max(1, Math.min(opts.threads ?? availableParallelism(), jobs.length));
  const pool = new Piscina({ filename: workerUrl(), minThreads: threads, maxThreads: threads });
  const done = new Array<number>(jobs.length).fill(0);
  const report = (i: number, f: number) => {
    done[i] = f;
    opts.onProgress?.(done.reduce((a, b) => a + b, 0) / jobs.length, `${jobs[i]!.trace.name}/${jobs[i]!.policy}`);
  };
  const order = startOrder(jobs);
  try {
    const runs = new Array<PolicyRun>(jobs.length);
    await Promise.all(order.map(async (i) => {
      const { trace, policy } = jobs[i]!;
      const { port1, port2 } = new MessageChannel();
      port1.on('message', (m: { fraction: number }) => report(i, m.fraction));
      const task: SimulationTask = { trace, policy, seed: opts.seed, prediction: opts.prediction ?? true, progress: port2 };
      try {
        runs[i] = await pool.run(task, { transferList: [port2] });
      } finally {
        port1.close();
        report(i, 1);
      }
    }));
    return traces.map((trace) => {
      const result: TraceResult = { trace: trace.name, description: trace.description, seed: opts.seed, durationSeconds: trace.duration / 1000, policies: {} };
      jobs.forEach((j, i) => {
        if (j.trace === trace) result.policies[j.policy] = runs[i];
      });
      return result;
    });
  } finally {
    await pool.destroy();
  }
}
