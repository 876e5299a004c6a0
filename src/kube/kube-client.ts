import http from 'node:http';
import https from 'node:https';
import { setTimeout as sleep } from 'node:timers/promises';
import type { KubeConfig } from '@kubernetes/client-node';

/**
 * A small JSON client for the Kubernetes API on top of a KubeConfig's auth.
 *
 * Why not the generated client-node APIs: the controller needs exact control of
 * status codes (409 conflict, 410 gone), of watch streams (stall detection, abort)
 * and a count of the writes it makes (API writes per scale-up is a reported
 * number). Auth (certs, tokens, exec plugins) still comes from client-node.
 */

export class KubeApiError extends Error {
  constructor(
    readonly status: number,
    readonly reason: string,
    message: string,
    readonly method: string,
    readonly path: string,
    /** A 429's Retry-After, in ms. */
    readonly retryAfterMs?: number,
  ) {
    super(`${method} ${path}: ${status} ${reason}: ${message}`);
  }
}

/** Retry-After in whole seconds (what kube-apiserver sends), as ms; undefined when absent or unreadable. */
function retryAfterMs(header: string | string[] | undefined): number | undefined {
  const v = Array.isArray(header) ? header[0] : header;
  return v !== undefined && /^\d{1,6}$/.test(v.trim()) ? Number(v.trim()) * 1000 : undefined;
}

/**
 * A request refused before it was sent because the leadership term it belongs to
 * has ended (the fence signal aborted): no write of a former leader reaches the API.
 */
export class FencedError extends Error {
  constructor(readonly method: string, readonly path: string) {
    super(`${method} ${path}: not sent: leadership lost`);
  }
}

export function isConflict(err: unknown): boolean {
  return err instanceof KubeApiError && err.status === 409;
}

export function isNotFound(err: unknown): boolean {
  return err instanceof KubeApiError && err.status === 404;
}

export interface RequestOptions {
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  /** Defaults to application/json; use application/merge-patch+json or application/json-patch+json for PATCH. */
  contentType?: string;
  signal?: AbortSignal;
  /** Gives up after this long, retries included (a hung apiserver must not hang a provisioning cycle). Default 30 s. */
  timeoutMs?: number;
  /**
   * How often a 429 (API Priority and Fairness: the request was not executed) is retried,
   * each after its Retry-After (1 s if absent, at most 10 s), as client-go does. Default 3.
   */
  maxRetries?: number;
}

const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

export class KubeClient {
  /** Count of write requests (POST/PUT/PATCH/DELETE) sent, by method. */
  readonly writes: Record<string, number> = {};
  /**
   * 429s retried; the waits their Retry-After asked for (capped, 1 s when absent) and the
   * time actually waited before those retries, both summed in ms; the longest Retry-After
   * seen. A wait cut short by an abort sends no retry and is not counted.
   */
  readonly throttled = { retries: 0, askedMs: 0, waitedMs: 0, maxRetryAfterMs: 0 };
  private readonly agent: http.Agent;
  /** Set on views made by `fenced`: requests are refused once it aborts, and aborted in flight. */
  private readonly fence: AbortSignal | undefined;

  constructor(private readonly kc: KubeConfig, readonly fieldManager = 'headroom') {
    const server = kc.getCurrentCluster()?.server;
    if (!server) throw new Error('kubeconfig has no current cluster');
    this.server = new URL(server);
    this.agent = this.server.protocol === 'https:'
      ? new https.Agent({ keepAlive: true, maxSockets: 32 })
      : new http.Agent({ keepAlive: true, maxSockets: 32 });
  }

  readonly server: URL;

  /**
   * This client bound to a leadership term: every request checks `fence` just before
   * it is sent (FencedError once aborted) and is aborted in flight when it fires.
   * Shares the connection pool and write counts with this client.
   */
  fenced(fence: AbortSignal): KubeClient {
    const view = Object.create(this) as KubeClient;
    Object.defineProperty(view, 'fence', { value: fence });
    return view;
  }

  get totalWrites(): number {
    return Object.values(this.writes).reduce((a, b) => a + b, 0);
  }

  private url(path: string, query?: RequestOptions['query']): URL {
    const base = this.server.pathname.replace(/\/$/, '');
    const url = new URL(base + path, this.server);
    for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
    return url;
  }

  private async requestOptions(method: string, contentType?: string): Promise<https.RequestOptions> {
    const opts: https.RequestOptions = { method, headers: { Accept: 'application/json' } };
    await this.kc.applyToHTTPSOptions(opts);
    // One keep-alive agent per client, with the kubeconfig's TLS material.
    const tls = this.server.protocol === 'https:'
      ? { ca: opts.ca, cert: opts.cert, key: opts.key, ...(opts.rejectUnauthorized !== undefined ? { rejectUnauthorized: opts.rejectUnauthorized } : {}), ...(opts.servername ? { servername: opts.servername } : {}) }
      : {};
    Object.assign(opts, tls);
    opts.agent = this.agent;
    if (contentType) (opts.headers as Record<string, string>)['Content-Type'] = contentType;
    return opts;
  }

