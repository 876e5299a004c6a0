import type { KubeConfig, V1Node } from '@kubernetes/client-node';
import { kubeRequest } from './kube-request.js';

/**
 * Polls `probe` until it returns something other than undefined/false and returns
 * that. On timeout the error names `what` and the last value or error seen, so a
 * failing integration test says what it was waiting for.
 */
export async function eventually<T>(
  what: string,
  probe: () => Promise<T | undefined | false>,
  opts: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<T> {
  const deadline = Date.now() + (opts.timeoutMs ?? 60_000);
  let last: unknown;
  for (;;) {
    try {
      const v = await probe();
      if (v !== undefined && v !== false) return v;
      last = v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) {
      const detail = last instanceof Error ? last.message : JSON.stringify(last);
      throw new Error(`timed out after ${opts.timeoutMs ?? 60_000}ms waiting for ${what} (last: ${detail})`);
    }
    await new Promise((r) => setTimeout(r, opts.intervalMs ?? 200));
  }
}

export function isNodeReady(n: V1Node): boolean {
  return n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
}

/** Nodes matching `labelSelector`, once exactly `count` of them exist and all are Ready. */
export async function waitForReadyNodes(kc: KubeConfig, labelSelector: string, count: number, timeoutMs = 60_000): Promise<V1Node[]> {
  return eventually(`${count} Ready nodes matching ${labelSelector}`, async () => {
    const { items } = await kubeRequest<{ items: V1Node[] }>(kc, 'GET', `/api/v1/nodes?labelSelector=${encodeURIComponent(labelSelector)}`);
    return items.length === count && items.every(isNodeReady) ? items : false;
  }, { timeoutMs });
}
