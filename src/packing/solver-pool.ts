import { availableParallelism } from 'node:os';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { MessageChannel } from 'node:worker_threads';
import { Piscina } from 'piscina';
import type { ClusterSnapshot } from '../cluster/snapshot.js';
import type { Plan } from './plan.js';
import { snapshotChunks } from './snapshot-chunks.js';
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
 * A piscina pool of solver workers, so a large solve never blocks the event loop
 * that serves the webhook, the extender and the metrics (ADR 0032). The snapshot
 * crosses by structured clone; the plan comes back the same way.
 */
export class SolverPool {
  private pool: Piscina | undefined;

  /** Starts `size` workers (default: all cores but one, at least one). */
  start(size = Math.max(1, availableParallelism() - 1)): this {
    if (this.pool) throw new Error('SolverPool already started');
    this.pool = new Piscina({ filename: solverWorkerUrl(), minThreads: size, maxThreads: size, idleTimeout: 60_000 });
    return this;
  }

  get started(): boolean {
    return this.pool !== undefined;
  }

  /**
   * Runs `solve` (or the FFD baseline) on a worker. The snapshot goes over a
   * MessageChannel in chunks, one event-loop turn apart, so posting a large one
   * never blocks the loop for long (ADR 0032).
   */
  async solve(snapshot: ClusterSnapshot, options?: SolveOptions, solver: 'headroom' | 'ffd' = 'headroom'): Promise<Plan> {
    if (!this.pool) throw new Error('SolverPool not started');
    const { port1, port2 } = new MessageChannel();
    const result = this.pool.run({ port: port2, options, solver }, { transferList: [port2] }) as Promise<Plan>;
    // A worker failure while chunks are still going out is reported by `return result` below, not as unhandled.
    result.catch(() => {});
    port1.unref();
    for (const chunk of snapshotChunks(snapshot)) {
      port1.postMessage(chunk);
      await nextTurn();
    }
    return result;
  }

  async destroy(): Promise<void> {
    const pool = this.pool;
    this.pool = undefined;
    if (pool) await pool.destroy();
  }
}
