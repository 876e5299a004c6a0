import { Session } from 'node:inspector/promises';
import type { Express } from 'express';

/**
 * Node's analogue of Go's pprof, for the metrics port only and off unless asked for
 * (`--profiling`): a CPU profile of the main thread over N seconds (`.cpuprofile`,
 * Chrome DevTools' Performance panel loads it) and a heap snapshot (`.heapsnapshot`,
 * DevTools' Memory panel). Both go through node:inspector, so no inspector port is
 * opened. One profile at a time: a second request while one runs gets 409, so a
 * scraper cannot stack up sessions that each slow the process down.
 */

export const MAX_CPU_PROFILE_SECONDS = 120;
export const PROFILING_PATHS = ['/debug/profile/cpu', '/debug/profile/heap'] as const;
const DEFAULT_CPU_PROFILE_SECONDS = 10;

export function mountProfiling(app: Express, sleep: (ms: number) => Promise<void> = (ms) => new Promise((r) => setTimeout(r, ms))): void {
  let busy = false;
  const exclusive = async <T>(work: () => Promise<T>): Promise<T | undefined> => {
    if (busy) return undefined;
    busy = true;
    try {
      return await work();
    } finally {
      busy = false;
    }
  };

  app.get('/debug/profile/cpu', async (req, res, next) => {
    const raw = req.query.seconds;
    const seconds = raw === undefined ? DEFAULT_CPU_PROFILE_SECONDS : typeof raw === 'string' && /^\d{1,4}$/.test(raw) ? Number(raw) : NaN;
    if (!(seconds >= 1 && seconds <= MAX_CPU_PROFILE_SECONDS)) {
      res.status(400).json({ message: `seconds must be a whole number from 1 to ${MAX_CPU_PROFILE_SECONDS}` });
      return;
    }
    try {
      const profile = await exclusive(() => cpuProfile(seconds * 1000, sleep));
      if (profile === undefined) {
        res.status(409).json({ message: 'a profile is already being taken; try again when it ends' });
        return;
      }
      res.type('application/json').set('Content-Disposition', `attachment; filename="headroom-${Date.now()}.cpuprofile"`).send(profile);
    } catch (err) {
      next(err);
    }
  });

  app.get('/debug/profile/heap', async (_req, res, next) => {
    try {
      const snapshot = await exclusive(heapSnapshot);
      if (snapshot === undefined) {
        res.status(409).json({ message: 'a profile is already being taken; try again when it ends' });
        return;
      }
      res.type('application/json').set('Content-Disposition', `attachment; filename="headroom-${Date.now()}.heapsnapshot"`).send(snapshot);
    } catch (err) {
      next(err);
    }
  });
}

async function cpuProfile(ms: number, sleep: (ms: number) => Promise<void>): Promise<string> {
  const session = new Session();
  session.connect();
  try {
    await session.post('Profiler.enable');
    await session.post('Profiler.start');
    await sleep(ms);
    const { profile } = await session.post('Profiler.stop');
    return JSON.stringify(profile);
  } finally {
    session.disconnect();
  }
}

async function heapSnapshot(): Promise<string> {
  const session = new Session();
  session.connect();
  const chunks: string[] = [];
  session.on('HeapProfiler.addHeapSnapshotChunk', (m) => { chunks.push(m.params.chunk); });
  try {
    await session.post('HeapProfiler.takeHeapSnapshot', { reportProgress: false });
    return chunks.join('');
  } finally {
    session.disconnect();
  }
}
