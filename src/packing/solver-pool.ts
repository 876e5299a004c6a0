import { availableParallelism } from 'node:os';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { MessageChannel } from 'node:worker_threads';
import { Piscina } from 'piscina';
import type { ClusterSnapshot } from '../cluster/snapshot.js';
import type { Plan } from './plan.js';
import { type PlanParts, type WorkerHeap, assemblePlan } from './plan-transfer.js';
import { SnapshotEncoder, partTransferList } from './snapshot-transfer.js';
import type { SolveOptions } from './solve-options.js';

/**
 * The worker entry: compiled JavaScript next to this module in dist/, the
 * TypeScript source under tsx (tests, benchmarks). Decided from this module's own
 * extension, so no file-system probe is needed.
 */
export function solverWorkerUrl(): string {
  const ext = import.meta.url.endsWith('.ts') ? 'ts' : 'js';
  return new URL(`../../workers/solve.${ext}`, import.meta.url).href;
}

/**
 * How much CPU a solver worker thread yields to the main thread, which serves the
 * webhook and the extender (ADR 0034):
 * - `idle`: Linux SCHED_IDLE. A waking main thread preempts the solver at once. Nice
 *   alone does not do that: under EEVDF a nice-19 solver still runs out its slice
 *   first, which moved webhook p90 by 2.6 ms during 20k-pod solves here (SCHED_IDLE: 1 ms).
 * - `low`: nice 10 (per thread on Linux). The fallback where SCHED_IDLE cannot be set.
 * - `normal`: no change, for a process whose main thread may keep a core busy and must
 *   not starve the solver.
 * The worker applies it itself (workers/thread-priority.ts).
 */
export const SOLVER_PRIORITIES = ['idle', 'low', 'normal'] as const;
export type SolverPriority = (typeof SOLVER_PRIORITIES)[number];

/**
 * A solver worker's young generation, MB (ADR 0133). V8 sizes it from the heap limit as
 * for a thread that serves requests: under the chart's 1 GiB, 16 MB semi-spaces, which a
 * large solve grows into and which stay committed after it (34 of a worker's ~70 MB at
 * 50,000 pods). A solve's objects either die within a step or live through the solve
 * (the decoded snapshot, the packing state), so a bigger nursery only copies the
 * survivors more. Solves were no slower with this bound (ADR 0133 has the figures).
 */
export const SOLVER_YOUNG_GENERATION_MB = 16;

/** What every worker is started with (piscina's workerData). */
export interface SolverWorkerData {
  priority: SolverPriority;
}

export interface SolverPoolOptions {
  priority?: SolverPriority;
  logError?: (message: string) => void;
  /** The worker module; default solverWorkerUrl() (tests pass a worker that misbehaves). */
  workerUrl?: string;
}

/** Bounds on one solve. */
export interface SolveLimits {
  /** Give up when this aborts (a lost leadership term, a stopping controller). */
  signal?: AbortSignal;
  /** Give up after this long. */
  deadlineMs?: number;
}

/** A solve given up on (deadline passed or signal aborted): its worker was terminated. */
export class SolveAbortedError extends Error {}

/**
 * A piscina pool of solver workers, so a large solve never blocks the event loop
 * that serves the webhook, the extender and the metrics (ADR 0032). The snapshot
 * crosses in parts, each object serialized once in its life (ADR 0033); the plan
 * comes back in slices decoded one event-loop turn apart.
 */
export class SolverPool {
  private pool: Piscina | undefined;
  private readonly encoder = new SnapshotEncoder();
  /** The heap of the worker that ran the last solve, as it ended; the most any solve's worker committed. */
  readonly workerHeap: WorkerHeap & { maxCommittedBytes: number } = { usedBytes: 0, committedBytes: 0, youngCommittedBytes: 0, maxCommittedBytes: 0 };

  /**
   * Starts `size` workers (default: all cores but one, at least one) at `priority`
   * (default `idle`, ADR 0034). A worker that fails outside a task (it cannot load,
   * say) is reported to `logError`, never left to crash the process; piscina
   * replaces it.
   */
  start(size = Math.max(1, availableParallelism() - 1), opts: SolverPoolOptions = {}): this {
    if (this.pool) throw new Error('SolverPool already started');
    const workerData: SolverWorkerData = { priority: opts.priority ?? 'idle' };
    this.pool = new Piscina({
      filename: opts.workerUrl ?? solverWorkerUrl(), minThreads: size, maxThreads: size, idleTimeout: 60_000, workerData,
      resourceLimits: { maxYoungGenerationSizeMb: SOLVER_YOUNG_GENERATION_MB },
    });
    const logError = opts.logError ?? ((m: string) => console.error(m));
    this.pool.on('error', (err: Error) => logError(`solver worker failed: ${err.message.split('\n')[0]}`));
    return this;
  }

  get started(): boolean {
    return this.pool !== undefined;
  }

  /**
   * Runs `solve` (or the FFD baseline) on a worker. The snapshot goes over a
   * MessageChannel in parts, one event-loop turn apart, and the plan is decoded a
   * slice per turn, so a large solve never blocks the loop for long. The snapshot's
   * objects must not be changed afterwards (snapshots are immutable): their encoding
   * is remembered by identity.
   *
   * With `limits`, a solve that outlives its deadline or signal rejects with
   * SolveAbortedError and its worker is terminated (piscina starts a fresh one), so
   * a solve that never returns holds neither a cycle nor a thread.
   */
  async solve(snapshot: ClusterSnapshot, options?: SolveOptions, solver: 'headroom' | 'ffd' = 'headroom', limits: SolveLimits = {}): Promise<Plan> {
    if (!this.pool) throw new Error('SolverPool not started');
    const signals = [...(limits.signal ? [limits.signal] : []), ...(limits.deadlineMs !== undefined ? [AbortSignal.timeout(limits.deadlineMs)] : [])];
    const signal = signals.length > 1 ? AbortSignal.any(signals) : signals[0];
    signal?.throwIfAborted();
    const { port1, port2 } = new MessageChannel();
    const result = (this.pool.run({ port: port2, options, solver }, { transferList: [port2], ...(signal ? { signal } : {}) }) as Promise<PlanParts>)
      .catch((err: unknown) => {
        if (signal?.aborted) throw new SolveAbortedError(`solve given up: ${describeAbort(signal.reason)}`);
        throw err;
      });
    // A worker failure while parts are still going out is reported by `await result` below, not as unhandled.
    result.catch(() => {});
    port1.unref();
    try {
      for (const part of this.encoder.parts(snapshot)) {
        if (signal?.aborted) break;
        port1.postMessage(part, partTransferList(part));
        await nextTurn();
      }
    } catch (err) {
      // An object that cannot be serialized: closing the port ends the worker's task
      // too, so the worker is free for the next solve.
      port1.close();
      throw err;
    }
    const parts = await result;
    if (parts.workerHeap) {
      Object.assign(this.workerHeap, parts.workerHeap);
      this.workerHeap.maxCommittedBytes = Math.max(this.workerHeap.maxCommittedBytes, parts.workerHeap.committedBytes);
    }
    return assemblePlan(parts, () => nextTurn());
  }

  async destroy(): Promise<void> {
    const pool = this.pool;
    this.pool = undefined;
    if (pool) await pool.destroy();
  }
}

function describeAbort(reason: unknown): string {
  if (reason instanceof DOMException && reason.name === 'TimeoutError') return 'deadline passed';
  return reason instanceof Error ? reason.message : String(reason);
}
