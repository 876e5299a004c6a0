import { spawn, type ChildProcess } from 'node:child_process';
import { Agent, request } from 'node:https';
import { createInterface } from 'node:readline';
import autocannon from 'autocannon';

/** A server child process (server-child.ts) on loopback. */
export interface ChildServer {
  url: string;
  caPem: string;
  /** Sends a line to the child and resolves with its next output line. */
  command(line: string): Promise<string>;
  stop(): Promise<void>;
}

export async function startChild(kind: 'floor' | 'extender-floor' | 'headroom', nodes = 0, env: Record<string, string> = {}): Promise<ChildServer> {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', 'test/load/server-child.ts', kind, String(nodes)], {
    stdio: ['pipe', 'pipe', 'inherit'],
    env: { ...process.env, ...env },
  });
  const rl = createInterface({ input: child.stdout! });
  const nextLine = () =>
    new Promise<string>((resolve, reject) => {
      rl.once('line', (l) => resolve(l));
      child.once('exit', (code) => reject(new Error(`${kind} server exited with ${code}`)));
    });
  const { url, caPem } = JSON.parse(await nextLine()) as { url: string; caPem: string };
  return {
    url,
    caPem,
    command: (line) => {
      const reply = nextLine();
      child.stdin!.write(`${line}\n`);
      return reply;
    },
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.stdin!.end();
        setTimeout(() => child.kill('SIGKILL'), 5000).unref();
      }),
  };
}

export interface LoadResult {
  requests: number;
  rps: number;
  errors: number;
  non2xx: number;
  /** Milliseconds, from our own sub-millisecond samples. */
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

export interface LoadOptions {
  url: string;
  caPem: string;
  connections: number;
  durationSec: number;
  /** Offered load in requests/s over all connections; omitted = as fast as possible. */
  overallRate?: number;
  /** Request bodies, cycled through. */
  bodies: string[];
}

/**
 * Runs autocannon against a server and computes latency percentiles from every
 * response time (autocannon's own histogram has 1 ms resolution).
 */
export async function load(opts: LoadOptions): Promise<LoadResult> {
  const samples: number[] = [];
  let i = 0;
  const instance = autocannon({
    url: opts.url,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    connections: opts.connections,
    duration: opts.durationSec,
    ...(opts.overallRate ? { overallRate: opts.overallRate } : {}),
    tlsOptions: { ca: opts.caPem },
    requests: [{ setupRequest: (req: Record<string, unknown>) => ({ ...req, body: opts.bodies[i++ % opts.bodies.length] }) }],
  } as autocannon.Options);
  instance.on('response', (_client: unknown, _status: number, _bytes: number, responseTime: number) => {
    samples.push(responseTime);
  });
  const result = await instance;
  samples.sort((a, b) => a - b);
  const pct = (p: number) => samples[Math.min(samples.length - 1, Math.floor((p / 100) * samples.length))] ?? NaN;
  return {
    requests: result.requests.total,
    rps: result.requests.total / opts.durationSec,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
    p50: pct(50),
    p90: pct(90),
    p99: pct(99),
    max: samples[samples.length - 1] ?? NaN,
  };
}

/**
 * `count` sequential POSTs of one body over a keep-alive connection, as kube-scheduler's
 * Go client calls an extender (one call at a time per scheduling cycle). Latency in ms.
 */
export async function sequential(url: string, caPem: string, body: string, count: number): Promise<LoadResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1, ca: caPem });
  const length = Buffer.byteLength(body);
  let errors = 0;
  let non2xx = 0;
  const call = () =>
    new Promise<number>((resolve) => {
      const t = performance.now();
      const req = request(url, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': length } }, (res) => {
        if (res.statusCode !== 200) non2xx++;
        res.on('data', () => undefined);
        res.on('end', () => resolve(performance.now() - t));
      });
      req.on('error', () => {
        errors++;
        resolve(NaN);
      });
      req.end(body);
    });
  const started = performance.now();
  const samples: number[] = [];
  for (let i = 0; i < count; i++) samples.push(await call());
  const seconds = (performance.now() - started) / 1000;
  agent.destroy();
  const ok = samples.filter(Number.isFinite).sort((a, b) => a - b);
  const pct = (p: number) => ok[Math.min(ok.length - 1, Math.floor((p / 100) * ok.length))] ?? NaN;
  return { requests: count, rps: count / seconds, errors, non2xx, p50: pct(50), p90: pct(90), p99: pct(99), max: ok[ok.length - 1] ?? NaN };
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

export const fmt = (n: number, d = 2) => (Number.isFinite(n) ? n.toFixed(d) : String(n));
