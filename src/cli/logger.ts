import { Writable } from 'node:stream';
import { pino, type DestinationStream, type Logger } from 'pino';
import type { Log, LogSubject } from '../api/log.js';

/**
 * Process logs: pino, one JSON object per line (`level` as a name, `time` in RFC 3339,
 * `msg`, and `kind` / `namespace` / `name` for a line about one object) for the
 * controller and `serve`, which run under a log collector; `text` renders the same
 * records as one human line for interactive commands. Anything that looks like a
 * credential is scrubbed from messages and fields before it is written.
 */

export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
export const LOG_FORMATS = ['json', 'text'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

export interface LoggerOptions {
  level?: LogLevel;
  format?: LogFormat;
  /** Where lines go (default stderr, so commands' stdout stays their output). */
  destination?: DestinationStream;
}

const REDACTED = '[redacted]';
// Field names whose values are secrets wherever they appear in a logged object.
const SECRET_KEYS = ['token', 'password', 'authorization', 'secret', 'clientKeyData', 'bearerToken'];
// Secrets inside free text: PEM private keys, bearer tokens, key=value credentials, JWTs.
const SECRET_PATTERNS: [RegExp, string][] = [
  [/-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(-----END [A-Z ]*PRIVATE KEY-----|$)/g, REDACTED],
  [/\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]+/gi, `$1 ${REDACTED}`],
  [/\b(token|password|passwd|secret|client-key-data|api[-_]?key)(["']?\s*[=:]\s*["']?)[^\s"',;}]+/gi, `$1$2${REDACTED}`],
  [/\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]+/g, REDACTED],
];

export function scrubSecrets(text: string): string {
  let out = text;
  for (const [re, by] of SECRET_PATTERNS) out = out.replace(re, by);
  return out;
}

export function createLogger(opts: LoggerOptions = {}): Logger {
  const format = opts.format ?? 'json';
  const destination = opts.destination ?? pino.destination({ dest: 2, sync: true });
  return pino({
    level: opts.level ?? 'info',
    base: undefined,
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
    redact: { paths: SECRET_KEYS.flatMap((k) => [k, `*.${k}`]), censor: REDACTED },
    hooks: {
      logMethod(args, method) {
        method.apply(this, args.map((a) => (typeof a === 'string' ? scrubSecrets(a) : a)) as Parameters<typeof method>);
      },
    },
  }, format === 'text' ? textStream(destination) : destination);
}

/** The injected `Log` port over a pino logger, at one level. */
export function logTo(logger: Logger, level: 'info' | 'warn' | 'error' | 'debug' = 'info'): Log {
  return (message: string, about?: LogSubject) => {
    if (about) logger[level]({ kind: about.kind, ...(about.namespace ? { namespace: about.namespace } : {}), name: about.name }, message);
    else logger[level](message);
  };
}

/** Renders pino's JSON records as `TIME LEVEL msg kind=... namespace/name` lines. */
function textStream(out: DestinationStream): DestinationStream {
  return new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString('utf8').split('\n')) {
        if (!line) continue;
        try {
          const { time, level, msg, kind, namespace, name, ...rest } = JSON.parse(line) as Record<string, unknown>;
          const subject = kind ? ` [${String(kind)} ${namespace ? `${String(namespace)}/` : ''}${String(name ?? '')}]` : '';
          const extra = Object.keys(rest).length ? ` ${JSON.stringify(rest)}` : '';
          out.write(`${String(time)} ${String(level).toUpperCase().padEnd(5)} ${String(msg ?? '')}${subject}${extra}\n`);
        } catch {
          out.write(`${line}\n`);
        }
      }
      done();
    },
  }) as unknown as DestinationStream;
}
