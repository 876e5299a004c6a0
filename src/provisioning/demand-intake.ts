import type { SchedulingPod } from '../scheduling/scheduling-pod.js';

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
 *
 * Records are compact: `pod` is the SchedulingPod view (requests already summed, the
 * equivalence key, owner, and the scheduling constraints: labels, nodeSelector,
 * affinity, tolerations, spread, host ports, claims, priority), never the pod object
 * with its spec, status or managedFields. The intake bounds them in bytes as well as in
 * number (see DemandIntake).
 */
export interface DemandRecord {
  source: DemandSource;
  /** Milliseconds since the epoch, from the caller's clock. */
  observedAt: number;
  readonly pod: SchedulingPod;
  /** metadata.generateName when the pod has no name yet. */
  generateName?: string;
  /** The admission request uid (webhook) for tracing. */
  requestUid?: string;
}

export type DemandListener = (record: DemandRecord) => void;

export interface DemandIntakeLimits {
  /** Most records queued (default 10,000). */
  records?: number;
  /** Most bytes queued, counted as recordBytes() (default 8 MiB). */
  bytes?: number;
  /** A record larger than this is not queued but counted in `oversized` (default 64 KiB). */
  recordBytes?: number;
}

/** Fixed cost counted per record on top of its pod's JSON size (the record object, the source, the times). */
const RECORD_OVERHEAD_BYTES = 128;

/**
 * The size a record is counted at: its pod view's JSON length plus a fixed overhead. An
 * approximation of what the record holds, linear in everything the caller controls.
 */
export function recordBytes(rec: DemandRecord): number {
  return RECORD_OVERHEAD_BYTES + JSON.stringify(rec.pod).length + (rec.generateName?.length ?? 0) + (rec.requestUid?.length ?? 0);
}

/**
 * A bounded in-memory queue plus a synchronous emitter, between the hot-path producers
 * (webhook, extender) and the consumers (the batcher and the predictor drain it or
 * subscribe). Bounded by count and by bytes: when either bound would be passed the
 * oldest records are dropped and counted; a record bigger than `recordBytes` on its own
 * is refused and counted (the informers still see that pod). `record` costs the JSON
 * size of the record once and never throws; a throwing listener is isolated from the
 * producer and from the other listeners. Listeners run on the request path, so they
 * must only enqueue.
 */
export class DemandIntake {
  private readonly buffer: (DemandRecord | undefined)[];
  private readonly sizes: Float64Array;
  private head = 0;
  private count = 0;
  private queuedBytes = 0;
  private readonly listeners = new Set<DemandListener>();
  readonly capacityBytes: number;
  readonly maxRecordBytes: number;
  /** Records pushed out of the queue unread because it was full (by count or bytes). */
  dropped = 0;
  /** Records refused because each alone was bigger than maxRecordBytes. */
  oversized = 0;
  /** Records ever accepted. */
  received = 0;
  /** Listener exceptions swallowed. */
  listenerErrors = 0;

  constructor(readonly capacity = 10_000, limits: Omit<DemandIntakeLimits, 'records'> = {}) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new Error(`DemandIntake capacity must be a positive integer, got ${capacity}`);
    this.capacityBytes = limits.bytes ?? 8 * 1024 * 1024;
    this.maxRecordBytes = Math.min(limits.recordBytes ?? 64 * 1024, this.capacityBytes);
    if (!(this.maxRecordBytes > 0)) throw new Error('DemandIntake byte limits must be positive');
    this.buffer = new Array<DemandRecord | undefined>(capacity);
    this.sizes = new Float64Array(capacity);
  }

  get size(): number {
    return this.count;
  }

  /** Bytes queued, as counted by recordBytes(). */
  get bytes(): number {
    return this.queuedBytes;
  }

  record(rec: DemandRecord): void {
    let size: number;
    try {
      size = recordBytes(rec);
    } catch {
      size = Infinity;
    }
    if (!(size <= this.maxRecordBytes)) {
      this.oversized++;
      return;
    }
    this.received++;
    while (this.count === this.capacity || (this.count > 0 && this.queuedBytes + size > this.capacityBytes)) {
      this.removeOldest();
      this.dropped++;
    }
    const at = (this.head + this.count) % this.capacity;
    this.buffer[at] = rec;
    this.sizes[at] = size;
    this.queuedBytes += size;
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
    for (let i = 0; i < n; i++) out.push(this.removeOldest());
    return out;
  }

  private removeOldest(): DemandRecord {
    const rec = this.buffer[this.head]!;
    this.buffer[this.head] = undefined;
    this.queuedBytes -= this.sizes[this.head]!;
    this.head = (this.head + 1) % this.capacity;
    this.count--;
    return rec;
  }
}
