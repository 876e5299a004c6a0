import type { ClusterSnapshot } from '../cluster/snapshot.js';
import type { Plan } from '../packing/plan.js';
import type { Clock } from './clock.js';

/**
 * Solves a snapshot. `signal` aborts when the cycle gives up on it (solve deadline,
 * lost leadership): an implementation that can stop (the worker pool) should.
 */
export type SolveFn = (snapshot: ClusterSnapshot, signal?: AbortSignal) => Plan | Promise<Plan>;

export const DEFAULT_SOLVE_DEADLINE_MS = 60_000;

/** The cycle's leadership term ended: nothing more of it may be written. */
export class TermEndedError extends Error {}

/** Throws TermEndedError once `term` has ended: called just before each write. */
export function checkTerm(term: AbortSignal | undefined): void {
  if (term?.aborted) throw new TermEndedError('leadership term ended');
}

/**
 * `solve`'s plan for `snapshot` if it comes within `deadlineMs`, else 'timeout'. The
 * solve's signal aborts at the deadline or when `term` ends; a lost term throws
 * TermEndedError at once.
 */
export async function solveWithin(
  solve: SolveFn, snapshot: ClusterSnapshot, clock: Clock, deadlineMs: number, term: AbortSignal | undefined,
): Promise<Plan | 'timeout'> {
  const deadline = new AbortController();
  const cancel = clock.setTimer(deadlineMs, () => deadline.abort(new Error('solve deadline passed')));
  const signal = term ? AbortSignal.any([deadline.signal, term]) : deadline.signal;
  try {
    return await untilAborted(Promise.resolve().then(() => solve(snapshot, signal)), signal);
  } catch (err) {
    checkTerm(term);
    if (deadline.signal.aborted) return 'timeout';
    throw err;
  } finally {
    cancel();
  }
}

/** `p`, or a rejection with the signal's reason once it aborts (whichever comes first). */
function untilAborted<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
