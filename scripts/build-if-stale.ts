/**
 * `npm start`'s build: runs `tsc -p tsconfig.build.json` unless dist is newer than every
 * input, as make would. Why: an incremental tsc that finds nothing to do still takes
 * 1.5-2 s to load itself and check, which is most of `npm start`'s time outside the
 * simulation. Inputs are the sources tsconfig.build.json includes (their folders too, so
 * a deleted or renamed file counts), the tsconfigs and package-lock.json (types).
 * `npm run build` still always runs tsc.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync, utimesSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

const STAMP = 'dist/.tsbuildinfo';
const SOURCE_DIRS = ['src', 'workers', 'certs'];
const FILES = ['tsconfig.json', 'tsconfig.build.json', 'package-lock.json'];

function newestUnder(dir: string): number {
  let newest = statSync(dir).mtimeMs;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    newest = Math.max(newest, e.isDirectory() ? newestUnder(p) : statSync(p).mtimeMs);
  }
  return newest;
}

function stampMs(): number | undefined {
  try {
    return statSync(STAMP).mtimeMs;
  } catch {
    return undefined;
  }
}

const stamp = stampMs();
const newest = Math.max(...SOURCE_DIRS.map(newestUnder), ...FILES.map((f) => statSync(f).mtimeMs));
if (stamp === undefined || newest >= stamp) {
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const r = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { stdio: 'inherit' });
  process.exitCode = r.status ?? 1;
  // tsc leaves its build info alone when nothing changed (a touched file): mark dist current.
  if (r.status === 0) {
    const now = new Date();
    utimesSync(STAMP, now, now);
  }
}
