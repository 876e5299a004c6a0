import type { Resources } from '../scheduling/resources.js';
import type { SchedulingPod } from '../scheduling/scheduling-pod.js';

/**
 * Pods with one equivalence key (same owner template: same requests, labels and
 * constraints) form a class; the packer places a class's pods together, so most
 * work is per class rather than per pod.
 */
export interface PodClass {
  index: number;
  /** The first pod stands for the class. */
  proto: SchedulingPod;
  /** Members in input order; placements are handed out in this order. */
  pods: SchedulingPod[];
  req: Resources;
  /** Request entries with a positive value, as parallel arrays for the hot loops. */
  reqKeys: string[];
  reqVals: number[];
}

export function buildPodClasses(pods: readonly SchedulingPod[]): PodClass[] {
  const byKey = new Map<string, PodClass>();
  const out: PodClass[] = [];
  for (const pod of pods) {
    // The namespace is part of the key already; keep it explicit for foreign snapshots.
    const key = `${pod.namespace}\u0000${pod.equivalenceKey}`;
    let cls = byKey.get(key);
    if (!cls) {
      const reqKeys: string[] = [];
      const reqVals: number[] = [];
      for (const k of Object.keys(pod.requests).sort()) {
        const v = pod.requests[k]!;
        if (v > 0) { reqKeys.push(k); reqVals.push(v); }
      }
      cls = { index: out.length, proto: pod, pods: [], req: pod.requests, reqKeys, reqVals };
      byKey.set(key, cls);
      out.push(cls);
    }
    cls.pods.push(pod);
  }
  return out;
}

/** How many pods with this request fit in `free` (Infinity for an empty request). */
export function fitCount(cls: PodClass, free: Resources): number {
  let n = Infinity;
  const keys = cls.reqKeys;
  const vals = cls.reqVals;
  for (let i = 0; i < keys.length; i++) {
    const f = free[keys[i]!] ?? 0;
    const m = Math.floor(f / vals[i]!);
    if (m < n) { n = m; if (n <= 0) return 0; }
  }
  return n;
}
