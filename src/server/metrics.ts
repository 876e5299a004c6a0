import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * The one Prometheus registry of the Headroom process. Every component registers its
 * metrics here (names under `headroom_`), and `GET /metrics` serves it.
 */
export const registry = new Registry();

export const METRIC_PREFIX = 'headroom_';

collectDefaultMetrics({ register: registry, prefix: METRIC_PREFIX });

/** Requests served, per endpoint (the route, never the raw path) and status code. */
export const httpRequests = new Counter({
  name: `${METRIC_PREFIX}http_requests_total`,
  help: 'HTTP requests served, by endpoint and status code.',
  labelNames: ['endpoint', 'code'] as const,
  registers: [registry],
});

/** Sub-millisecond buckets: the webhook and extender answer in well under a millisecond. */
export const httpRequestDuration = new Histogram({
  name: `${METRIC_PREFIX}http_request_duration_seconds`,
  help: 'Time from request start to the last byte of the response, by endpoint.',
  labelNames: ['endpoint'] as const,
  buckets: [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
  registers: [registry],
});
