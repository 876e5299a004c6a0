/**
 * Runs a benchmarked process under a real memory limit, the way a container runtime
 * does: a child memory cgroup (v1 `/sys/fs/cgroup/memory`, or v2 `/sys/fs/cgroup` with
 * the memory controller) with the limit written in, the process placed in it before it
 * execs, so Node reads the limit when it sizes its heap, as it would in the pod.
 * Reads back the peak usage, how often the limit was hit and the OOM kills. Where no
 * writable memory cgroup exists (no root, read-only /sys), `open` says why and the
 * caller runs without a limit.
 */
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface MemoryCgroupReading {
  limitBytes: number;
  /** Highest usage since the cgroup was made (v1 max_usage_in_bytes, v2 memory.peak). */
  peakBytes: number;
  /** Times usage hit the limit (v1 failcnt, v2 events "max"). */
  limitHits: number;
  /** Processes the kernel OOM-killed in the cgroup. */
  oomKills: number;
}

export interface MemoryCgroup {
  readonly path: string;
  readonly version: 1 | 2;
  /** A command line that joins the cgroup, then execs `binary args` (same pid). */
  wrap(binary: string, args: readonly string[]): { binary: string; args: string[] };
  read(): MemoryCgroupReading;
  /** Removes the cgroup (its processes must have exited). */
  remove(): void;
}

const V1_ROOT = '/sys/fs/cgroup/memory';
const V2_ROOT = '/sys/fs/cgroup';

const readNumber = (file: string): number => Number(readFileSync(file, 'utf8').trim());
const readKeyed = (file: string, key: string): number => {
  const m = new RegExp(`^${key} (\\d+)$`, 'm').exec(readFileSync(file, 'utf8'));
  return m ? Number(m[1]) : 0;
};

/** A fresh memory cgroup limited to `limitBytes`, or the reason there cannot be one here. */
export function openMemoryCgroup(name: string, limitBytes: number): MemoryCgroup | { unavailable: string } {
  const v2 = existsSync(join(V2_ROOT, 'cgroup.controllers')) && readFileSync(join(V2_ROOT, 'cgroup.controllers'), 'utf8').includes('memory');
  const root = existsSync(join(V1_ROOT, 'memory.limit_in_bytes')) ? V1_ROOT : v2 ? V2_ROOT : undefined;
  if (!root) return { unavailable: 'no memory cgroup hierarchy (neither v1 /sys/fs/cgroup/memory nor v2 with the memory controller)' };
  const version = root === V1_ROOT ? 1 : 2;
  const path = join(root, `${name}-${process.pid}`);
  try {
    mkdirSync(path);
    writeFileSync(join(path, version === 1 ? 'memory.limit_in_bytes' : 'memory.max'), String(limitBytes));
  } catch (err) {
    try {
      rmdirSync(path);
    } catch { /* never made */ }
    return { unavailable: `cannot make a memory cgroup under ${root}: ${(err as Error).message}` };
  }
  return {
    path,
    version,
    wrap: (binary, args) => ({
      binary: '/bin/sh',
      // $$ is the shell's pid, which exec hands to the binary: it starts inside the cgroup.
      args: ['-c', `echo $$ > ${join(path, 'cgroup.procs')} && exec "$0" "$@"`, binary, ...args],
    }),
    read: () => version === 1
      ? {
        limitBytes: readNumber(join(path, 'memory.limit_in_bytes')),
        peakBytes: readNumber(join(path, 'memory.max_usage_in_bytes')),
        limitHits: readNumber(join(path, 'memory.failcnt')),
        oomKills: readKeyed(join(path, 'memory.oom_control'), 'oom_kill'),
      }
      : {
        limitBytes: readNumber(join(path, 'memory.max')),
        peakBytes: existsSync(join(path, 'memory.peak')) ? readNumber(join(path, 'memory.peak')) : NaN,
        limitHits: readKeyed(join(path, 'memory.events'), 'max'),
        oomKills: readKeyed(join(path, 'memory.events'), 'oom_kill'),
      },
    remove: () => {
      try {
        rmdirSync(path);
      } catch { /* still busy: the reaper of a later run cannot know it, so say nothing */ }
    },
  };
}
