/**
 * Child processes of the test control plane, each in its own process group so that
 * one signal reaches everything it forked. Every live process group and temp dir is
 * tracked here so they are removed whatever way the test run ends:
 *  - normal teardown: `ManagedProcess.stop()` / `removeTempDir()`;
 *  - a crash, `process.exit()` (mocha --exit) or SIGINT/SIGTERM/SIGHUP: synchronous
 *    SIGKILL of every group and `rm -rf` of every dir from the handlers below;
 *  - SIGKILL of the test process itself: a tiny detached reaper (see startReaper)
 *    notices the parent is gone and does the same from a state file.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { appendFileSync, closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const liveGroups = new Set<number>();
const liveDirs = new Set<string>();
let reaper: { pid: number; stateFile: string } | undefined;

export interface ProcessExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

export interface StartOptions {
  readonly logFile: string;
  readonly env?: NodeJS.ProcessEnv;
  readonly cwd?: string;
}

/** A long-running binary, its output appended to a log file. */
export class ManagedProcess {
  readonly exited: Promise<ProcessExit>;
  private exitInfo: ProcessExit | undefined;

  private constructor(
    readonly name: string,
    readonly logFile: string,
    private readonly child: ChildProcess,
  ) {
    this.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        this.exitInfo = { code, signal };
        liveGroups.delete(this.pid);
        // The group may outlive its leader for a moment; stop() SIGKILLs it. Only then
        // is the pgid free for reuse, so the reaper forgets it in stop() / cleanupSync().
        resolve(this.exitInfo);
      });
    });
  }

  static start(name: string, binary: string, args: readonly string[], opts: StartOptions): ManagedProcess {
    installExitHandlers();
    const fd = openSync(opts.logFile, 'a');
    try {
      const child = spawn(binary, args, {
        detached: true, // own process group: kill(-pid) reaches its children too
        stdio: ['ignore', fd, fd],
        env: opts.env ?? process.env,
        cwd: opts.cwd,
      });
      if (child.pid === undefined) throw new Error(`could not start ${name} (${binary})`);
      child.on('error', () => undefined); // reported through `exited`
      const p = new ManagedProcess(name, opts.logFile, child);
      liveGroups.add(child.pid);
      recordForReaper(`pg ${child.pid}`);
      return p;
    } finally {
      closeSync(fd);
    }
  }

  get pid(): number {
    return this.child.pid!;
  }

  get running(): boolean {
    return this.exitInfo === undefined;
  }

  /** SIGTERM to the whole group, SIGKILL after `graceMs`; resolves once the process is gone. */
  async stop(graceMs = 5000): Promise<void> {
    if (!this.running) return;
    signalGroup(this.pid, 'SIGTERM');
    const timer = setTimeout(() => signalGroup(this.pid, 'SIGKILL'), graceMs);
    await this.exited;
    clearTimeout(timer);
    signalGroup(this.pid, 'SIGKILL'); // anything the leader left behind in its group
    recordForReaper(`unpg ${this.pid}`);
  }

  /** The last `lines` lines of the log, for error messages. */
  logTail(lines = 30): string {
    try {
      return readFileSync(this.logFile, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
    } catch {
      return '';
    }
  }
}

/** A fresh temp dir that is removed at teardown, or at exit if teardown never ran. */
export function makeTempDir(prefix: string): string {
  installExitHandlers();
  const dir = mkdtempSync(join(tmpdir(), prefix));
  liveDirs.add(dir);
  recordForReaper(`dir ${dir}`);
  return dir;
}

export function removeTempDir(dir: string): void {
  if (process.env.HEADROOM_KEEP_TEST_DIRS) {
    console.error(`[harness] keeping ${dir} (HEADROOM_KEEP_TEST_DIRS is set)`);
  } else {
    rmSync(dir, { recursive: true, force: true });
  }
  liveDirs.delete(dir);
  recordForReaper(`undir ${dir}`);
}

/**
 * Starts (once per test process) a detached shell that polls this process every
 * second and, once it is gone, SIGKILLs every process group and removes every dir
 * listed in its state file. Normal teardown stops it via `stopReaper()`.
 */
export function startReaper(): void {
  if (reaper) return;
  const stateDir = mkdtempSync(join(tmpdir(), 'headroom-reaper-'));
  const stateFile = join(stateDir, 'state');
  writeFileSync(stateFile, '');
  // The state file is a log: "pg N" / "unpg N" and "dir D" / "undir D"; only what is
  // still listed when the parent dies is killed or removed (a stale pgid could have
  // been reused by an unrelated process group).
  const script = [
    'parent=$1; state=$2',
    'while kill -0 "$parent" 2>/dev/null; do sleep 1; done',
    'declare -A pg=() dir=()',
    'while read -r kind val; do',
    '  case $kind in pg) pg[$val]=1;; unpg) unset "pg[$val]";; dir) dir[$val]=1;; undir) unset "dir[$val]";; esac',
    'done < "$state"',
    'for p in "${!pg[@]}"; do kill -KILL -- "-$p" 2>/dev/null; done',
    'for d in "${!dir[@]}"; do rm -rf -- "$d"; done',
    'rm -rf -- "$(dirname "$state")"',
  ].join('\n');
  const child = spawn('bash', ['-c', script, 'headroom-reaper', String(process.pid), stateFile], {
    detached: true,
    stdio: 'ignore',
  });
  child.unref();
  reaper = { pid: child.pid!, stateFile };
  for (const pg of liveGroups) recordForReaper(`pg ${pg}`);
  for (const dir of liveDirs) recordForReaper(`dir ${dir}`);
}

export function stopReaper(): void {
  if (!reaper) return;
  signalGroup(reaper.pid, 'SIGKILL');
  rmSync(join(reaper.stateFile, '..'), { recursive: true, force: true });
  reaper = undefined;
}

function recordForReaper(line: string): void {
  if (reaper) appendFileSync(reaper.stateFile, `${line}\n`);
}

function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // already gone
  }
}

/** Synchronous last-resort cleanup; safe to call more than once. */
export function cleanupSync(): void {
  for (const pg of liveGroups) signalGroup(pg, 'SIGKILL');
  liveGroups.clear();
  for (const dir of liveDirs) rmSync(dir, { recursive: true, force: true });
  liveDirs.clear();
  stopReaper();
}

let handlersInstalled = false;
function installExitHandlers(): void {
  if (handlersInstalled) return;
  handlersInstalled = true;
  process.on('exit', cleanupSync);
  const signals: Record<string, number> = { SIGINT: 2, SIGTERM: 15, SIGHUP: 1 };
  for (const [sig, num] of Object.entries(signals)) {
    const onSignal = (): void => {
      cleanupSync();
      // Only exit if nobody else (e.g. mocha) handles the signal.
      if (process.listenerCount(sig) <= 1) process.exit(128 + num);
    };
    process.on(sig, onSignal);
  }
}
