// Minimal types for the parts of autocannon 8 the load tests use (it ships none).
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events';
  namespace autocannon {
    interface Options {
      url: string;
      method?: string;
      headers?: Record<string, string>;
      body?: string | Buffer;
      connections?: number;
      duration?: number;
      amount?: number;
      overallRate?: number;
      pipelining?: number;
      timeout?: number;
      tlsOptions?: Record<string, unknown>;
      requests?: Array<Record<string, unknown>>;
    }
    interface Histogram { average: number; p50: number; p90: number; p99: number; max: number; total: number }
    interface Result {
      requests: Histogram & { total: number };
      latency: Histogram;
      errors: number;
      timeouts: number;
      non2xx: number;
    }
    type Instance = EventEmitter & PromiseLike<Result> & { stop(): void };
  }
  function autocannon(opts: autocannon.Options): autocannon.Instance;
  export default autocannon;
}
