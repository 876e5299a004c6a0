import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { ManagedProcess } from './process.js';

export interface ProbeTls {
  readonly ca?: string;
  readonly cert?: string;
  readonly key?: string;
}

/** GET `url` and report the status code (0 when it could not connect). */
export async function httpStatus(url: string, tls?: ProbeTls): Promise<number> {
  const u = new URL(url);
  const request = u.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve) => {
    const req = request(
      u,
      { method: 'GET', timeout: 2000, ...(u.protocol === 'https:' ? { ...tls, rejectUnauthorized: Boolean(tls?.ca) } : {}) },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(0));
    req.end();
  });
}

/**
 * Polls `check` until it is true. Fails early, with the log tail, if any of
 * `watch` exits meanwhile (a crashed binary should not cost the whole timeout).
 */
export async function waitFor(
  what: string,
  check: () => Promise<boolean>,
  opts: { timeoutMs: number; intervalMs?: number; watch?: readonly ManagedProcess[] },
): Promise<void> {
  const deadline = Date.now() + opts.timeoutMs;
  for (;;) {
    const dead = opts.watch?.find((p) => !p.running);
    if (dead) throw new ComponentExitedError(dead, what);
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline) {
      const tails = (opts.watch ?? []).map((p) => `--- ${p.name} (${p.logFile}):\n${p.logTail(15)}`).join('\n');
      throw new Error(`timed out after ${opts.timeoutMs}ms waiting for ${what}\n${tails}`);
    }
    await new Promise((r) => setTimeout(r, opts.intervalMs ?? 100));
  }
}

export class ComponentExitedError extends Error {
  constructor(
    readonly component: ManagedProcess,
    what: string,
  ) {
    super(`${component.name} exited while waiting for ${what}; log ${component.logFile}:\n${component.logTail(30)}`);
  }
}
