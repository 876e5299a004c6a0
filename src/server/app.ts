import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import express, { type ErrorRequestHandler, type Express, type RequestHandler } from 'express';
import { HttpError } from './http-error.js';
import { readJsonBody } from './json-body.js';
import { mountProfiling, PROFILING_PATHS } from './profiling.js';
import { httpRequestDuration, httpRequests, registry } from './metrics.js';

/**
 * A POST endpoint that takes a parsed JSON body and returns the JSON reply. Handlers are
 * synchronous and read only in-memory state: nothing on this path waits on the network.
 * Throw HttpError(400, ...) for input that is well-formed JSON but not the expected shape.
 */
export interface JsonRoute {
  path: string;
  /** Largest body this endpoint accepts (413 past it); sized for what its caller can send. */
  maxBodyBytes: number;
  handle(body: unknown): unknown;
}

export interface AppOptions {
  /** True once the caches the handlers read from have synced; gates /readyz. */
  ready(): boolean;
  /** False when the process is stuck and should be restarted; gates /healthz. Default: always live. */
  live?(): boolean;
  routes: JsonRoute[];
  /** Where unexpected errors are reported; defaults to console.error. */
  logError?: (message: string) => void;
  /** Serve /debug/profile/cpu and /debug/profile/heap (the metrics port only; off by default). */
  profiling?: boolean;
  /** The /metrics body, when more than the process registry (fleet mode adds every cluster's). */
  metrics?: () => Promise<string>;
}

const OTHER_ENDPOINT = 'other';

/**
 * The request listener to serve: POSTs to the JSON routes (the webhook and the
 * extender, called for every pod) take a direct path that reads, parses and answers
 * without express's middleware stack, which costs more than the handlers themselves;
 * everything else (health, metrics, 404, 405) goes to the express app. Every reply,
 * serialization included, is built inside the error boundary (`reply`): bad input is a
 * one-line 400/413, anything else a logged 500, never an exception on the event loop.
 */
export function createHandler(opts: AppOptions): RequestListener {
  const app = createApp(opts);
  const logError = opts.logError ?? ((m: string) => console.error(m));
  const routes = new Map(opts.routes.map((r) => [r.path, r]));
  const metrics = boundMetrics();
  return (req, res) => {
    try {
      serve(req, res);
    } catch (err) {
      reply(res, () => { throw err; }, logError, 'request');
    }
  };

  function serve(req: IncomingMessage, res: ServerResponse): void {
    // kube-apiserver calls webhooks with `?timeout=...`: route on the path alone.
    const url = req.url ?? '';
    const q = url.indexOf('?');
    const route = req.method === 'POST' ? routes.get(q < 0 ? url : url.slice(0, q)) : undefined;
    if (!route) {
      app(req, res);
      return;
    }
    const start = process.hrtime.bigint();
    res.once('finish', () => {
      metrics.duration(route.path).observe(Number(process.hrtime.bigint() - start) / 1e9);
      metrics.count(route.path, res.statusCode).inc();
    });
    readJsonBody(req, { maxBytes: route.maxBodyBytes }, (refusal, body) => {
      if (refusal) reply(res, () => { throw refusal.error; }, logError, route.path, refusal.drained ?? refusal.close === true);
      else reply(res, () => route.handle(body), logError, route.path);
    });
  }
}

/**
 * Builds and sends the JSON reply of `build()`: its value with 200, or the error it
 * throws as `{message}` with the error's status. Serialization happens inside the same
 * try, so nothing about the reply can throw past here. `close` (a refused body) closes
 * the connection after the reply; given as a hook, the reply is written at once but
 * ended (and the connection closed) only when the hook calls back: a lingering close.
 */
function reply(res: ServerResponse, build: () => unknown, logError: (m: string) => void, path: string, close: boolean | ((then: () => void) => void) = false): void {
  if (res.headersSent || res.destroyed) return;
  let status = 200;
  let text: string;
  try {
    text = JSON.stringify(build());
  } catch (err) {
    const described = describeError(err);
    if (described.status >= 500) logError(`POST ${path}: ${described.message}`);
    status = described.status;
    text = JSON.stringify({ message: described.message });
  }
  const headers: Record<string, string | number> = { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) };
  // A body refused before its end: the connection cannot carry another request.
  if (close) headers.connection = 'close';
  res.writeHead(status, headers);
  if (typeof close !== 'function') {
    res.end(text);
    return;
  }
  res.write(text);
  close(() => res.end());
}

