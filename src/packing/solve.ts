import type { ClusterSnapshot } from '../cluster/snapshot.js';
import { CPU, MEMORY } from '../scheduling/resources.js';
import { explainUnschedulable, groupReason } from './explain.js';
import { type Bin, type ClassLevel, type ClassState, PackingState } from './packing-state.js';
import type { Plan } from './plan.js';

export interface SolveOptions {
  /** Skip the "preferences as required" rungs: place every pod on its hard constraints only. */
  ignorePreferences?: boolean;
}

/** The signature both packers share, so callers (simulator, benchmark) can swap them. */
export type Solver = (snapshot: ClusterSnapshot, options?: SolveOptions) => Plan;

const EPS = 1e-9;

/**
 * Headroom's packer (ADR 0030). Pure and deterministic.
 *
 * Classes of identical pods are placed largest first, each on: existing and
 * in-flight nodes (free), then the new nodes this solve already opened, then new
 * nodes. A new node is chosen for the cost of the demand it can carry: its price
 * over the share of the remaining demand "slice" it covers, where a slice is the
 * remaining demand divided by the nodes that hostname anti-affinity / spread force
 * anyway. Each new node takes a proportional share of every class first (so CPU
 * and memory fill together), then whatever still fits; finally each new node is
 * right-sized to the cheapest group of its topology class that holds its pods.
 * Preferences are honoured where they can be, then relaxed rung by rung.
 */
export function solve(snapshot: ClusterSnapshot, options: SolveOptions = {}): Plan {
  const st = new PackingState(snapshot);
  const packer = new CostAwarePacker(st);
  for (const ci of classOrder(st)) {
    const cs = st.classes[ci]!;
    const levels = options.ignorePreferences ? cs.levels.slice(-1) : cs.levels;
    for (const cl of levels) {
      if (cs.remaining === 0) break;
      packer.placeClass(cs, cl);
    }
    if (cs.remaining > 0) st.markUnschedulable(cs, explainUnschedulable(st, levels[levels.length - 1]!));
  }
  st.rightSize();
  return st.toPlan();
}

/** Largest first by dominant share of the total demand; index breaks ties (deterministic). */
export function classOrder(st: PackingState): number[] {
  const r = st.remainingDemand;
  const cpu = Math.max(1, r[CPU] ?? 0);
  const mem = Math.max(1, r[MEMORY] ?? 0);
  const size = st.classes.map((cs) => Math.max((cs.cls.req[CPU] ?? 0) / cpu, (cs.cls.req[MEMORY] ?? 0) / mem));
  return st.classes.map((_, i) => i).sort((a, b) => size[b]! - size[a]! || a - b);
}

class CostAwarePacker {
  private readonly openExisting: Bin[];
  private openNew: Bin[] = [];
  private cursor = 0;
  /** Remaining pods of the class when it reached the new nodes (the base of its per-node quota). */
  private k0 = 0;
  private readonly minCpu: number;
  private readonly minMem: number;

  constructor(private readonly st: PackingState) {
    this.openExisting = st.existingBins.filter((b) => !st.binUnschedulable(b));
    let minCpu = Infinity;
    let minMem = Infinity;
    for (const cs of st.classes) {
      minCpu = Math.min(minCpu, cs.cls.req[CPU] ?? 0);
      minMem = Math.min(minMem, cs.cls.req[MEMORY] ?? 0);
    }
    this.minCpu = minCpu;
    this.minMem = minMem;
  }

  private full(b: Bin): boolean {
    return (b.free.pods ?? 0) < 1 || (b.free[CPU] ?? 0) < this.minCpu || (b.free[MEMORY] ?? 0) < this.minMem;
  }

  placeClass(cs: ClassState, cl: ClassLevel): void {
    this.laps(cs, cl, this.openExisting, false);
    if (cs.remaining === 0) return;
    this.k0 = cs.remaining;
    this.laps(cs, cl, this.openNew, true);
    if (cs.remaining > 0) this.laps(cs, cl, this.openNew, false);
    const tried = new Set<number>();
    while (cs.remaining > 0) {
      const gi = this.chooseGroup(cl, tried);
      if (gi < 0) break;
      const bin = this.st.openBin(gi);
      bin.share = this.share(gi);
      const n = Math.min(this.st.allowance(cl, bin), cs.remaining, this.quota(bin));
      if (n <= 0) {
        // The group looked right but refuses (e.g. spread eligibility differs inside the class): do not retry it.
        tried.add(gi);
        this.st.releaseEmpty(bin);
        continue;
      }
      this.st.place(cl, bin, n);
      this.openNew.push(bin);
      if (cs.remaining > 0 && cl.spreads.length) this.laps(cs, cl, this.openNew, false);
    }
    this.compact();
  }

