import { request } from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';

export class KubeRequestError extends Error {
  constructor(
    readonly code: number,
    readonly body: string,
    what: string,
    /** Set for a 429 with a Retry-After header. */
    readonly retryAfterSeconds?: number,
  ) {
    let message = body;
    try {
      message = (JSON.parse(body) as { message?: string }).message ?? body;
    } catch {
      // not a Status: keep the raw body
    }
    super(`${what}: HTTP ${code}: ${message}`);
  }
}

/**
 * A raw JSON request to the apiserver of `kc`'s current cluster. For objects that
 * client-node's typed serializer would mangle: it maps schema keys such as
 * `x-kubernetes-int-or-string` to camelCase model fields and silently drops the
 * originals, so a CRD read from YAML must not go through ApiextensionsV1Api.create.
 *
 * PATCH defaults to a JSON merge patch. A 429 that carries Retry-After (API priority
 * and fairness, or "storage is (re)initializing" on a loaded machine) is retried a
 * few times; one without it (an eviction a PDB refuses) is returned at once.
 */
export async function kubeRequest<T = unknown>(
  kc: KubeConfig,
  method: string,
  path: string,
  body?: unknown,
  contentType = method === 'PATCH' ? 'application/merge-patch+json' : 'application/json',
): Promise<T> {
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error('kubeconfig has no current cluster');
  const url = new URL(path, cluster.server);
  const opts: Parameters<typeof request>[1] = { method, headers: { accept: 'application/json' } };
  await kc.applyToHTTPSOptions(opts);
  // client-node sets a new Agent per call: a new TCP connection and TLS handshake for
  // every request, paid by the apiserver too (the machine fixture lists five kinds every
  // 100 ms). Node's global agent keeps connections alive, pooled by the TLS material
  // (ca, cert, key, servername) that applyToHTTPSOptions left in `opts`.
  delete opts.agent;
  const payload = body === undefined ? undefined : JSON.stringify(body);
  // Content-Length by hand: Node frames no DELETE body by default, and kube-apiserver then
  // reads the DELETE as bodiless (its DeleteOptions, preconditions included, are dropped).
  if (payload !== undefined) opts.headers = { ...opts.headers, 'content-type': contentType, 'content-length': String(Buffer.byteLength(payload)) };
  for (let attempt = 1; ; attempt++) {
    try {
      return await send<T>(url, opts, payload, `${method} ${path}`);
    } catch (err) {
      const retryAfter = err instanceof KubeRequestError ? err.retryAfterSeconds : undefined;
      if (retryAfter === undefined || attempt >= 8) throw err;
      await new Promise((r) => setTimeout(r, Math.min(Math.max(retryAfter, 0.2), 2) * 1000));
    }
  }
}

function send<T>(url: URL, opts: Parameters<typeof request>[1], payload: string | undefined, what: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const req = request(url, opts, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const code = res.statusCode ?? 0;
        if (code >= 200 && code < 300) resolve((text ? JSON.parse(text) : undefined) as T);
        else {
          const retryAfter = code === 429 ? Number(res.headers['retry-after']) : NaN;
          reject(new KubeRequestError(code, text, what, Number.isFinite(retryAfter) ? retryAfter : undefined));
        }
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(payload);
  });
}
