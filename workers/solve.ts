import { setPriority } from 'node:os';
import type { MessagePort } from 'node:worker_threads';
import type { ClusterSnapshot } from '../src/cluster/snapshot.js';
import { ffd } from '../src/packing/ffd.js';
import type { Plan } from '../src/packing/plan.js';
import { type SnapshotChunk, assembleSnapshot } from '../src/packing/snapshot-chunks.js';
import { type SolveOptions, solve } from '../src/packing/solve.js';

/**
 * What the main thread posts to a solver worker. The snapshot comes either whole
 * (structured clone in one piece) or in chunks over `port`, so the main thread
 * never clones a big snapshot in one go (see SolverPool).
 */
export interface SolveTask {
  snapshot?: ClusterSnapshot;
  port?: MessagePort;
  options?: SolveOptions;
  /** `ffd` runs the first-fit-decreasing baseline (the simulator's reactive policy, the benchmark). */
  solver?: 'headroom' | 'ffd';
}

/**
 * Solves yield the CPU to the main thread: on Linux a nice value is per thread, so
 * this lowers only this worker, and the webhook / extender handlers keep their
 * latency while a 20k-pod solve runs beside them on a small machine. Raising the
 * nice value needs no privilege; where the platform refuses, solving goes on as is.
 */
const SOLVER_NICE = 10;
try {
  setPriority(SOLVER_NICE);
} catch {
  // not permitted here: keep the default priority
}

function receive(port: MessagePort): Promise<ClusterSnapshot> {
  return new Promise((resolve, reject) => {
    const chunks: SnapshotChunk[] = [];
    port.on('message', (chunk: SnapshotChunk) => {
      chunks.push(chunk);
      if (chunk.last) {
        port.close();
        try { resolve(assembleSnapshot(chunks)); } catch (err) { reject(err as Error); }
      }
    });
  });
}

/** Piscina worker entry: one pure solve per task. */
export default async function run(task: SolveTask): Promise<Plan> {
  const snapshot = task.snapshot ?? (task.port ? await receive(task.port) : undefined);
  if (!snapshot) throw new Error('solve task without a snapshot');
  return task.solver === 'ffd' ? ffd(snapshot, task.options) : solve(snapshot, task.options);
}