  private quota(bin: Bin): number {
    return Math.max(1, Math.ceil(this.k0 * bin.share - EPS));
  }

  /** The share of the remaining demand a node of the group can carry. */
  private share(gi: number): number {
    const cap = this.st.groups[gi]!.capacity;
    let s = 1;
    for (const k in this.st.remainingDemand) {
      const d = this.st.remainingDemand[k]!;
      if (d <= 0) continue;
      const f = (cap[k] ?? 0) / d;
      if (f < s) s = f;
    }
    return s;
  }

  /**
   * Passes over the bins, placing as many as each allows (up to the class's quota
   * per bin when `quota`); more passes only help spread constraints, whose
   * minimum moves as other domains fill.
   */
  private laps(cs: ClassState, cl: ClassLevel, bins: Bin[], quota: boolean): void {
    const st = this.st;
    const ci = cs.cls.index;
    for (let lap = 0; cs.remaining > 0; lap++) {
      let progress = false;
      const len = bins.length;
      const start = quota ? this.cursor % Math.max(1, len) : 0;
      for (let k = 0; k < len && cs.remaining > 0; k++) {
        const idx = (start + k) % len;
        const bin = bins[idx]!;
        let n = st.allowance(cl, bin);
        if (n <= 0) continue;
        if (quota) {
          const q = this.quota(bin) - (bin.lastClass === ci ? bin.lastClassCount : 0);
          if (q < n) n = q;
          if (n <= 0) continue;
        }
        if (n > cs.remaining) n = cs.remaining;
        st.place(cl, bin, n);
        progress = true;
        if (quota) this.cursor = idx + 1;
      }
      if (!progress || cl.spreads.length === 0) break;
    }
  }

  private compact(): void {
    if (this.openNew.length > 64 && this.openNew.some((b) => this.full(b))) this.openNew = this.openNew.filter((b) => !this.full(b));
  }

  /**
   * The group for the next new node: NodePool weight first, then the least price
   * per slice of remaining demand covered; ties go to larger coverage (fewer
   * nodes), then lower price (less stranded), then the topology class with fewer
   * new nodes (zones fill evenly), then snapshot order.
   */
  private chooseGroup(cl: ClassLevel, tried: Set<number>): number {
    const st = this.st;
    const R = st.remainingDemand;
    let forced = 1;
    for (const e of st.hostnameDemand.values()) {
      const n = Math.ceil(Math.max(0, e.remaining) / e.cap);
      if (n > forced) forced = n;
    }
    const keys: string[] = [];
    const slice: number[] = [];
    for (const k in R) if (R[k]! > 0) { keys.push(k); slice.push(R[k]! / forced); }

    let best = -1;
    let bw = -Infinity; let bs = Infinity; let bu = -Infinity; let bp = Infinity; let bt = Infinity;
    for (let t = 0; t < st.tclasses.length; t++) {
      const members = st.tclasses[t]!;
      // Topology constraints depend only on the topology class: check them once per class.
      let dynOk: boolean | undefined;
      for (const gi of members) {
        if (tried.has(gi) || !st.canOpen(gi) || !st.groupFeasible(cl, gi)) continue;
        if (dynOk === undefined) dynOk = groupReason(st, cl, gi) === undefined;
        if (!dynOk) break;
        const g = st.groups[gi]!;
        const cap = g.capacity;
        let u = 1;
        for (let i = 0; i < keys.length; i++) {
          const f = (cap[keys[i]!] ?? 0) / slice[i]!;
          if (f < u) u = f;
        }
        if (u <= 0) continue;
        const w = g.group.weight;
        const price = g.group.pricePerHour;
        const s = price / u;
        const nt = st.newBinsPerTclass[t]!;
        let better: boolean;
        if (w !== bw) better = w > bw;
        else if (Math.abs(s - bs) > EPS * Math.max(1, bs)) better = s < bs;
        else if (Math.abs(u - bu) > EPS) better = u > bu;
        else if (price !== bp) better = price < bp;
        else better = nt < bt;
        if (better) { best = gi; bw = w; bs = s; bu = u; bp = price; bt = nt; }
      }
    }
    return best;
  }
}
