/**
 * A benchmarked process's resident memory and CPU time, read from /proc (Linux), for
 * the benchmarks that run the controller as a real process (scale.ts, fleet.ts).
 */
import { readFileSync } from 'node:fs';

/** VmRSS of a process, MB (NaN when /proc has no such line). */
export function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

/** User + system CPU seconds of a process so far (/proc/<pid>/stat, clock ticks of 1/100 s). */
export function cpuSeconds(pid: number): number {
  return statCpuSeconds(readFileSync(`/proc/${pid}/stat`, 'utf8'));
}

/** User + system CPU seconds from a /proc stat line (a process's or a thread's); the name in parentheses may hold spaces. */
export function statCpuSeconds(stat: string): number {
  const fields = stat.slice(stat.lastIndexOf(') ') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}
