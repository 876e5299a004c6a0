import { execFileSync } from 'node:child_process';
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import type { SolverPriority } from '../src/packing/solver-pool.js';

// Lowers a solver worker thread to the SolverPriority it was started with (ADR 0034).
// This is the worker's OS edge (a program run, a /proc read), so it lives with the
// worker entry and not in src/packing.

export const LOW_NICE = 10;

export interface AppliedPriority {
  priority: SolverPriority;
  /** Why the asked-for priority could not be had, for one log line. */
  warning?: string;
}

/** The system calls, passed in so the decision can be tested without renicing the test. */
export interface ThreadSystem {
  /** Sets the calling thread's nice value. */
  renice(nice: number): void;
  /** Runs a program without a shell; throws when it cannot be run or exits non-zero. */
  run(file: string, args: string[]): void;
  /** The calling thread's kernel id. */
  threadId(): string;
}

const linux: ThreadSystem = {
  renice: (nice) => setPriority(nice),
  run: (file, args) => {
    execFileSync(file, args, { stdio: 'ignore', timeout: 5000 });
  },
  // "<pid>/task/<tid>"
  threadId: () => readlinkSync('/proc/thread-self').split('/').pop()!,
};

/**
 * Lowers the calling thread to `wanted`. Node has no sched_setscheduler, so SCHED_IDLE
 * is set with util-linux's `chrt` on this thread's id (from /proc/thread-self); the
 * container image ships it. Lowering one's own priority needs no privilege.
 */
export function lowerThreadPriority(wanted: SolverPriority, sys: ThreadSystem = linux): AppliedPriority {
  if (wanted === 'normal') return { priority: 'normal' };
  try {
    sys.renice(LOW_NICE);
  } catch (err) {
    return { priority: 'normal', warning: `cannot lower the solver thread's priority: ${(err as Error).message}` };
  }
  if (wanted === 'low') return { priority: 'low' };
  try {
    sys.run('chrt', ['--idle', '-p', '0', sys.threadId()]);
    return { priority: 'idle' };
  } catch (err) {
    return { priority: 'low', warning: `SCHED_IDLE unavailable for the solver thread (${firstLine(err)}); running at nice ${LOW_NICE}` };
  }
}

function firstLine(err: unknown): string {
  const e = err as { code?: string; message?: string };
  return e.code ?? (e.message ?? String(err)).split('\n')[0]!;
}
