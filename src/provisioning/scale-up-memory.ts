import { parseNodeGroupObject } from '../api/capi.js';
import type { UnstructuredObject } from '../api/unstructured-object.js';
import type { BackoffState } from './provision-failures.js';
import type { ScaleUpRecord } from './scale-up-effect.js';

/**
 * What a group's back-off and its scale-ups awaiting judgement (ADR 0102) must carry
 * over a restart or a change of leader (ADR 0120): kept in one annotation on the node
 * group object itself, next to the replicas it explains, so a new leader reads it
 * from its informer cache with the rest of the cluster and a deleted group takes it
 * along. Without it a new leader would add one more useless node before judging
 * again, and a group backing off after failed provisions would be scaled again at once.
 * Pure: encoding, parsing at the boundary, and restoring from the cache's objects.
 */
export const SCALE_UP_MEMORY_ANNOTATION = 'headroom.dev/scale-up-memory';

export interface GroupMemory {
  backoff?: BackoffState;
  scaleUps: ScaleUpRecord[];
}

/** Keys of the triggering pods kept per record: enough to judge, bounded on the object. */
export const MAX_PERSISTED_PODS = 50;
/** At most this many characters on a group (annotations share 256 KiB): the oldest records go first. */
export const MAX_ENCODED_CHARS = 32_000;

interface EncodedRecord {
  at: number;
  pods: string[];
  nodesBefore: string[];
  didNotHelpAt?: number;
  unusable?: { nodes: string[]; since: number; reason: string };
}

/** The annotation's value for `memory`, or null when there is nothing to keep (the annotation goes). */
export function encodeGroupMemory(memory: GroupMemory): string | null {
  const records: EncodedRecord[] = memory.scaleUps.map((r) => ({
    at: r.writtenAt,
    pods: r.pods.slice(0, MAX_PERSISTED_PODS),
    nodesBefore: [...r.nodesBefore].sort(),
    ...(r.didNotHelpAt !== undefined ? { didNotHelpAt: r.didNotHelpAt } : {}),
    ...(r.unusable ? { unusable: r.unusable } : {}),
  }));
  if (!memory.backoff && records.length === 0) return null;
  const encode = () => JSON.stringify({ v: 1, ...(memory.backoff ? { backoff: memory.backoff } : {}), scaleUps: records });
  let out = encode();
  while (out.length > MAX_ENCODED_CHARS && records.length > 0) {
    records.shift();
    out = encode();
  }
  return out;
}

const isRecord = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);
const isTime = (x: unknown): x is number => typeof x === 'number' && Number.isFinite(x) && x >= 0;
const isStrings = (x: unknown): x is string[] => Array.isArray(x) && x.every((s) => typeof s === 'string');

/** Parses the annotation of group `groupId`; throws an Error saying what is wrong. */
export function parseGroupMemory(raw: string, groupId: string): GroupMemory {
  let doc: unknown;
  try {
    doc = JSON.parse(raw);
  } catch {
    throw new Error(`${SCALE_UP_MEMORY_ANNOTATION} on ${groupId} is not JSON`);
  }
  const bad = (what: string) => new Error(`${SCALE_UP_MEMORY_ANNOTATION} on ${groupId}: ${what}`);
  if (!isRecord(doc) || doc.v !== 1) throw bad('not version 1');
  const out: GroupMemory = { scaleUps: [] };
  if (doc.backoff !== undefined) {
    const b = doc.backoff;
    if (!isRecord(b) || !Number.isInteger(b.failures) || (b.failures as number) < 1 || !isTime(b.until) || typeof b.cause !== 'string') throw bad('backoff needs failures >= 1, until and cause');
    out.backoff = { failures: b.failures as number, until: b.until, cause: b.cause };
  }
  if (!Array.isArray(doc.scaleUps)) throw bad('scaleUps must be a list');
  for (const [i, r] of doc.scaleUps.entries()) {
    if (!isRecord(r) || !isTime(r.at) || !isStrings(r.pods) || !isStrings(r.nodesBefore)) throw bad(`scaleUps[${i}] needs at, pods and nodesBefore`);
    if (r.didNotHelpAt !== undefined && !isTime(r.didNotHelpAt)) throw bad(`scaleUps[${i}].didNotHelpAt must be a time`);
    const u = r.unusable;
    if (u !== undefined && !(isRecord(u) && isStrings(u.nodes) && isTime(u.since) && typeof u.reason === 'string')) throw bad(`scaleUps[${i}].unusable needs nodes, since and reason`);
    out.scaleUps.push({
      groupId, writtenAt: r.at, pods: r.pods, nodesBefore: new Set(r.nodesBefore),
      ...(r.didNotHelpAt !== undefined ? { didNotHelpAt: r.didNotHelpAt } : {}),
      ...(u ? { unusable: { nodes: u.nodes as string[], since: u.since as number, reason: u.reason as string } } : {}),
    });
  }
  return out;
}

export interface RestoredMemory {
  /** By group id. */
  groups: Map<string, GroupMemory>;
  /** The annotation's value as found, by group id (what is on the object now). */
  raw: Map<string, string>;
  /** Annotations that could not be read (ignored: memory only ever delays a scale-up). */
  errors: string[];
}

/** Every node group's memory, read from its annotation. */
export function restoreGroupMemories(nodeGroups: readonly UnstructuredObject[]): RestoredMemory {
  const out: RestoredMemory = { groups: new Map(), raw: new Map(), errors: [] };
  for (const obj of nodeGroups) {
    const raw = obj.metadata?.annotations?.[SCALE_UP_MEMORY_ANNOTATION];
    if (raw === undefined) continue;
    let id: string;
    try {
      id = parseNodeGroupObject(obj).id;
    } catch {
      continue; // reported by buildSnapshot
    }
    out.raw.set(id, raw);
    try {
      out.groups.set(id, parseGroupMemory(raw, id));
    } catch (err) {
      out.errors.push((err as Error).message);
    }
  }
  return out;
}