  /** Sends a request; resolves with the parsed JSON body of a 2xx, throws KubeApiError otherwise. */
  async request<T = unknown>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    const upper = method.toUpperCase();
    const hasBody = options.body !== undefined;
    const query = { ...options.query };
    if (WRITE_METHODS.has(upper) && upper !== 'DELETE') query.fieldManager ??= this.fieldManager;
    const opts = await this.requestOptions(upper, hasBody ? (options.contentType ?? 'application/json') : undefined);
    const url = this.url(path, query);
    const mod = url.protocol === 'https:' ? https : http;
    const timeout = AbortSignal.timeout(options.timeoutMs ?? 30_000);
    const signals = [timeout, ...(options.signal ? [options.signal] : []), ...(this.fence ? [this.fence] : [])];
    const signal = signals.length === 1 ? timeout : AbortSignal.any(signals);
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.send<T>(mod, url, opts, upper, path, options.body, signal);
      } catch (err) {
        if (!(err instanceof KubeApiError && err.status === 429) || attempt >= (options.maxRetries ?? 3)) throw err;
        const wait = Math.min(err.retryAfterMs ?? 1000, 10_000);
        this.throttled.maxRetryAfterMs = Math.max(this.throttled.maxRetryAfterMs, err.retryAfterMs ?? 0);
        const waitStart = Date.now();
        // An abort (timeout, lost term) ends the wait and the request: no retry goes early.
        await sleep(wait, undefined, { signal });
        this.throttled.retries++;
        this.throttled.askedMs += wait;
        this.throttled.waitedMs += Date.now() - waitStart;
      }
    }
  }

  /** One attempt: checked against the fence just before it is sent. */
  private send<T>(mod: typeof http | typeof https, url: URL, opts: https.RequestOptions, upper: string, path: string, body: unknown, signal: AbortSignal): Promise<T> {
    // The last check before the bytes go out: nothing above may have awaited past a lost lease.
    if (this.fence?.aborted) throw new FencedError(upper, path);
    signal.throwIfAborted();
    if (WRITE_METHODS.has(upper)) this.writes[upper] = (this.writes[upper] ?? 0) + 1;
    // Content-Length always goes with a body: Node chunks only some methods by default, and a
    // DELETE body (DeleteOptions, preconditions) sent without either is read by the server as
    // the start of the next request on the keep-alive connection.
    const payload = body !== undefined ? Buffer.from(JSON.stringify(body), 'utf8') : undefined;
    const headers = { ...(opts.headers as Record<string, string>), ...(payload ? { 'Content-Length': String(payload.length) } : {}) };
    return new Promise<T>((resolve, reject) => {
      const req = mod.request(url, { ...opts, headers, signal }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: unknown;
          try {
            parsed = text ? JSON.parse(text) : undefined;
          } catch {
            parsed = undefined;
          }
          const status = res.statusCode ?? 0;
          if (status >= 200 && status < 300) return resolve(parsed as T);
          const s = (parsed ?? {}) as { reason?: string; message?: string };
          reject(new KubeApiError(status, s.reason ?? res.statusMessage ?? 'Error', s.message ?? text.slice(0, 200), upper, path, retryAfterMs(res.headers['retry-after'])));
        });
      });
      req.on('error', reject);
      req.end(payload);
    });
  }

  get<T = unknown>(path: string, query?: RequestOptions['query']): Promise<T> {
    return this.request<T>('GET', path, { query });
  }

  /**
   * Opens a watch stream and calls `onEvent` for each decoded event. Resolves when
   * the server ends the stream, rejects on a non-200 or connection error. Abort
   * through `signal` (the caller's stall detector does).
   */
  async watch(
    path: string, query: RequestOptions['query'], onEvent: (event: { type: string; object: Record<string, unknown> }) => void,
    signal: AbortSignal, onOpen?: () => void,
  ): Promise<void> {
    const opts = await this.requestOptions('GET');
    const url = this.url(path, { ...query, watch: 'true' });
    const mod = url.protocol === 'https:' ? https : http;
    await new Promise<void>((resolve, reject) => {
      const req = mod.request(url, { ...opts, signal }, (res) => {
        if (res.statusCode !== 200) {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            let s: { reason?: string; message?: string } = {};
            try {
              s = JSON.parse(Buffer.concat(chunks).toString('utf8'));
            } catch { /* not a Status */ }
            reject(new KubeApiError(res.statusCode ?? 0, s.reason ?? 'Error', s.message ?? '', 'WATCH', path, retryAfterMs(res.headers['retry-after'])));
          });
          res.on('error', reject);
          return;
        }
        onOpen?.();
        let buffered = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          buffered += chunk;
          let nl: number;
          while ((nl = buffered.indexOf('\n')) >= 0) {
            const line = buffered.slice(0, nl);
            buffered = buffered.slice(nl + 1);
            if (!line.trim()) continue;
            let event: { type: string; object: Record<string, unknown> };
            try {
              event = JSON.parse(line);
            } catch {
              continue;
            }
            onEvent(event);
          }
        });
        res.on('end', () => resolve());
        res.on('error', reject);
        res.on('aborted', () => reject(new Error('watch aborted')));
      });
      req.on('error', reject);
      req.end();
    });
  }

  /** Closes idle keep-alive sockets (tests, shutdown). */
  close(): void {
    this.agent.destroy();
  }
}
