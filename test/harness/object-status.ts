import type { KubeConfig } from '@kubernetes/client-node';
import { KubeRequestError, kubeRequest } from './kube-request.js';

/**
 * Status writes of the test stand-ins (machine-fixture.ts, kwok-provider.ts): only
 * when a field really changed (a write per pass would bump resourceVersions and wake
 * every watcher), with metav1.Conditions that keep their transition time.
 */

interface StatusObject {
  metadata: { generation?: number };
  status?: Record<string, unknown>;
}

/** Merge-patches `status` onto `path`/status when a field differs; a deleted object is no error. */
export async function patchStatusIfChanged(kc: KubeConfig, path: string, o: StatusObject, status: Record<string, unknown>): Promise<void> {
  const current = (o.status ?? {}) as Record<string, unknown>;
  if (!Object.entries(status).some(([k, v]) => canonical(current[k]) !== canonical(v))) return;
  try {
    await kubeRequest(kc, 'PATCH', `${path}/status`, { status });
  } catch (err) {
    if (!(err instanceof KubeRequestError && err.code === 404)) throw err;
  }
}

/** A metav1.Condition, keeping lastTransitionTime while the status holds. */
export function condition(o: StatusObject, type: string, ok: boolean, reason: string, message: string, nowMs: number): object {
  const status = ok ? 'True' : 'False';
  const prev = ((o.status?.conditions ?? []) as Array<{ type: string; status: string; lastTransitionTime?: string }>).find((c) => c.type === type);
  const lastTransitionTime = prev && prev.status === status && prev.lastTransitionTime ? prev.lastTransitionTime : new Date(Math.floor(nowMs / 1000) * 1000).toISOString().replace('.000Z', 'Z');
  return { type, status, reason, message, lastTransitionTime, observedGeneration: o.metadata.generation };
}

/** JSON with object keys sorted: the apiserver returns fields in its own order. */
export function canonical(v: unknown): string {
  return JSON.stringify(v, (_k, val: unknown) =>
    val && typeof val === 'object' && !Array.isArray(val)
      ? Object.fromEntries(Object.entries(val as Record<string, unknown>).filter(([, x]) => x !== undefined).sort(([a], [b]) => a.localeCompare(b)))
      : val);
}