/** Label lookups cached per endpoint and code: prom-client hashes labels on every call otherwise. */
function boundMetrics() {
  const durations = new Map<string, ReturnType<typeof httpRequestDuration.labels>>();
  const counts = new Map<string, ReturnType<typeof httpRequests.labels>>();
  return {
    duration(endpoint: string) {
      let h = durations.get(endpoint);
      if (!h) durations.set(endpoint, (h = httpRequestDuration.labels({ endpoint })));
      return h;
    },
    count(endpoint: string, code: number) {
      const key = `${endpoint} ${code}`;
      let c = counts.get(key);
      if (!c) counts.set(key, (c = httpRequests.labels({ endpoint, code: String(code) })));
      return c;
    },
  };
}

/**
 * The express app behind health and metrics, and the 404/405 answers. Every failure is
 * answered with a JSON body; nothing a client sends can crash the process.
 */
function createApp(opts: AppOptions): Express {
  const logError = opts.logError ?? ((m: string) => console.error(m));
  const app = express();
  // No ETag: hashing every reply costs time on the hot path and nothing caches these.
  app.set('etag', false);
  app.set('x-powered-by', false);

  const endpoints = new Set(['/healthz', '/readyz', '/metrics', ...opts.routes.map((r) => r.path), ...(opts.profiling ? PROFILING_PATHS : [])]);
  app.use(observe(endpoints));

  app.get('/healthz', (_req, res) => {
    const live = opts.live ? safeReady(opts.live, logError) : true;
    res.status(live ? 200 : 503).json({ status: live ? 'ok' : 'stalled' });
  });
  app.get('/readyz', (_req, res) => {
    const ready = safeReady(opts.ready, logError);
    res.status(ready ? 200 : 503).json({ status: ready ? 'ready' : 'not ready' });
  });
  app.get('/metrics', async (_req, res) => {
    res.type(registry.contentType).send(await (opts.metrics ? opts.metrics() : registry.metrics()));
  });
  if (opts.profiling) mountProfiling(app);

  // POSTs to the routes never get here (createHandler answers them); other methods do.
  for (const route of opts.routes) {
    app.all(route.path, (req, res) => {
      res.status(405).set('Allow', 'POST').json({ message: `method ${req.method} not allowed on ${route.path}` });
    });
  }

  app.use((req, res) => {
    res.status(404).json({ message: `no route for ${req.method} ${req.path}` });
  });
  app.use(errorHandler(logError));
  return app;
}

function observe(endpoints: Set<string>): RequestHandler {
  return (req, res, next) => {
    const start = process.hrtime.bigint();
    const endpoint = endpoints.has(req.path) ? req.path : OTHER_ENDPOINT;
    res.once('finish', () => {
      httpRequestDuration.observe({ endpoint }, Number(process.hrtime.bigint() - start) / 1e9);
      httpRequests.inc({ endpoint, code: String(res.statusCode) });
    });
    next();
  };
}

function errorHandler(logError: (m: string) => void): ErrorRequestHandler {
  return (err: unknown, req, res, next) => {
    const { status, message } = describeError(err);
    if (status >= 500) logError(`${req.method} ${req.path}: ${message}`);
    if (res.headersSent) {
      next(err);
      return;
    }
    res.status(status).json({ message });
  };
}

/** Maps handler and express errors to a status and a one-line message. */
function describeError(err: unknown): { status: number; message: string } {
  if (err instanceof HttpError) return { status: err.status, message: firstLine(err.message) };
  const e = err as { status?: number; statusCode?: number; message?: unknown } | undefined;
  const status = e?.status ?? e?.statusCode;
  const message = typeof e?.message === 'string' ? e.message : 'internal error';
  if (typeof status === 'number' && status >= 400 && status < 500) return { status, message: firstLine(message) };
  return { status: 500, message: firstLine(message) };
}

/** The first line, at most 300 characters: messages may quote input and must stay one short line. */
function firstLine(s: string): string {
  const line = s.split('\n', 1)[0]!;
  return line.length > 300 ? `${line.slice(0, 300)}...` : line;
}

function safeReady(ready: () => boolean, logError: (m: string) => void): boolean {
  try {
    return ready();
  } catch (err) {
    logError(`readiness check failed: ${(err as Error).message}`);
    return false;
  }
}
