import { deserialize, serialize } from 'node:v8';
import type { ClusterSnapshot, NodeGroup, SnapshotNode } from '../cluster/snapshot.js';
import type { SchedulingPod } from '../scheduling/scheduling-pod.js';
import { type BoundPod, type SolverNode, type SolverSnapshot, boundPodView } from './solver-snapshot.js';

/**
 * How a snapshot crosses to a solver worker (ADR 0033). Snapshots are immutable and
 * buildSnapshot hands out the same group and pod objects while they are unchanged,
 * so each object is serialized (v8's structured-clone format) once, the first time
 * it is sent, and remembered by identity with a numeric id. A transfer copies those
 * bytes into a few transferred buffers: the main thread's cost for an unchanged
 * object is a lookup and a memcpy instead of a fresh clone. The worker keeps the
 * objects it has decoded by id and skips the bytes of any id it already holds.
 * A pod on a node is sent as its BoundPod view, what the solvers read of it (ADR
 * 0131): a worker receives a SolverSnapshot. An object is encoded as JSON text where
 * JSON gives it back exactly, else in v8's format (`encodeValue`, ADR 0132).
 */

/** Which list of the snapshot a part's entries extend. */
export type SnapshotSection = 'groups' | 'nodes' | 'pendingPods';

/** One message of a snapshot in transfer. */
export interface SnapshotPart {
  /** First part only: the serialized rest of the snapshot (volumes, namespace labels, limits). */
  head?: Uint8Array;
  section?: SnapshotSection;
  /** Object ids, one per entry. Nodes section: each node's shell, then its pods. */
  ids?: Float64Array;
  /** End offset in `bytes` of each entry's serialized object. */
  ends?: Uint32Array;
  bytes?: Uint8Array;
  /** Nodes section: how many pod entries (BoundPod views) follow each node shell. */
  podCounts?: Uint32Array;
  last?: boolean;
}

export interface SnapshotPartLimits {
  /** Entries per part. */
  entries: number;
  /** Objects serialized for the first time per part: a new object costs 10-20 µs to encode. */
  fresh: number;
}

export const DEFAULT_PART_LIMITS: SnapshotPartLimits = { entries: 1000, fresh: 100 };

interface EncodedObject {
  id: number;
  bytes: Uint8Array;
}

type SnapshotHead = Omit<ClusterSnapshot, 'groups' | 'nodes' | 'pendingPods'>;
type NodeShell = Omit<SolverNode, 'pods'>;

/**
 * A snapshot's objects by identity -> id and serialized form. Weak, so dropping a
 * snapshot drops its encodings. Ids only grow (2^53 is out of reach), so an id names
 * one immutable object for the life of the process.
 */
export class SnapshotEncoder {
  private readonly objects = new WeakMap<object, EncodedObject>();
  private readonly shells = new WeakMap<SnapshotNode, EncodedObject>();
  /** Bound pods' views, apart from `objects`: the same pod may also be sent whole as pending (a what-if moves it). */
  private readonly bound = new WeakMap<SchedulingPod, EncodedObject>();
  private nextId = 1;

  /** Parts to post in order; each part's buffers may be transferred. */
  *parts(s: ClusterSnapshot, limits: SnapshotPartLimits = DEFAULT_PART_LIMITS): Generator<SnapshotPart> {
    const { groups, nodes, pendingPods, ...head } = s;
    yield { head: serialize(head satisfies SnapshotHead) };
    yield* this.section('groups', groups, limits);
    yield* this.section('nodes', nodes, limits);
    yield* this.section('pendingPods', pendingPods, limits);
    yield { last: true };
  }

