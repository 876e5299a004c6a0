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
