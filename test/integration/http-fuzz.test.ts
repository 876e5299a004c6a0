/**
 * HTTP fuzz test (issue 10): a real `headroom serve` child process on loopback gets at
 * least 20,000 requests from the seeded families in http-fuzz-cases.ts. Targets: the
 * process never dies, no 5xx, every answer within 1 s (an answer over 1 s under
 * concurrency is sent again alone and must be within 1 s then: the machine's scheduling
 * passes, an input that makes the server spin does not), each answer one of the statuses
 * its family allows (4xx with a one-line JSON message), no growth of the heap retained
 * after a full GC, RSS growth at most 50 MB (see RSS_GROWTH_LIMIT), and a valid request
 * answered exactly as before the run. HEADROOM_FUZZ_SEED and
 * HEADROOM_FUZZ_REQUESTS override the seed and the count; the figures are printed.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { FAMILIES, type FuzzCase, fuzzCases, NODE_NAMES, PRIORITIZE, validPod, WEBHOOK, review } from './http-fuzz-cases.js';

const ROOT = new URL('../../', import.meta.url);
const SEED = Number(process.env.HEADROOM_FUZZ_SEED ?? 20261201);
const REQUESTS = Number(process.env.HEADROOM_FUZZ_REQUESTS ?? 20_000);
const CONCURRENCY = 4;
const WARMUP = Number(process.env.HEADROOM_FUZZ_WARMUP ?? 2_000);
const SLOW_MS = 1000;
/**
 * Issue 10's target: RSS growth <= 50 MB after the warm-up. Measured on the final code:
 * +4.8 and +22.4 MB in two CI runs on a quiet machine, +44.6 and +49.3 MB at load average
 * ~20, while the heap after a full GC stays flat. The defect itself grew RSS by 628 MB.
 */
const RSS_GROWTH_LIMIT = 50 * 1024 * 1024;
/** Retained JS heap (after a full GC) may not grow by more than this: objects leaking. */
const HEAP_GROWTH_LIMIT = 10 * 1024 * 1024;

const SNAPSHOT = `
apiVersion: v1
kind: Node
metadata: {name: busy, annotations: {headroom.dev/provisioned-for: ReplicaSet/shop/web-1}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: idle}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: draining, annotations: {headroom.dev/disruption: "consolidating: underutilized"}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: running, namespace: shop}
spec:
  nodeName: busy
  containers: [{name: c, image: i, resources: {requests: {cpu: "2", memory: 4Gi}}}]
status: {phase: Running}
`;

interface Answer {
  status: number;
  ms: number;
  body: Buffer;
  contentType: string;
}

const SPACES = Buffer.alloc(64 * 1024, 0x20);

function send(base: URL, agent: Agent, c: FuzzCase, timeoutMs = 10_000): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const start = performance.now();
    const body = c.body;
    const stream = body && !Buffer.isBuffer(body) ? body : undefined;
    const headers: Record<string, string | number> = { 'content-type': 'application/json' };
    if (Buffer.isBuffer(body)) headers['content-length'] = body.length;
    else if (stream && !stream.chunked) headers['content-length'] = stream.declaredBytes ?? stream.streamBytes;
    const huge = stream?.declaredBytes !== undefined;
    const req = request({ host: base.hostname, port: base.port, method: c.method, path: c.path, headers, agent: huge ? false : agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (d: Buffer) => chunks.push(d));
      res.on('end', () => {
        clearTimeout(timer);
        // A declared 1 GiB that was barely sent: the server answered and closes; so do we.
        if (huge) req.destroy();
        resolve({ status: res.statusCode!, ms: performance.now() - start, body: Buffer.concat(chunks), contentType: String(res.headers['content-type'] ?? '') });
      });
      res.on('error', reject);
    });
    const timer = setTimeout(() => req.destroy(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    req.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    if (!stream) {
      req.end(body);
      return;
    }
    let left = stream.streamBytes;
    const pump = () => {
      while (left > 0) {
        const n = Math.min(left, SPACES.length);
        left -= n;
        if (!req.write(n === SPACES.length ? SPACES : SPACES.subarray(0, n))) {
          req.once('drain', pump);
          return;
        }
      }
      if (!huge) req.end();
    };
    pump();
  });
}

/**
 * RSS once the process has been idle for a while and has run a full GC: right after a
 * burst it still holds the burst's garbage (request bodies of up to 4 MiB and what they
 * parse to), noise of tens of MB that is not growth.
 */
async function settledRss(child: ChildProcess): Promise<number> {
  await new Promise((r) => setTimeout(r, 1000));
  child.kill('SIGUSR2');
  await new Promise((r) => setTimeout(r, 2000));
  return rssBytes(child.pid!);
}

