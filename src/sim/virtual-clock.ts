import type { Clock } from '../provisioning/clock.js';

/** Simulated time 0: midnight UTC on Monday 1 January 2024 (cron schedules count from it). */
export const SIM_EPOCH = Date.UTC(2024, 0, 1);

interface Scheduled {
  at: number;
  seq: number;
  fn: () => void;
  cancelled: boolean;
}

/**
 * Virtual time for the simulator: a Clock (the controller's interface) over a
 * binary-heap event queue. Events at the same instant run in the order they were
 * scheduled (a sequence number breaks ties), which keeps a run deterministic.
 * Time only moves when `runNext` pops an event; nothing waits on the wall clock.
 */
export class VirtualClock implements Clock {
  private time: number;
  private seq = 0;
  private heap: Scheduled[] = [];

  constructor(start = SIM_EPOCH) {
    this.time = start;
  }

  now(): number {
    return this.time;
  }

  setTimer(ms: number, fn: () => void): () => void {
    return this.at(this.time + Math.max(0, ms), fn);
  }

  /** Schedules `fn` at absolute virtual time `at` (never in the past). */
  at(at: number, fn: () => void): () => void {
    const ev: Scheduled = { at: Math.max(at, this.time), seq: this.seq++, fn, cancelled: false };
    this.push(ev);
    return () => { ev.cancelled = true; };
  }

  /** Time of the next live event, or undefined when the queue is empty. */
  peek(): number | undefined {
    while (this.heap.length > 0 && this.heap[0]!.cancelled) this.pop();
    return this.heap[0]?.at;
  }

  /** Runs the next event; returns false when there is none at or before `until`. */
  runNext(until = Infinity): boolean {
    const at = this.peek();
    if (at === undefined || at > until) return false;
    const ev = this.pop()!;
    this.time = ev.at;
    ev.fn();
    return true;
  }

  /** Moves time forward to `t` without running anything (used at the end of a run). */
  advanceTo(t: number): void {
    if (t > this.time) this.time = t;
  }

  get pending(): number {
    return this.heap.length;
  }

  private less(a: Scheduled, b: Scheduled): boolean {
    return a.at < b.at || (a.at === b.at && a.seq < b.seq);
  }

  private push(ev: Scheduled): void {
    const h = this.heap;
    h.push(ev);
    let i = h.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!this.less(h[i]!, h[p]!)) break;
      [h[i], h[p]] = [h[p]!, h[i]!];
      i = p;
    }
  }

  private pop(): Scheduled | undefined {
    const h = this.heap;
    const top = h[0];
    const last = h.pop();
    if (h.length > 0 && last) {
      h[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < h.length && this.less(h[l]!, h[m]!)) m = l;
        if (r < h.length && this.less(h[r]!, h[m]!)) m = r;
        if (m === i) break;
        [h[i], h[m]] = [h[m]!, h[i]!];
        i = m;
      }
    }
    return top;
  }
}
