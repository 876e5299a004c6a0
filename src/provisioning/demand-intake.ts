import type { SchedulingPod } from '../cluster/snapshot.js';

/** Where a demand signal came from. Informers remain the safety net for both. */
export type DemandSource =
  /** The mutating webhook saw the pod being created (before any scheduling attempt). */
  | 'webhook'
  /** The scheduler extender's filter left the pod no node (before it is marked Unschedulable). */
  | 'extender';

/**
 * One observation of a pod that needs a node. At admission a pod created from
 * `generateName` (every Deployment / Job pod) has no name and no uid yet: `pod.name`
 * and `pod.uid` are empty and `generateName` is set. Consumers match such records to
 * the informer's pending pods by owner / equivalence class, not by key.
 */
export interface DemandRecord {
  source: DemandSource;
  /** Milliseconds since the epoch, from the caller's clock. */
  observedAt: number;
  /** May be a memoised getter: producers on the hot path leave the conversion to the reader. */
  readonly pod: SchedulingPod;
  /** metadata.generateName when the pod has no name yet. */
  generateName?: string;
  /** The admission request uid (webhook) for tracing. */
  requestUid?: string;
}

export type DemandListener = (record: DemandRecord) => void;

/**
 * A bounded in-memory queue plus a synchronous emitter, between the hot-path producers
 * (webhook, extender) and the consumers (the batcher now, the predictor later).
 * `record` is O(1) and never throws: when the queue is full the oldest record is
 * dropped and counted; a throwing listener is isolated from the producer and from the
 * other listeners. Listeners run on the request path, so they must only enqueue.
 */
export class DemandIntake {
  private readonly buffer: (DemandRecord | undefined)[];
  private head = 0;
  private count = 0;
  private readonly listeners = new Set<DemandListener>();
  /** Records pushed out of the queue unread because it was full. */
  dropped = 0;
  /** Records ever accepted. */
  received = 0;
  /** Listener exceptions swallowed. */
  listenerErrors = 0;

  constructor(readonly capacity = 10_000) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new Error(`DemandIntake capacity must be a positive integer, got ${capacity}`);
    this.buffer = new Array<DemandRecord | undefined>(capacity);
  }

  get size(): number {
    return this.count;
  }

  record(rec: DemandRecord): void {
    this.received++;
    if (this.count === this.capacity) {
      this.head = (this.head + 1) % this.capacity;
      this.count--;
      this.dropped++;
    }
    this.buffer[(this.head + this.count) % this.capacity] = rec;
    this.count++;
    for (const fn of this.listeners) {
      try {
        fn(rec);
      } catch {
        this.listenerErrors++;
      }
    }
  }

  /** Calls `fn` for every record from now on; returns the unsubscribe function. */
  subscribe(fn: DemandListener): () => void {
    this.listeners.add(fn);
    return () => {
      this.listeners.delete(fn);
    };
  }

  /** Removes and returns up to `max` queued records, oldest first. */
  drain(max = Infinity): DemandRecord[] {
    const n = Math.min(max, this.count);
    const out: DemandRecord[] = [];
    for (let i = 0; i < n; i++) {
      out.push(this.buffer[this.head]!);
      this.buffer[this.head] = undefined;
      this.head = (this.head + 1) % this.capacity;
    }
    this.count -= n;
    return out;
  }
}
