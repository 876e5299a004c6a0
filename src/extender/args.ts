import type { V1Node, V1NodeList, V1Pod } from '@kubernetes/client-node';
import { HttpError } from '../server/http-error.js';
import type { Candidates } from './types.js';

export interface ParsedArgs {
  pod: V1Pod;
  candidates: Candidates;
}

/**
 * Validates ExtenderArgs. Keys are the Go field names (the struct has no json tags);
 * `Pod`, `pod` and, for NodeNames, `nodeNames` and `nodenames` are accepted (see field()).
 */
export function parseExtenderArgs(body: unknown): ParsedArgs {
  if (!isObject(body)) throw new HttpError(400, 'ExtenderArgs must be a JSON object');
  const pod = field(body, 'Pod');
  if (!isObject(pod)) throw new HttpError(400, 'ExtenderArgs.Pod is required');
  validatePodShape(pod);
  const names = field(body, 'NodeNames');
  if (names !== undefined && names !== null) {
    if (!Array.isArray(names)) throw new HttpError(400, 'ExtenderArgs.NodeNames must be an array of strings');
    checkCandidateCount(names.length);
    if (!names.every((n) => typeof n === 'string')) throw new HttpError(400, 'ExtenderArgs.NodeNames must be an array of strings');
    return { pod: pod as V1Pod, candidates: { mode: 'names', names } };
  }
  const list = field(body, 'Nodes');
  if (list !== undefined && list !== null) {
    if (!isObject(list)) throw new HttpError(400, 'ExtenderArgs.Nodes must be a NodeList');
    const items = list.items ?? [];
    if (Array.isArray(items)) checkCandidateCount(items.length);
    if (!Array.isArray(items) || !items.every((n) => isObject(n) && isObject(n.metadata) && typeof n.metadata.name === 'string')) {
      throw new HttpError(400, 'ExtenderArgs.Nodes.items must be Nodes with metadata.name');
    }
    return { pod: pod as V1Pod, candidates: { mode: 'nodes', list: list as unknown as V1NodeList, nodes: items as V1Node[] } };
  }
  throw new HttpError(400, 'ExtenderArgs needs NodeNames (nodeCacheCapable: true) or Nodes (nodeCacheCapable: false)');
}

/**
 * Most candidate nodes accepted in one call: twice the 5,000 nodes Kubernetes supports
 * per cluster. Bounds the reply (one entry per candidate) whatever the names' length.
 */
export const MAX_CANDIDATES = 10_000;

function checkCandidateCount(n: number): void {
  if (n > MAX_CANDIDATES) throw new HttpError(400, `ExtenderArgs has ${n} candidate nodes; at most ${MAX_CANDIDATES} are accepted`);
}

/** The parts of the pod the handlers iterate over must have the right shape (else 400, not a crash). */
function validatePodShape(pod: Record<string, unknown>): void {
  const meta = pod.metadata;
  if (meta !== undefined && meta !== null && !isObject(meta)) throw new HttpError(400, 'ExtenderArgs.Pod.metadata must be an object');
  const refs = isObject(meta) ? meta.ownerReferences : undefined;
  if (refs !== undefined && refs !== null && (!Array.isArray(refs) || !refs.every(isObject))) {
    throw new HttpError(400, 'ExtenderArgs.Pod.metadata.ownerReferences must be an array');
  }
  const spec = pod.spec;
  if (spec === undefined || spec === null) return;
  if (!isObject(spec)) throw new HttpError(400, 'ExtenderArgs.Pod.spec must be an object');
  for (const key of ['containers', 'initContainers'] as const) {
    const list = spec[key];
    if (list !== undefined && list !== null && (!Array.isArray(list) || !list.every(isObject))) {
      throw new HttpError(400, `ExtenderArgs.Pod.spec.${key} must be an array of containers`);
    }
  }
}

/**
 * The value under a Go field name: the exact name (what kube-scheduler sends), then the
 * all-lowercase and lowerCamel spellings. A fixed number of own-property lookups, never
 * a scan of the caller's keys (a body with 100k keys costs the same as one with 3).
 */
function field(obj: Record<string, unknown>, goName: string): unknown {
  for (const name of spellings(goName)) if (Object.hasOwn(obj, name)) return obj[name];
  return undefined;
}

function spellings(goName: string): string[] {
  return [...new Set([goName, goName.toLowerCase(), goName[0]!.toLowerCase() + goName.slice(1)])];
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
