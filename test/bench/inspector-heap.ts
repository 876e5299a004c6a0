/**
 * The live heap of a benchmarked Node process, through its inspector (the process runs
 * with `--inspect=127.0.0.1:<port>`): a full collection (HeapProfiler.collectGarbage),
 * then Runtime.getHeapUsage. What is left is what the process keeps, without the
 * garbage a sample of the heap in use may or may not include (test/bench/fleet.ts).
 * The main thread's heap only; worker threads have their own.
 */

/** The inspector's WebSocket URL of the process listening on `port` (waits up to `timeoutMs` for it). */
async function debuggerUrl(port: number, timeoutMs: number): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const list = await (await fetch(`http://127.0.0.1:${port}/json/list`)).json() as Array<{ webSocketDebuggerUrl?: string }>;
      const url = list[0]?.webSocketDebuggerUrl;
      if (url) return url;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`no inspector on 127.0.0.1:${port}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Collects garbage `collections` times, then reads the heap in use: MB. */
export async function liveHeapMb(port: number, collections = 2, timeoutMs = 30_000): Promise<number> {
  const ws = new WebSocket(await debuggerUrl(port, timeoutMs));
  await new Promise<void>((resolve, reject) => {
    ws.addEventListener('open', () => resolve(), { once: true });
    ws.addEventListener('error', () => reject(new Error('inspector connection failed')), { once: true });
  });
  let id = 0;
  const waiting = new Map<number, (r: { result?: Record<string, unknown>; error?: { message: string } }) => void>();
  ws.addEventListener('message', (e) => {
    const m = JSON.parse(String(e.data)) as { id?: number; result?: Record<string, unknown>; error?: { message: string } };
    if (m.id !== undefined) waiting.get(m.id)?.(m);
  });
  const call = (method: string): Promise<Record<string, unknown>> => new Promise((resolve, reject) => {
    const n = ++id;
    const timer = setTimeout(() => reject(new Error(`inspector ${method}: no answer in ${timeoutMs} ms`)), timeoutMs);
    waiting.set(n, (r) => {
      clearTimeout(timer);
      waiting.delete(n);
      if (r.error) reject(new Error(`inspector ${method}: ${r.error.message}`));
      else resolve(r.result ?? {});
    });
    ws.send(JSON.stringify({ id: n, method }));
  });
  try {
    for (let i = 0; i < collections; i++) await call('HeapProfiler.collectGarbage');
    const usage = await call('Runtime.getHeapUsage');
    return Number(usage.usedSize) / 2 ** 20;
  } finally {
    ws.close();
  }
}
