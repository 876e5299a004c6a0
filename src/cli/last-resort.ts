import { Counter } from 'prom-client';
import { METRIC_PREFIX, registry } from '../server/metrics.js';

const uncaught = new Counter({
  name: `${METRIC_PREFIX}uncaught_errors_total`,
  help: 'Exceptions and promise rejections that reached the process-wide last-resort handler (each one a bug).',
  labelNames: ['kind'] as const,
  registers: [registry],
});

export type UncaughtKind = 'exception' | 'rejection';

export interface LastResortOptions {
  /** Where the one-line reports go. */
  log(line: string): void;
  /** Most lines logged per minute; the rest are counted and summarised in the next line. */
  linesPerMinute?: number;
  now?: () => number;
}

/**
 * The process-wide policy for an exception or rejection nothing else caught
 * (docs/adr/0043-last-resort-error-policy.md): log one line, count it in
 * `headroom_uncaught_errors_total`, and keep serving. Request handlers answer inside
 * their own error boundary, so reaching this is a bug; exiting would turn that bug into
 * an outage of the webhook, the extender and the controller at once (the standby runs
 * the same code and would take the same input). Liveness probes remain the way a truly
 * wedged process gets restarted. Returns the function that uninstalls the handlers.
 */
export function installLastResort(opts: LastResortOptions, proc: NodeJS.EventEmitter = process): () => void {
  const perMinute = opts.linesPerMinute ?? 10;
  const now = opts.now ?? Date.now;
  let windowStart = now();
  let logged = 0;
  let suppressed = 0;
  const report = (kind: UncaughtKind, err: unknown) => {
    uncaught.inc({ kind });
    const t = now();
    if (t - windowStart >= 60_000) {
      windowStart = t;
      logged = 0;
    }
    if (logged >= perMinute) {
      suppressed++;
      return;
    }
    logged++;
    const more = suppressed > 0 ? ` (${suppressed} more not logged)` : '';
    suppressed = 0;
    opts.log(`uncaught ${kind}, still serving${more}: ${describe(err)}`);
  };
  const onException = (err: unknown) => report('exception', err);
  const onRejection = (reason: unknown) => report('rejection', reason);
  proc.on('uncaughtException', onException);
  proc.on('unhandledRejection', onRejection);
  return () => {
    proc.off('uncaughtException', onException);
    proc.off('unhandledRejection', onRejection);
  };
}

/** The error's name, message and first stack frame, on one bounded line. */
function describe(err: unknown): string {
  if (!(err instanceof Error)) return typeof err === 'string' ? err.slice(0, 300) : `non-Error value (${typeof err})`;
  const frame = err.stack?.split('\n').find((l) => l.trimStart().startsWith('at '))?.trim();
  const text = `${err.name}: ${err.message.split('\n', 1)[0]}${frame ? ` (${frame})` : ''}`;
  return text.length > 500 ? `${text.slice(0, 500)}...` : text;
}
