import { CPU, MEMORY } from '../scheduling/resources.js';
import type { Bin } from './bins.js';
import type { ClassLevel } from './class-levels.js';
import { explainUnschedulable, groupReason } from './explain.js';
import { PackingState } from './packing-state.js';
import { toPlan } from './to-plan.js';
import type { Plan } from './plan.js';
import { type SolveOptions, emptyPlan } from './solve-options.js';
import type { SolverSnapshot } from './solver-snapshot.js';

/** A new node being filled: it may still become any of its candidate groups. */
interface Claim {
  bin: Bin;
  /** Groups (cheapest first) that can still hold everything placed so far. */
  candidates: number[];
  maxCpu: number;
  maxMem: number;
}

/**
 * The first-fit-decreasing baseline, packing the way Karpenter's scheduler does
 * (ADR 0031): pods one by one, sorted by CPU then memory, descending; each goes to
 * the first existing node that fits, else the first open claim that fits, else a
 * new claim. A claim starts with every group that can run the pod and narrows as
 * pods are added; when done it becomes the cheapest group that holds its pods.
 * It honours the same constraints as `solve` (shared PackingState), so the only
 * difference the benchmark measures is the packing strategy.
 * Simplification: a claim fixes its topology class (zone, ...) when it is opened.
 */
export function ffd(snapshot: SolverSnapshot, options: SolveOptions = {}): Plan {
  if (snapshot.pendingPods.length === 0) return emptyPlan();
  const st = new PackingState(snapshot);
  const order: number[] = [];
  const podClass: number[] = [];
  for (const cs of st.classes) for (let i = 0; i < cs.cls.pods.length; i++) { podClass.push(cs.cls.index); order.push(order.length); }
  const cpu = (i: number) => st.classes[podClass[i]!]!.cls.req[CPU] ?? 0;
  const mem = (i: number) => st.classes[podClass[i]!]!.cls.req[MEMORY] ?? 0;
  order.sort((a, b) => cpu(b) - cpu(a) || mem(b) - mem(a) || podClass[a]! - podClass[b]! || a - b);

  const existing = st.existingBins.filter((b) => !st.binUnschedulable(b));
  const claims: Claim[] = [];
  const empty = { used: {} } as Bin;

  const tryClaim = (cl: ClassLevel, c: Claim): boolean => {
    // A pod whose claims' other pods are placed goes only to their node, where room is held for it.
    const home = st.unitHome(cl);
    if (home && home !== c.bin) return false;
    if (home && st.heldFor(cl) > 0) {
      if (st.allowance(cl, c.bin) < 1) return false;
      st.place(cl, c.bin, 1);
      return true;
    }
    const req = cl.cls.req;
    const used = c.bin.used;
    if ((used[CPU] ?? 0) + (req[CPU] ?? 0) > c.maxCpu || (used[MEMORY] ?? 0) + (req[MEMORY] ?? 0) > c.maxMem) return false;
    if (st.dynamicAllowance(cl, c.bin) < 1) return false;
    const next = c.candidates.filter((gi) => st.groupFeasible(cl, gi) && fitsAdded(st.groups[gi]!.capacity, used, cl.cls.reqKeys, cl.cls.reqVals)
      && st.devicesFitOn(cl, c.bin, gi) && st.unitFitsOn(cl, c.bin, gi));
    if (next.length === 0) return false;
    c.candidates = next;
    if (!next.includes(c.bin.gi)) {
      const to = next.find((gi) => st.canSwitch(c.bin, gi));
      if (to === undefined) return false;
      st.regroup(c.bin, to);
    }
    st.place(cl, c.bin, 1);
    recomputeMax(st, c);
    return true;
  };

  const newClaim = (cl: ClassLevel): boolean => {
    for (let t = 0; t < st.tclasses.length; t++) {
      const candidates = st.tclasses[t]!.filter((gi) => st.canOpen(gi) && st.groupFeasible(cl, gi) && st.unitFitsOn(cl, empty, gi));
      if (candidates.length === 0) continue;
      if (groupReason(st, cl, candidates[0]!) !== undefined) continue;
      const claim: Claim = { bin: st.openBin(candidates[0]!), candidates, maxCpu: 0, maxMem: 0 };
      recomputeMax(st, claim);
      if (st.dynamicAllowance(cl, claim.bin) < 1) { st.releaseEmpty(claim.bin); continue; }
      st.place(cl, claim.bin, 1);
      claims.push(claim);
      return true;
    }
    return false;
  };

  const levelsOf = (p: number) => {
    const cs = st.classes[podClass[p]!]!;
    return options.ignorePreferences ? cs.levels.slice(-1) : cs.levels;
  };
  const placeOne = (p: number): boolean => {
    for (const cl of levelsOf(p)) {
      for (const bin of existing) if (st.allowance(cl, bin) >= 1) { st.place(cl, bin, 1); return true; }
      for (const c of claims) if (tryClaim(cl, c)) return true;
      if (newClaim(cl)) return true;
    }
    return false;
  };
  // Pods that fail go back in the queue while others make progress, as Karpenter requeues them.
  let queue = order;
  while (queue.length) {
    const failed = queue.filter((p) => !placeOne(p));
    if (failed.length === queue.length) {
      for (const p of failed) {
        const levels = levelsOf(p);
        st.markUnschedulable(st.classes[podClass[p]!]!, explainUnschedulable(st, levels[levels.length - 1]!), 1);
      }
      break;
    }
    queue = failed;
  }
  st.rightSize();
  return toPlan(st);
}

function fitsAdded(cap: Record<string, number>, used: Record<string, number>, keys: string[], vals: number[]): boolean {
  for (let i = 0; i < keys.length; i++) if ((used[keys[i]!] ?? 0) + vals[i]! > (cap[keys[i]!] ?? 0)) return false;
  return true;
}

function recomputeMax(st: PackingState, c: Claim): void {
  let cpu = 0;
  let mem = 0;
  for (const gi of c.candidates) {
    const cap = st.groups[gi]!.capacity;
    if ((cap[CPU] ?? 0) > cpu) cpu = cap[CPU] ?? 0;
    if ((cap[MEMORY] ?? 0) > mem) mem = cap[MEMORY] ?? 0;
  }
  c.maxCpu = cpu;
  c.maxMem = mem;
}
