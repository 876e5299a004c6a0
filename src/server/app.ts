import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import express, { type ErrorRequestHandler, type Express, type RequestHandler } from 'express';
import { httpRequestDuration, httpRequests, registry } from './metrics.js';

/** Admission reviews carry one object; 10 MiB is far above any real pod and bounds memory. */
export const BODY_LIMIT_BYTES = 10 * 1024 * 1024;

/** An error that becomes an HTTP status with a JSON `{message}` body. */
export class HttpError extends Error {
  constructor(readonly status: number, message: string) {
    super(message);
  }
}

/**
 * A POST endpoint that takes a parsed JSON body and returns the JSON reply. Handlers are
 * synchronous and read only in-memory state: nothing on this path waits on the network.
 * Throw HttpError(400, ...) for input that is well-formed JSON but not the expected shape.
 */
export interface JsonRoute {
  path: string;
  handle(body: unknown): unknown;
}

export interface AppOptions {
  /** True once the caches the handlers read from have synced; gates /readyz. */
  ready(): boolean;
  routes: JsonRoute[];
  bodyLimitBytes?: number;
  /** Where unexpected errors are reported; defaults to console.error. */
  logError?: (message: string) => void;
}

const OTHER_ENDPOINT = 'other';

/**
 * The request listener to serve: POSTs to the JSON routes (the webhook and the
 * extender, called for every pod) take a direct path that reads, parses and answers
 * without express's middleware stack, which costs more than the handlers themselves;
 * everything else (health, metrics, 404, 405) goes to the express app. Both paths give
 * the same answers: 400 for malformed JSON or a missing body, 413 over the body limit.
 */
export function createHandler(opts: AppOptions): RequestListener {
  const app = createApp(opts);
  const logError = opts.logError ?? ((m: string) => console.error(m));
  const limit = opts.bodyLimitBytes ?? BODY_LIMIT_BYTES;
  const routes = new Map(opts.routes.map((r) => [r.path, r]));
  const metrics = boundMetrics();
  return (req, res) => {
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
    readBody(req, limit, (err, body) => {
      if (err) return sendJson(res, err.status, { message: err.message }, err.status === 413);
      let parsed: unknown;
      try {
        if (body!.length === 0) throw new HttpError(400, 'request body is required');
        parsed = JSON.parse(body!.toString('utf8'));
      } catch (e) {
        const message = e instanceof HttpError ? e.message : `malformed JSON: ${firstLine((e as Error).message)}`;
        return sendJson(res, 400, { message });
      }
      let reply: unknown;
      try {
        reply = route.handle(parsed);
      } catch (e) {
        const { status, message } = describeError(e);
        if (status >= 500) logError(`POST ${route.path}: ${message}`);
        return sendJson(res, status, { message });
      }
      sendJson(res, 200, reply);
    });
  };
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

/** Reads the whole body up to `limit` bytes; 413 past it (checked early from content-length). */
function readBody(req: IncomingMessage, limit: number, done: (err: HttpError | undefined, body?: Buffer) => void): void {
  const declared = Number(req.headers['content-length']);
  if (declared > limit) {
    req.resume();
    return done(new HttpError(413, `request body exceeds ${limit} bytes`));
  }
  const chunks: Buffer[] = [];
  let size = 0;
  let finished = false;
  const finish = (err?: HttpError) => {
    if (finished) return;
    finished = true;
    done(err, err ? undefined : chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
  };
  req.on('data', (chunk: Buffer) => {
    if (finished) return;
    size += chunk.length;
    if (size > limit) {
      chunks.length = 0;
      return finish(new HttpError(413, `request body exceeds ${limit} bytes`));
    }
    chunks.push(chunk);
  });
  req.on('end', () => finish());
  req.on('error', () => finish(new HttpError(400, 'request body could not be read')));
}

function sendJson(res: ServerResponse, status: number, body: unknown, close = false): void {
  if (res.headersSent || res.destroyed) return;
  const text = JSON.stringify(body);
  const headers: Record<string, string | number> = { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) };
  // After refusing a body we did not read, the connection cannot carry another request.
  if (close) headers.connection = 'close';
  res.writeHead(status, headers);
  res.end(text);
}

/**
 * The express app behind the webhook, extender, health and metrics endpoints. Every
 * failure is answered with a JSON body; nothing a client sends can crash the process.
 */
export function createApp(opts: AppOptions): Express {
  const logError = opts.logError ?? ((m: string) => console.error(m));
  const app = express();
  // No ETag: hashing every reply costs time on the hot path and nothing caches these.
  app.set('etag', false);
  app.set('x-powered-by', false);

  const endpoints = new Set(['/healthz', '/readyz', '/metrics', ...opts.routes.map((r) => r.path)]);
  app.use(observe(endpoints));

  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', (_req, res) => {
    const ready = safeReady(opts.ready, logError);
    res.status(ready ? 200 : 503).json({ status: ready ? 'ready' : 'not ready' });
  });
  app.get('/metrics', async (_req, res) => {
    res.type(registry.contentType).send(await registry.metrics());
  });

  // Parse any content type as JSON: a client that omits the header still gets an answer.
  const json = express.json({ limit: opts.bodyLimitBytes ?? BODY_LIMIT_BYTES, type: () => true });
  for (const route of opts.routes) {
    app.post(route.path, json, (req, res) => {
      if (req.body === undefined) throw new HttpError(400, 'request body is required');
      res.json(route.handle(req.body));
    });
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

/** Maps body-parser and handler errors to a status and a one-line message. */
function describeError(err: unknown): { status: number; message: string } {
  if (err instanceof HttpError) return { status: err.status, message: err.message };
  const e = err as { status?: number; statusCode?: number; type?: string; message?: string; limit?: number };
  const status = e?.status ?? e?.statusCode;
  if (e?.type === 'entity.too.large') return { status: 413, message: `request body exceeds ${e.limit} bytes` };
  if (e?.type === 'entity.parse.failed') return { status: 400, message: `malformed JSON: ${firstLine(e.message)}` };
  if (typeof status === 'number' && status >= 400 && status < 500) return { status, message: firstLine(e.message) };
  return { status: 500, message: firstLine(e?.message ?? String(err)) };
}

function firstLine(s: string | undefined): string {
  return (s ?? 'error').split('\n')[0]!;
}

function safeReady(ready: () => boolean, logError: (m: string) => void): boolean {
  try {
    return ready();
  } catch (err) {
    logError(`readiness check failed: ${(err as Error).message}`);
    return false;
  }
}
