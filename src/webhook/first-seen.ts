import type { V1Pod } from '@kubernetes/client-node';
import fastJsonPatch, { type Operation } from 'fast-json-patch';

/**
 * When the webhook first saw the pod (RFC 3339, millisecond precision). Stored on the
 * pod itself so pod startup latency (first-seen -> Ready) survives Headroom restarts.
 */
export const FIRST_SEEN_ANNOTATION = 'headroom.dev/first-seen';

/** The recorded first-seen time, or undefined when absent or unparsable. */
export function firstSeenOf(pod: V1Pod): Date | undefined {
  const v = pod.metadata?.annotations?.[FIRST_SEEN_ANNOTATION];
  if (!v) return undefined;
  const d = new Date(v);
  return Number.isNaN(d.getTime()) ? undefined : d;
}

/**
 * The RFC 6902 patch that stamps the first-seen annotation, or [] when the pod already
 * carries one (so a reinvoked or re-reviewed pod needs no further patch). Only the
 * metadata.annotations subtree is compared: the paths are the same as for the whole
 * pod, and the cost does not grow with the pod spec.
 */
export function firstSeenPatch(pod: unknown, now: Date): Operation[] {
  const metadata = isObject(pod) && isObject(pod.metadata) ? pod.metadata : undefined;
  const annotations = metadata && isObject(metadata.annotations) ? (metadata.annotations as Record<string, unknown>) : undefined;
  if (annotations && typeof annotations[FIRST_SEEN_ANNOTATION] === 'string') return [];
  const before: Record<string, unknown> = metadata ? { metadata: annotations ? { annotations } : {} } : {};
  const after = { metadata: { annotations: { ...annotations, [FIRST_SEEN_ANNOTATION]: now.toISOString() } } };
  return fastJsonPatch.compare(before, after);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