  private *section(section: SnapshotSection, items: readonly (NodeGroup | SnapshotNode | SchedulingPod)[], limits: SnapshotPartLimits): Generator<SnapshotPart> {
    let batch: EncodedObject[] = [];
    let podCounts: number[] = [];
    let firstId = this.nextId;
    for (const item of items) {
      if (section === 'nodes') {
        const node = item as SnapshotNode;
        batch.push(this.encoded(this.shells, node, shellOf));
        for (const p of node.pods) batch.push(this.encoded(this.bound, p, boundPodView));
        podCounts.push(node.pods.length);
      } else {
        batch.push(this.encoded(this.objects, item));
      }
      // A node stays whole in one part, with all its pods. Ids handed out since the
      // part began count the objects serialized for the first time.
      if (batch.length >= limits.entries || this.nextId - firstId >= limits.fresh) {
        yield pack(section, batch, podCounts);
        batch = []; podCounts = []; firstId = this.nextId;
      }
    }
    if (batch.length) yield pack(section, batch, podCounts);
  }

  /** `key`'s remembered encoding, else `view(key)` encoded now under a new id. */
  private encoded<K extends object>(memo: WeakMap<K, EncodedObject>, key: K, view: (k: K) => unknown = (k) => k): EncodedObject {
    const hit = memo.get(key);
    if (hit) return hit;
    const e = { id: this.nextId++, bytes: encodeValue(view(key)) };
    memo.set(key, e);
    return e;
  }
}

const utf8 = new TextEncoder();
const fromUtf8 = new TextDecoder();
/** v8's format opens with its version tag, a byte no UTF-8 text holds: it tells the two encodings apart. */
const V8_VERSION_TAG = 0xff;
/** Deeper values go by v8's format (the check recurses). */
const JSON_MAX_DEPTH = 32;

/**
 * One object's bytes (ADR 0132): JSON text when `JSON.parse` gives back a value deeply
 * equal to it, else v8's structured-clone format (`Infinity`, `undefined`, `-0`...).
 * Each v8 `serialize` call holds ~5 KB of native memory that V8 does not count and
 * frees only when a collection finds its serializer: encoding 50,000 pods one by one
 * left 250 MB of the main thread's malloc heap resident; as JSON text, 24 MB (11 MB
 * of it the live encodings), in 2.5 times less time.
 */
export function encodeValue(value: unknown): Uint8Array {
  return jsonExact(value, 0) ? utf8.encode(JSON.stringify(value)) : serialize(value);
}

/** The value `encodeValue` encoded. */
export function decodeValue(bytes: Uint8Array): unknown {
  return bytes[0] === V8_VERSION_TAG ? deserialize(bytes) : JSON.parse(fromUtf8.decode(bytes));
}

/**
 * Whether JSON round-trips `v` exactly: strings, booleans, null, finite numbers other
 * than -0, and dense arrays and plain objects of them, with no undefined value.
 */
function jsonExact(v: unknown, depth: number): boolean {
  switch (typeof v) {
    case 'string':
    case 'boolean':
      return true;
    case 'number':
      return Number.isFinite(v) && !Object.is(v, -0);
    case 'object': {
      if (v === null) return true;
      if (depth >= JSON_MAX_DEPTH) return false;
      if (Array.isArray(v)) {
        // A hole reads as undefined, so a sparse array goes by v8's format too.
        for (let i = 0; i < v.length; i++) if (!jsonExact(v[i], depth + 1)) return false;
        return true;
      }
      const proto = Object.getPrototypeOf(v) as unknown;
      if (proto !== Object.prototype && proto !== null) return false;
      for (const k in v) if (!jsonExact((v as Record<string, unknown>)[k], depth + 1)) return false;
      // Symbol keys and non-enumerable properties: JSON and v8's format both leave them out.
      return true;
    }
    default:
      return false;
  }
}

function shellOf(node: SnapshotNode): Omit<SnapshotNode, 'pods'> {
  const { pods: _pods, ...shell } = node;
  return shell;
}

