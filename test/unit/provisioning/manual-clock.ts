import type { Clock } from '../../../src/provisioning/clock.js';

/** A virtual clock for unit tests: timers fire only when `advance` passes them. */
export class ManualClock implements Clock {
  private t = 1_000_000;
  private timers: Array<{ at: number; fn: () => void; id: number }> = [];
  private nextId = 0;

  now(): number {
    return this.t;
  }

  setTimer(ms: number, fn: () => void): () => void {
    const id = this.nextId++;
    this.timers.push({ at: this.t + ms, fn, id });
    return () => {
      this.timers = this.timers.filter((x) => x.id !== id);
    };
  }

  /** Moves time forward, firing due timers in order (and yielding to promises between them). */
  async advance(ms: number): Promise<void> {
    const end = this.t + ms;
    for (;;) {
      this.timers.sort((a, b) => a.at - b.at || a.id - b.id);
      const next = this.timers[0];
      if (!next || next.at > end) break;
      this.timers.shift();
      this.t = next.at;
      next.fn();
      for (let i = 0; i < 20; i++) await Promise.resolve();
    }
    this.t = end;
    for (let i = 0; i < 20; i++) await Promise.resolve();
  }

  pending(): number {
    return this.timers.length;
  }
}
