import type { Clock } from './clock.js';

/**
 * Karpenter's batching window: the first trigger opens a window; each further
 * trigger extends it until `idleMs` pass without one, but never beyond `maxMs`
 * after it opened. Then `flush` runs. Flushes never overlap: triggers during a
 * flush open the next window when it finishes. Time comes from the Clock, so the
 * simulator runs the same batcher on virtual time.
 */

export interface BatcherOptions {
  idleMs: number;
  maxMs: number;
}

export const DEFAULT_BATCH: BatcherOptions = { idleMs: 1000, maxMs: 10_000 };

export class Batcher {
  private openedAt: number | undefined;
  private cancelIdle: (() => void) | undefined;
  private cancelMax: (() => void) | undefined;
  private running = false;
  private pending = false;
  private stopped = false;
  /** Resolves when the current flush (if any) is done; for shutdown and tests. */
  private current: Promise<void> = Promise.resolve();

  constructor(
    private readonly clock: Clock,
    private readonly options: BatcherOptions,
    private readonly flush: () => Promise<void>,
    private readonly onError: (err: unknown) => void = () => {},
  ) {
    if (!(options.idleMs >= 0) || !(options.maxMs >= options.idleMs)) {
      throw new Error(`batching window: need 0 <= idle (${options.idleMs}) <= max (${options.maxMs})`);
    }
  }

  /** Something changed that may need capacity. Cheap; call it as often as you like. */
  trigger(): void {
    if (this.stopped) return;
    if (this.running) {
      this.pending = true;
      return;
    }
    const now = this.clock.now();
    if (this.openedAt === undefined) {
      this.openedAt = now;
      this.cancelMax = this.clock.setTimer(this.options.maxMs, () => this.fire());
    }
    this.cancelIdle?.();
    const untilMax = this.openedAt + this.options.maxMs - now;
    this.cancelIdle = this.clock.setTimer(Math.min(this.options.idleMs, Math.max(0, untilMax)), () => this.fire());
  }

  /** True while a window is open or a flush runs. */
  busy(): boolean {
    return this.openedAt !== undefined || this.running;
  }

  private fire(): void {
    if (this.openedAt === undefined || this.running) return;
    this.cancelIdle?.();
    this.cancelMax?.();
    this.cancelIdle = this.cancelMax = undefined;
    this.openedAt = undefined;
    this.running = true;
    this.current = (async () => {
      try {
        await this.flush();
      } catch (err) {
        this.onError(err);
      } finally {
        this.running = false;
        if (this.pending && !this.stopped) {
          this.pending = false;
          this.trigger();
        }
      }
    })();
  }

  /** Stops opening windows; resolves once a running flush is done. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.cancelIdle?.();
    this.cancelMax?.();
    this.openedAt = undefined;
    await this.current;
  }
}