function pack(section: SnapshotSection, batch: EncodedObject[], podCounts: number[]): SnapshotPart {
  let size = 0;
  for (const e of batch) size += e.bytes.length;
  // Its own ArrayBuffer (not Buffer's shared pool), so it can be transferred.
  const bytes = new Uint8Array(size);
  const ids = new Float64Array(batch.length);
  const ends = new Uint32Array(batch.length);
  let at = 0;
  batch.forEach((e, i) => {
    bytes.set(e.bytes, at);
    at += e.bytes.length;
    ids[i] = e.id;
    ends[i] = at;
  });
  const part: SnapshotPart = { section, ids, ends, bytes };
  if (section === 'nodes') part.podCounts = Uint32Array.from(podCounts);
  return part;
}

/** The buffers of a part, to pass as postMessage's transfer list. */
export function partTransferList(p: SnapshotPart): ArrayBuffer[] {
  const out: ArrayBuffer[] = [];
  for (const a of [p.head, p.ids, p.ends, p.bytes, p.podCounts]) if (a) out.push(a.buffer as ArrayBuffer);
  return out;
}

/**
 * The worker's side: objects decoded so far, by id. An object not used by any of the
 * last `keepSolves` snapshots is dropped, so the cache holds about one snapshot.
 */
export class DecodedObjects {
  private readonly byId = new Map<number, { value: unknown; used: number }>();
  private generation = 0;

  constructor(private readonly keepSolves = 3) {}

  /** Starts a snapshot: what it uses is marked with a new generation. */
  assembler(): SnapshotAssembler {
    return new SnapshotAssembler(this, ++this.generation);
  }

  get size(): number {
    return this.byId.size;
  }

  /** @internal the assembler's lookup. */
  take(id: number, generation: number, bytes: Uint8Array, start: number, end: number): unknown {
    let e = this.byId.get(id);
    if (!e) {
      e = { value: decodeValue(bytes.subarray(start, end)), used: generation };
      this.byId.set(id, e);
    } else if (e.used < generation) {
      e.used = generation;
    }
    return e.value;
  }

  /** @internal drops what the recent snapshots did not use. */
  sweep(generation: number): void {
    const oldest = generation - this.keepSolves + 1;
    for (const [id, e] of this.byId) if (e.used < oldest) this.byId.delete(id);
  }
}

/** Puts one snapshot back together from its parts, in order. */
export class SnapshotAssembler {
  private head: SnapshotHead | undefined;
  private readonly groups: NodeGroup[] = [];
  private readonly nodes: SolverNode[] = [];
  private readonly pendingPods: SchedulingPod[] = [];

  constructor(private readonly cache: DecodedObjects, private readonly generation: number) {}

  /** Adds a part; returns the snapshot after the last one. */
  add(part: SnapshotPart): SolverSnapshot | undefined {
    if (part.head) this.head = deserialize(part.head) as SnapshotHead;
    if (part.section && part.ids && part.ends && part.bytes) this.entries(part.section, part.ids, part.ends, part.bytes, part.podCounts);
    if (!part.last) return undefined;
    if (!this.head) throw new Error('snapshot transfer: no head part before the last part');
    this.cache.sweep(this.generation);
    return { ...this.head, groups: this.groups, nodes: this.nodes, pendingPods: this.pendingPods };
  }

  private entries(section: SnapshotSection, ids: Float64Array, ends: Uint32Array, bytes: Uint8Array, podCounts: Uint32Array | undefined): void {
    let i = 0;
    const next = () => {
      const v = this.cache.take(ids[i]!, this.generation, bytes, i === 0 ? 0 : ends[i - 1]!, ends[i]!);
      i++;
      return v;
    };
    if (section === 'nodes') {
      for (const count of podCounts ?? []) {
        const shell = next() as NodeShell;
        const pods: BoundPod[] = [];
        for (let k = 0; k < count; k++) pods.push(next() as BoundPod);
        this.nodes.push({ ...shell, pods });
      }
      return;
    }
    const list: unknown[] = section === 'groups' ? this.groups : this.pendingPods;
    while (i < ids.length) list.push(next());
  }
}