/** The child's own heap figures (MB) from its /metrics: heap used and total, external memory. */
async function heapFigures(base: URL): Promise<Record<string, number>> {
  const text = await (await fetch(new URL('/metrics', base))).text();
  const read = (name: string) => Number((Number(new RegExp(`^${name} (\\S+)`, 'm').exec(text)?.[1]) / 2 ** 20).toFixed(1));
  return { heapUsedMB: read('headroom_nodejs_heap_size_used_bytes'), heapTotalMB: read('headroom_nodejs_heap_size_total_bytes'), externalMB: read('headroom_nodejs_external_memory_bytes') };
}

function rssBytes(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith('VmRSS:'));
  return Number(/(\d+)/.exec(line ?? '')?.[1] ?? NaN) * 1024;
}

describe('HTTP fuzz of headroom serve (issue 10)', function () {
  this.timeout(300_000);
  let child: ChildProcess;
  let base: URL;
  let stderr = '';
  let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  let dir: string;

  before(async function () {
    if (process.platform !== 'linux') this.skip(); // RSS is read from /proc
    dir = mkdtempSync(join(tmpdir(), 'http-fuzz-'));
    const entry = join(dir, 'cli.mjs');
    const snapshot = join(dir, 'snapshot.yaml');
    writeFileSync(entry, `import { main } from ${JSON.stringify(new URL('src/cli/main.ts', ROOT).href)};\nprocess.exitCode = await main(process.argv.slice(2));\n`);
    writeFileSync(snapshot, SNAPSHOT);
    // Measurement aid, not part of the server: SIGUSR2 runs a full GC, so that RSS is read
    // without the garbage of the last burst (see settledRss).
    const gcOnSignal = join(dir, 'gc-on-signal.mjs');
    writeFileSync(gcOnSignal, "process.on('SIGUSR2', () => globalThis.gc?.());\n");
    child = spawn(process.execPath, ['--expose-gc', '--import', gcOnSignal, '--import', 'tsx', entry, 'serve', '--snapshot', snapshot, '--no-tls', '--host', '127.0.0.1', '--port', '0'], { cwd: ROOT.pathname, stdio: ['ignore', 'pipe', 'pipe'], });
    child.on('exit', (code, signal) => (exit = { code, signal }));
    child.stderr!.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-200_000)));
    let stdout = '';
    child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
    const deadline = Date.now() + 60_000;
    while (!/listening on (http:\S+)/.test(stdout)) {
      if (exit || Date.now() > deadline) throw new Error(`headroom serve did not start: ${stderr}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    base = new URL(/listening on (http:\S+)/.exec(stdout)![1]!);
  });

  after(async () => {
    if (child && !exit) {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    }
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it(`answers ${REQUESTS} malformed and valid requests: no crash, no 5xx, none over 1 s when re-sent alone, no heap growth, RSS growth <= 50 MB`, async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
    const probe: FuzzCase = { family: 'probe', method: 'POST', path: PRIORITIZE, body: Buffer.from(JSON.stringify({ Pod: validPod(), NodeNames: NODE_NAMES })), expect: [200] };
    const probeReview: FuzzCase = { family: 'probe', method: 'POST', path: WEBHOOK, body: Buffer.from(JSON.stringify(review('final', validPod()))), expect: [200] };
    const before = await send(base, agent, probe);
    expect(before.status).to.equal(200);

    // Warm-up with another seed, at the same concurrency: the JIT settles and V8 sizes its
    // heap for the biggest legal bodies (a high-water mark it keeps, not growth). RSS
    // growth is measured from there, so it shows memory that keeps growing: leaks.
    const rssCold = rssBytes(child.pid!);
    const warmup = fuzzCases(SEED + 1, WARMUP);
    await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
      for (let next = warmup.next(); !next.done; next = warmup.next()) await send(base, agent, next.value).catch(() => undefined);
    }));
    const rssBefore = await settledRss(child);
    const heapBefore = await heapFigures(base);

    const latencies: number[] = [];
    const perFamily = new Map<string, number>();
    const problems: string[] = [];
    let fiveXX = 0;
    const slowCases: FuzzCase[] = [];
    let sent = 0;
    const rssTrail: number[] = [];
    const cases = fuzzCases(SEED, REQUESTS);
    const t0 = performance.now();
    const worker = async () => {
      for (let next = cases.next(); !next.done; next = cases.next()) {
        const c = next.value;
        sent++;
        if (sent % 2000 === 0) rssTrail.push(Number((rssBytes(child.pid!) / 2 ** 20).toFixed(1)));
        perFamily.set(c.family, (perFamily.get(c.family) ?? 0) + 1);
        let a: Answer;
        try {
          a = await send(base, agent, c);
        } catch (err) {
          problems.push(`${c.family} ${c.method} ${c.path}: ${(err as Error).message}`);
          if (exit) return;
          continue;
        }
        latencies.push(a.ms);
        if (a.status >= 500) fiveXX++;
        if (a.ms > SLOW_MS) slowCases.push(c);
        if (!c.expect.includes(a.status)) problems.push(`${c.family} ${c.method} ${c.path}: status ${a.status}, want ${c.expect.join('|')}: ${a.body.subarray(0, 200).toString()}`);
        if (a.status >= 400) {
          let message: unknown;
          try {
            message = (JSON.parse(a.body.toString()) as { message?: unknown }).message;
          } catch {
            message = undefined;
          }
          if (typeof message !== 'string' || message.includes('\n') || message.length > 400 || !a.contentType.includes('application/json')) {
            problems.push(`${c.family} ${c.path}: ${a.status} without a one-line JSON message: ${a.body.subarray(0, 200).toString()}`);
          }
        }
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    const seconds = (performance.now() - t0) / 1000;

    // A request over 1 s under concurrency may be this shared machine's scheduling, or an
    // input that makes the server spin. Sent again alone, only the second is slow again.
    const slowAlone: string[] = [];
    for (const c of slowCases.slice(0, 50)) {
      const again = await send(base, agent, c).catch(() => undefined);
      if (!again || again.ms > SLOW_MS) slowAlone.push(`${c.family} ${c.method} ${c.path}: ${again ? `${again.ms.toFixed(0)} ms alone` : 'no answer alone'}`);
    }

    const after = await send(base, agent, probe);
    const afterReview = await send(base, agent, probeReview);
    const rssAfter = await settledRss(child);
    const heapAfter = await heapFigures(base);
    agent.destroy();

    latencies.sort((x, y) => x - y);
    const figures = {
      seed: SEED, requests: sent, answered: latencies.length, seconds: Number(seconds.toFixed(1)), families: perFamily.size,
      perFamily: Object.fromEntries(perFamily), fiveXX, slowOver1s: slowCases.length, slowAgainAlone: slowAlone.length,
      p50ms: Number(latencies[Math.floor(latencies.length * 0.5)]?.toFixed(2)), p99ms: Number(latencies[Math.floor(latencies.length * 0.99)]?.toFixed(2)),
      maxMs: Number(latencies.at(-1)?.toFixed(1)), rssColdMB: Number((rssCold / 2 ** 20).toFixed(1)), warmup: WARMUP, rssBeforeMB: Number((rssBefore / 2 ** 20).toFixed(1)), rssAfterMB: Number((rssAfter / 2 ** 20).toFixed(1)), rssEvery2000MB: rssTrail, heapBefore, heapAfter,
      uncaught: (stderr.match(/uncaught (exception|rejection)/g) ?? []).length,
    };
    console.log(`      http fuzz figures: ${JSON.stringify(figures)}`);

    expect(exit, `headroom serve exited: ${stderr.slice(-2000)}`).to.equal(undefined);
    expect(sent).to.be.at.least(REQUESTS);
    expect(new Set(perFamily.keys())).to.deep.equal(new Set(FAMILIES));
    expect(problems.slice(0, 20), `${problems.length} problem(s)`).to.deep.equal([]);
    expect(fiveXX).to.equal(0);
    expect(slowCases.length, `over 1 s: more than the 50 re-sent alone (max ${figures.maxMs} ms)`).to.be.at.most(50);
    expect(slowAlone, `over 1 s under load (max ${figures.maxMs} ms) and again alone`).to.deep.equal([]);
    expect(figures.uncaught, 'errors reached the last-resort handler').to.equal(0);
    expect((heapAfter.heapUsedMB! - heapBefore.heapUsedMB!) * 2 ** 20, `heap used after GC ${heapBefore.heapUsedMB} -> ${heapAfter.heapUsedMB} MB`).to.be.at.most(HEAP_GROWTH_LIMIT);
    expect(rssAfter - rssBefore, `RSS ${figures.rssBeforeMB} -> ${figures.rssAfterMB} MB`).to.be.at.most(RSS_GROWTH_LIMIT);
    expect(after.status).to.equal(200);
    expect(after.body.toString()).to.equal(before.body.toString());
    expect(JSON.parse(after.body.toString())).to.deep.equal([{ Host: 'busy', Score: 7 }, { Host: 'idle', Score: 1 }, { Host: 'draining', Score: 1 }]);
    expect(afterReview.status).to.equal(200);
    const response = (JSON.parse(afterReview.body.toString()) as { response: { uid: string; allowed: boolean; patchType?: string } }).response;
    expect(response).to.include({ uid: 'final', allowed: true, patchType: 'JSONPatch' });
  });
});
