import { createHash } from 'node:crypto';
import { gunzipSync, gzipSync } from 'node:zlib';
import { isNotFound, type KubeClient } from '../kube/kube-client.js';

/**
 * Keeps a serialised state (the prediction model's JSON text) in ConfigMaps of the
 * release namespace, so a restarted or new leader resumes with what was learned
 * (ADR 0092). The state is bounded before compression (default 5 MB of JSON); the
 * gzip output is split into parts below the 1 MiB ConfigMap limit. Parts are
 * written into one of two slots, then the head ConfigMap is switched to that slot:
 * a crash mid-save leaves the head on the previous, complete slot. Loading checks
 * the head's sha256 over the parts, so a torn or foreign write is never trusted.
 */

/** Largest gzip part per ConfigMap: 1 MiB minus room for base64 (binaryData is base64 on the wire) and metadata. */
export const PART_BYTES = 700 * 1024;
/** Default bound on the serialised state (JSON bytes, before compression). */
export const MAX_STATE_BYTES = 5 * 1024 * 1024;
/** Slots x parts: the ConfigMap names the Role must grant (see charts/headroom/templates/role.yaml). */
export const MAX_PARTS = 8;
const SLOTS = ['a', 'b'] as const;

export class StateTooLargeError extends Error {}

export interface EncodedState {
  parts: Buffer[];
  sha256: string;
  jsonBytes: number;
}

/** Text -> gzip -> parts. Throws StateTooLargeError beyond `maxBytes` of text or MAX_PARTS parts. */
export function encodeState(text: string, maxBytes = MAX_STATE_BYTES, partBytes = PART_BYTES): EncodedState {
  const json = Buffer.from(text, 'utf8');
  if (json.length > maxBytes) throw new StateTooLargeError(`model state is ${json.length} bytes, above the ${maxBytes}-byte bound`);
  const gz = gzipSync(json);
  const parts: Buffer[] = [];
  for (let off = 0; off < gz.length; off += partBytes) parts.push(gz.subarray(off, off + partBytes));
  if (parts.length === 0) parts.push(Buffer.alloc(0));
  if (parts.length > MAX_PARTS) throw new StateTooLargeError(`model state needs ${parts.length} ConfigMaps, above ${MAX_PARTS}`);
  return { parts, sha256: createHash('sha256').update(gz).digest('hex'), jsonBytes: json.length };
}

/** Parts -> text, or undefined when the checksum does not match (a torn save) or the bytes do not inflate within the bound. */
export function decodeState(parts: readonly Buffer[], sha256: string, maxBytes = MAX_STATE_BYTES): string | undefined {
  const gz = Buffer.concat(parts);
  if (createHash('sha256').update(gz).digest('hex') !== sha256) return undefined;
  try {
    return gunzipSync(gz, { maxOutputLength: maxBytes }).toString('utf8');
  } catch {
    return undefined;
  }
}

/** The ConfigMap names a store with this base name may use: the head, then every slot's parts. */
export function stateConfigMapNames(base: string): string[] {
  return [base, ...SLOTS.flatMap((s) => Array.from({ length: MAX_PARTS }, (_, i) => partName(base, s, i)))];
}

function partName(base: string, slot: string, i: number): string {
  return `${base}-${slot}-${i}`;
}

interface ConfigMap {
  metadata?: { name?: string; resourceVersion?: string; annotations?: Record<string, string> };
  binaryData?: Record<string, string>;
}

const HEAD_SLOT = 'headroom.dev/state-slot';
const HEAD_PARTS = 'headroom.dev/state-parts';
const HEAD_SHA = 'headroom.dev/state-sha256';
const HEAD_SAVED = 'headroom.dev/state-saved-at';
const DATA_KEY = 'state.gz';

export interface SaveResult {
  parts: number;
  jsonBytes: number;
  gzipBytes: number;
}

export class ConfigMapStateStore {
  constructor(
    private readonly client: KubeClient,
    private readonly namespace: string,
    private readonly name: string,
    private readonly labels: Record<string, string> = { 'app.kubernetes.io/managed-by': 'headroom' },
  ) {}

  private path(name?: string): string {
    return `/api/v1/namespaces/${encodeURIComponent(this.namespace)}/configmaps${name ? `/${encodeURIComponent(name)}` : ''}`;
  }

  private async get(name: string): Promise<ConfigMap | undefined> {
    try {
      return await this.client.request<ConfigMap>('GET', this.path(name));
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  /** Create or replace (get, then update with its resourceVersion; create when absent). */
  private async put(name: string, annotations: Record<string, string>, data: Buffer | undefined, signal?: AbortSignal): Promise<void> {
    const existing = await this.get(name);
    const body = {
      apiVersion: 'v1', kind: 'ConfigMap',
      metadata: {
        name, namespace: this.namespace, labels: this.labels, annotations,
        ...(existing?.metadata?.resourceVersion ? { resourceVersion: existing.metadata.resourceVersion } : {}),
      },
      ...(data ? { binaryData: { [DATA_KEY]: data.toString('base64') } } : {}),
    };
    if (existing) await this.client.request('PUT', this.path(name), { body, ...(signal ? { signal } : {}) });
    else await this.client.request('POST', this.path(), { body, ...(signal ? { signal } : {}) });
  }

  /** The saved state, or undefined when none was saved or it cannot be read back whole. */
  async load(): Promise<{ text: string; savedAt?: string } | undefined> {
    const head = await this.get(this.name);
    const ann = head?.metadata?.annotations ?? {};
    const slot = ann[HEAD_SLOT];
    const count = Number(ann[HEAD_PARTS]);
    const sha = ann[HEAD_SHA];
    if (!slot || !SLOTS.includes(slot as 'a') || !Number.isInteger(count) || count < 1 || count > MAX_PARTS || !sha) return undefined;
    const parts: Buffer[] = [];
    for (let i = 0; i < count; i++) {
      const cm = await this.get(partName(this.name, slot, i));
      const b64 = cm?.binaryData?.[DATA_KEY];
      if (b64 === undefined) return undefined;
      parts.push(Buffer.from(b64, 'base64'));
    }
    const text = decodeState(parts, sha);
    if (text === undefined) return undefined;
    return { text, ...(ann[HEAD_SAVED] ? { savedAt: ann[HEAD_SAVED] } : {}) };
  }

  /**
   * Writes the state into the slot the head does not point at, then points the head
   * at it. `signal` (the leadership signal) aborts the writes of a replica that lost
   * the lease, so a deposed leader cannot overwrite the new one's state.
   */
  async save(text: string, now: Date, signal?: AbortSignal): Promise<SaveResult> {
    const enc = encodeState(text);
    const head = await this.get(this.name);
    const slot = head?.metadata?.annotations?.[HEAD_SLOT] === 'a' ? 'b' : 'a';
    for (let i = 0; i < enc.parts.length; i++) {
      if (signal?.aborted) throw new Error('leadership lost: model state not saved');
      await this.put(partName(this.name, slot, i), {}, enc.parts[i], signal);
    }
    if (signal?.aborted) throw new Error('leadership lost: model state not saved');
    await this.put(this.name, {
      [HEAD_SLOT]: slot, [HEAD_PARTS]: String(enc.parts.length), [HEAD_SHA]: enc.sha256, [HEAD_SAVED]: now.toISOString(),
    }, undefined, signal);
    return { parts: enc.parts.length, jsonBytes: enc.jsonBytes, gzipBytes: enc.parts.reduce((n, p) => n + p.length, 0) };
  }
}
