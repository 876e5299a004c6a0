import { getHeapSpaceStatistics, getHeapStatistics } from 'node:v8';
import { type MessagePort, workerData } from 'node:worker_threads';
import { ffd } from '../src/packing/ffd.js';
import { type PlanParts, planParts } from '../src/packing/plan-transfer.js';
import { DecodedObjects, type SnapshotPart } from '../src/packing/snapshot-transfer.js';
import { type SolveOptions, solve } from '../src/packing/solve.js';
import type { SolverWorkerData } from '../src/packing/solver-pool.js';
import type { SolverSnapshot } from '../src/packing/solver-snapshot.js';
import { lowerThreadPriority } from './thread-priority.js';

/**
 * What the main thread posts to a solver worker: the snapshot comes in parts over
 * `port` (see SolverPool and ADR 0033), so the main thread never clones a big
 * snapshot in one go.
 */
export interface SolveTask {
  port: MessagePort;
  options?: SolveOptions;
  /** `ffd` runs the first-fit-decreasing baseline (the simulator's reactive policy, the benchmark). */
  solver?: 'headroom' | 'ffd';
}

// Solves yield the CPU to the main thread, so the webhook and extender keep their
// latency while a 20k-pod solve runs beside them on a small machine (ADR 0034).
const applied = lowerThreadPriority((workerData as SolverWorkerData | undefined)?.priority ?? 'idle');
if (applied.warning) console.error(`headroom solver worker: ${applied.warning}`);

/** This worker's decoded snapshot objects, kept across tasks (a worker runs one task at a time). */
const decoded = new DecodedObjects();

function receive(port: MessagePort): Promise<SolverSnapshot> {
  const assembler = decoded.assembler();
  return new Promise((resolve, reject) => {
    // The main thread closes its end when it gives up mid-transfer (after a completed
    // snapshot this rejection is a no-op).
    port.on('close', () => reject(new Error('snapshot transfer aborted by the main thread')));
    port.on('message', (part: SnapshotPart) => {
      try {
        const snapshot = assembler.add(part);
        if (!snapshot) return;
        port.close();
        resolve(snapshot);
      } catch (err) {
        port.close();
        reject(err as Error);
      }
    });
  });
}

/** Piscina worker entry: one pure solve per task; the plan goes back in slices. */
export default async function run(task: SolveTask): Promise<PlanParts> {
  const snapshot = await receive(task.port);
  const parts = planParts(task.solver === 'ffd' ? ffd(snapshot, task.options) : solve(snapshot, task.options));
  const heap = getHeapStatistics();
  let young = 0;
  for (const s of getHeapSpaceStatistics()) if (s.space_name === 'new_space' || s.space_name === 'new_large_object_space') young += s.space_size;
  return { ...parts, workerHeap: { usedBytes: heap.used_heap_size, committedBytes: heap.total_heap_size, youngCommittedBytes: young } };
}
