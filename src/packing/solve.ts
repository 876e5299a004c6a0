import { CPU, MEMORY, addInto } from '../scheduling/resources.js';
import { BinList } from './bin-list.js';
import type { Bin } from './bins.js';
import type { ClassLevel, ClassState } from './class-levels.js';
import { explainUnschedulable, groupReason } from './explain.js';
import { ffd } from './ffd.js';
import { DevicePrice } from './device-price.js';
import { PackingState } from './packing-state.js';
import { toPlan } from './to-plan.js';
import type { Plan } from './plan.js';
import { type SolveOptions, betterPlan, compareBoot, emptyPlan, newNodeCount } from './solve-options.js';
import type { SolverSnapshot } from './solver-snapshot.js';

export type { SolveOptions, Solver } from './solve-options.js';

const EPS = 1e-9;
/** Inputs this small also run the FFD baseline (a few milliseconds) and keep the better plan. */
const FALLBACK_SMALL = 200;
/** Up to this many pods, leftover pods that could run also trigger the FFD comparison. */
const FALLBACK_UNDER_PRESSURE = 5000;
/** Passes over the classes that still have pods to place (bounded: each pass is O(classes x nodes)). */
const MAX_ROUNDS = 4;

/**
 * Headroom's packer (ADR 0030). Pure and deterministic.
 *
 * Classes of identical pods are placed (by priority, pods that force nodes of
 * their own first, then largest first) on: existing and in-flight nodes (free),
 * then the new nodes this solve already opened, then new nodes. A new node is
 * chosen for the cost of the demand it can carry: its price over the share of the
 * remaining demand "slice" it covers, where a slice is the remaining demand that
 * the room already opened cannot hold, divided by the nodes that hostname
 * anti-affinity / spread force anyway. Each new node takes a proportional share of every class first (so CPU
 * and memory fill together), then whatever still fits; finally each new node is
 * right-sized to the cheapest group of its topology class that holds its pods.
 * Preferences are honoured where they can be, then relaxed rung by rung.
 * Pods that claim DRA devices are weighed by what their devices cost instead (ADR 0146,
 * device-price.ts): ordered dearest first, each new node chosen for its price per pod of
 * theirs it holds and filled with them.
 */
export function solve(snapshot: SolverSnapshot, options: SolveOptions = {}): Plan {
  if (snapshot.pendingPods.length === 0) return emptyPlan();
  const { plan, infeasible } = costAware(snapshot, options);
  // A safety net, cheap where it runs: on small inputs, and when pods that could run
  // are left over (max sizes or limits bind), the FFD baseline is tried as well and
  // the better plan kept, so Headroom never places fewer pods, or pays more, there.
  const pressure = plan.unschedulable.length > infeasible && snapshot.pendingPods.length <= FALLBACK_UNDER_PRESSURE;
  // Every pod on nodes that exist: no plan can place more, add less or boot sooner
  // (betterPlan), so the baseline is not run (most consolidation what-ifs end here).
  const unbeatable = plan.unschedulable.length === 0 && newNodeCount(plan) === 0;
  if (!unbeatable && (pressure || snapshot.pendingPods.length <= FALLBACK_SMALL)) {
    const base = ffd(snapshot, options);
    if (betterPlan(base, plan, snapshot.groups)) return base;
  }
  return plan;
}

function costAware(snapshot: SolverSnapshot, options: SolveOptions): { plan: Plan; infeasible: number } {
  const st = new PackingState(snapshot);
  const packer = new CostAwarePacker(st);
  const levelsOf = (cs: ClassState) => (options.ignorePreferences ? cs.levels.slice(-1) : cs.levels);
  // Classes that could not be placed are retried while others make progress, as
  // Karpenter requeues pods: pod affinity to a pod that is pending too is met once
  // that pod has been placed.
  // Pods no node and no group could ever run are reported now, so they do not
  // inflate the demand that new nodes are sized and shared out for.
  let infeasible = 0;
  let pending = classOrder(st).filter((ci) => {
    const cs = st.classes[ci]!;
    const levels = levelsOf(cs);
    const last = levels[levels.length - 1]!;
    if (st.groups.some((g) => st.groupFeasible(last, g.index)) || st.existingBins.some((b) => st.existingFeasible(last, b))) return true;
    infeasible += cs.remaining;
    st.markUnschedulable(cs, explainUnschedulable(st, last));
    return false;
  });
  // Free room on existing and in-flight nodes goes to the largest pods first (as
  // FFD gives it), at their most preferred rung; the rest goes through the loop below.
  if (st.existingBins.length) {
    const eligible = new Set(pending);
    for (const ci of classOrder(st, false)) {
      if (!eligible.has(ci)) continue;
      const cs = st.classes[ci]!;
      packer.placeExisting(cs, levelsOf(cs)[0]!);
    }
  }
  for (let round = 1; pending.length; round++) {
    const failed: number[] = [];
    let progress = false;
    for (const ci of pending) {
      const cs = st.classes[ci]!;
      const before = cs.remaining;
      for (const cl of levelsOf(cs)) {
        if (cs.remaining === 0) break;
        packer.placeClass(cs, cl);
      }
      if (cs.remaining < before) progress = true;
      if (cs.remaining > 0) failed.push(ci);
    }
    if (!progress || round === MAX_ROUNDS) {
      for (const ci of failed) {
        const cs = st.classes[ci]!;
        const levels = levelsOf(cs);
        st.markUnschedulable(cs, explainUnschedulable(st, levels[levels.length - 1]!));
      }
      break;
    }
    pending = failed;
  }
  st.rightSize();
  return { plan: toPlan(st), infeasible };
}

/**
 * Higher priority first (when capacity or limits run short, they get it, as
 * kube-scheduler would give it to them); then pods that force nodes of their own
 * (hostname anti-affinity or spread among themselves), so those nodes exist before
 * everything else is shared out over them; then largest first by dominant share
 * of the total demand; index breaks ties (deterministic).
 */
export function classOrder(st: PackingState, forcingFirst = true): number[] {
  const r = st.remainingDemand;
  const cpu = Math.max(1, r[CPU] ?? 0);
  const mem = Math.max(1, r[MEMORY] ?? 0);
  const size = st.classes.map((cs) => Math.max((cs.cls.req[CPU] ?? 0) / cpu, (cs.cls.req[MEMORY] ?? 0) / mem));
  const prio = st.classes.map((cs) => cs.cls.proto.priority);
  const forcing = st.classes.map((cs) => (forcingFirst && cs.hostnameKey ? 1 : 0));
  // Pods claiming DRA devices by what their devices cost where they cost least, dearest
  // first (ADR 0146): they get the free devices of existing nodes, and open their nodes,
  // before pods that could use cheaper devices take them. 0 for every other pod.
  const device = st.classes.map((cs) => st.devicePrice.leastPerPod(cs));
  const dearer = (a: number, b: number) => (device[a]! > device[b]! ? -1 : device[a]! < device[b]! ? 1 : 0);
  return st.classes.map((_, i) => i).sort((a, b) => prio[b]! - prio[a]! || forcing[b]! - forcing[a]! || dearer(a, b) || size[b]! - size[a]! || a - b);
}

class CostAwarePacker {
  private readonly openExisting: BinList;
  private readonly openNew = new BinList();
  /**
   * Whether the open lists may hold a full node (compact() then looks). Free room only
   * shrinks as pods are placed, so a list checked and found without one stays so until
   * a placement fills one; room held for pods sharing claims changes without a placement,
   * so with such pods every compact() looks.
   */
  private mayBeFullExisting = true;
  private mayBeFullNew = false;
  /** Whether a bin the lists' copies of free room say is too small can be skipped (no held room changes them behind our back). */
  private readonly prune: boolean;
  private acc = 0;
  /** Free room on the new nodes opened so far (what they can still carry). */
  private readonly openFree: Record<string, number> = {};
  /** Remaining pods of the class when it reached the new nodes (the base of its per-node quota). */
  private k0 = 0;
  private readonly minCpu: number;
  private readonly minMem: number;
  /** Per group: the classes that can never run on it (their demand does not count in its share). */
  private readonly infeasible = new Map<number, ClassState[]>();

  constructor(private readonly st: PackingState) {
    this.openExisting = new BinList(st.existingBins.filter((b) => !st.binUnschedulable(b)));
    this.prune = st.units.empty;
    let minCpu = Infinity;
    let minMem = Infinity;
    for (const cs of st.classes) {
      minCpu = Math.min(minCpu, cs.cls.req[CPU] ?? 0);
      minMem = Math.min(minMem, cs.cls.req[MEMORY] ?? 0);
    }
    this.minCpu = minCpu;
    this.minMem = minMem;
  }

  /** Places pods and keeps the free room of new nodes current. */
  private put(cl: ClassLevel, bin: Bin, n: number): void {
    this.st.place(cl, bin, n);
    if (bin.existing) {
      this.openExisting.refresh(bin);
      if (!this.mayBeFullExisting && this.full(bin)) this.mayBeFullExisting = true;
    } else {
      addInto(this.openFree, cl.cls.req, -n);
      this.openNew.refresh(bin);
      if (!this.mayBeFullNew && this.full(bin)) this.mayBeFullNew = true;
    }
  }

  private full(b: Bin): boolean {
    if (this.st.units.holds(b)) return false;
    return (b.free.pods ?? 0) < 1 || (b.free[CPU] ?? 0) < this.minCpu || (b.free[MEMORY] ?? 0) < this.minMem;
  }

  /** Places what fits of the class on existing and in-flight nodes only. */
  placeExisting(cs: ClassState, cl: ClassLevel): void {
    const home = this.st.unitHome(cl);
    if (home) { if (home.existing) this.laps(cs, cl, new BinList([home])); return; }
    this.laps(cs, cl, this.openExisting);
    this.compact();
  }

  /**
   * A class whose pods share claims with pods already placed goes only to that node
   * (claim-units.ts); true when that is the case (and it was placed there).
   */
  private placeHome(cs: ClassState, cl: ClassLevel): boolean {
    const home = this.st.unitHome(cl);
    if (!home) return false;
    if (cs.remaining > 0) this.laps(cs, cl, new BinList([home]));
    return true;
  }

  placeClass(cs: ClassState, cl: ClassLevel): void {
    if (this.placeHome(cs, cl)) return;
    this.laps(cs, cl, this.openExisting);
    if (cs.remaining === 0 || this.placeHome(cs, cl)) { this.compact(); return; }
    this.k0 = cs.remaining;
    // Dither where each class's rounding lands, so small classes do not all pile onto the same nodes.
    this.acc = (cs.cls.index * 0.6180339887) % 1;
    // Pods claiming devices go first fit over the open new nodes (their free devices are paid for), not by share (ADR 0146).
    const dev = DevicePrice.applies(cl);
    if (!dev) this.proportional(cs, cl);
    if (this.placeHome(cs, cl)) { this.compact(); return; }
    if (cs.remaining > 0) this.laps(cs, cl, this.openNew);
    const tried = new Set<number>();
    while (cs.remaining > 0) {
      const gi = this.chooseGroup(cl, tried);
      if (gi < 0) break;
      const bin = this.st.openBin(gi);
      bin.share = this.share(gi);
      addInto(this.openFree, bin.free);
      // A node opened for pods claiming devices is filled with them (its devices are what it
      // was bought for), not given a quota of them to share with pods that could use cheaper ones.
      const n = Math.min(this.st.allowance(cl, bin), cs.remaining, dev ? cs.remaining : Math.max(1, this.quota(bin)));
      if (n <= 0) {
        // The group looked right but refuses (e.g. spread eligibility differs inside its topology class).
        tried.add(gi);
        addInto(this.openFree, bin.free, -1);
        this.st.releaseEmpty(bin);
        continue;
      }
      this.put(cl, bin, n);
      this.openNew.push(bin);
      if (this.placeHome(cs, cl)) break;
      if (cs.remaining > 0 && cl.spreads.length) this.laps(cs, cl, this.openNew);
    }
    this.compact();
  }

  /**
   * The class's proportional share of a bin: bins are opened for a share of the
   * remaining demand, and every class gets that share of its pods (rounded by
   * an accumulator so the shares add up to the class's count).
   */
  private quota(bin: Bin): number {
    const before = Math.floor(this.acc);
    this.acc += this.k0 * bin.share;
    const q = Math.floor(this.acc) - before;
    return q;
  }

  /** The share of the remaining demand a node of the group can carry. */
  private share(gi: number): number {
    const st = this.st;
    const cap = st.groups[gi]!.capacity;
    // Only the demand that could run on this group counts: pods bound for other
    // groups (taints, selectors, zones, sizes) will not fill it.
    let excluded = this.infeasible.get(gi);
    if (!excluded) {
      excluded = st.classes.filter((cs) => cs.remaining > 0 && !st.groupFeasible(cs.levels[cs.levels.length - 1]!, gi));
      this.infeasible.set(gi, excluded);
    }
    const demand: Record<string, number> = { ...st.remainingDemand };
    for (const cs of excluded) if (cs.remaining > 0) addInto(demand, cs.cls.req, -cs.remaining);
    let s = 1;
    for (const k in demand) {
      const d = demand[k]!;
      if (d <= 0 || !cap[k]) continue;
      const f = cap[k] / d;
      if (f < s) s = f;
    }
    return s;
  }

  /** One pass over the new bins, placing the class's proportional share on each. */
  private proportional(cs: ClassState, cl: ClassLevel): void {
    const st = this.st;
    const list = this.openNew;
    const share = list.share;
    const k0 = this.k0;
    // quota() inlined over the list's shares: the same sums in the same order.
    // floor(acc) only moves when acc reaches the next integer: the quota is 0 until then.
    let acc = this.acc;
    let before = Math.floor(acc);
    for (let i = 0; i < list.length && cs.remaining > 0; i++) {
      acc += k0 * share[i]!;
      if (acc < before + 1) continue;
      const q = Math.floor(acc) - before;
      before += q;
      const bin = list.at(i);
      const n = Math.min(st.allowance(cl, bin), q, cs.remaining);
      if (n > 0) this.put(cl, bin, n);
    }
    this.acc = acc;
  }

  /**
   * Passes over the bins, placing as many as each allows; more passes only help
   * spread constraints, whose minimum moves as other domains fill.
   */
  private laps(cs: ClassState, cl: ClassLevel, bins: BinList): void {
    const st = this.st;
    const prune = this.prune;
    const cls = cl.cls;
    for (let lap = 0; cs.remaining > 0; lap++) {
      let progress = false;
      const len = bins.length;
      for (let k = 0; k < len && cs.remaining > 0; k++) {
        if (prune && bins.cannotFit(k, cls)) continue;
        const bin = bins.at(k);
        let n = st.allowance(cl, bin);
        if (n <= 0) continue;
        if (n > cs.remaining) n = cs.remaining;
        this.put(cl, bin, n);
        progress = true;
      }
      if (!progress || cl.spreads.length === 0) break;
    }
  }

  /** Drops full nodes from the candidates (their scraps no longer count as room). */
  private compact(): void {
    const always = !this.prune;
    const ex = this.openExisting;
    if (ex.length > 64 && (always || this.mayBeFullExisting)) {
      if (this.hasFull(ex)) ex.retain((b, i) => !this.fullAt(ex, b, i));
      this.mayBeFullExisting = false;
    }
    const nw = this.openNew;
    if (nw.length <= 64 || !(always || this.mayBeFullNew)) return;
    this.mayBeFullNew = false;
    if (!this.hasFull(nw)) return;
    for (const b of nw.retain((x, i) => !this.fullAt(nw, x, i))) addInto(this.openFree, b.free, -1);
  }

  /** full() of the list's i-th bin, from the list's copies of free room where no held room can differ. */
  private fullAt(list: BinList, b: Bin, i: number): boolean {
    return this.prune ? list.short(i, this.minCpu, this.minMem) : this.full(b);
  }

  private hasFull(list: BinList): boolean {
    for (let i = 0; i < list.length; i++) if (this.fullAt(list, list.at(i), i)) return true;
    return false;
  }

  /**
   * The group for the next new node: NodePool weight first, then the least price
   * per slice of remaining demand covered; ties go to the group observed to boot
   * materially sooner (the pods wait less for the same price), then larger coverage
   * (fewer nodes), then lower price (less stranded), then the topology class with
   * fewer new nodes (zones fill evenly), then snapshot order.
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
    // Room already opened on new nodes carries part of the remaining demand: size the
    // next node for the rest (shared over the nodes some pods still force).
    // Room held for pods sharing claims is theirs (claim-units.ts): it carries nothing else.
    const F = this.openFree;
    const H = this.st.units.heldOnNew;
    for (const k in R) {
      if (R[k]! <= 0) continue;
      keys.push(k);
      slice.push(Math.max(R[k]! * 0.01, R[k]! - ((F[k] ?? 0) - (H[k] ?? 0))) / forced);
    }

    // Pods claiming DRA devices are weighed by price per pod of theirs a node holds (ADR 0146).
    const dev = DevicePrice.applies(cl);
    // A device class's price per pod is at least price / (the most pods any group's node holds).
    const most = dev ? st.devicePrice.maxPodsPerNode(cl) : 1;
    // Topology constraints depend only on the topology class: check them once per class.
    const dyn = new Int8Array(st.tclasses.length);
    let best = -1;
    let bw = -Infinity; let bs = Infinity; let bu = -Infinity; let bp = Infinity; let bt = Infinity;
    for (const gi of st.byWeightThenPrice) {
      const g = st.groups[gi]!;
      const w = g.group.weight;
      const price = g.group.pricePerHour;
      // score = max(price, price * slice/capacity) >= price: nothing dearer can win within a weight.
      // For a device class, price per pod >= price / most: nothing dearer than bs * most can win.
      if (best >= 0 && (w < bw || price > bs * most * (1 + EPS))) break;
      if (tried.has(gi) || !st.canOpen(gi) || !st.groupFeasible(cl, gi)) continue;
      const t = g.tclass;
      if (dyn[t] === 0) dyn[t] = groupReason(st, cl, gi) === undefined ? 1 : 2;
      if (dyn[t] !== 1) continue;
      const cap = g.capacity;
      let u = 1;
      for (let i = 0; i < keys.length; i++) {
        // A resource the group lacks (a GPU) belongs to demand that cannot go there: it does not count.
        const c = cap[keys[i]!] ?? 0;
        if (c <= 0) continue;
        const f = c / slice[i]!;
        if (f < u) u = f;
      }
      if (u <= 0) continue;
      let s = price / u;
      if (dev) {
        const k = st.devicePrice.podsPerNode(cl, gi);
        if (k <= 0) continue;
        s = price / k;
      }
      const nt = st.newBinsPerTclass[t]!;
      let better: boolean;
      if (best < 0 || w !== bw) better = best < 0 || w > bw;
      else if (Math.abs(s - bs) > EPS * Math.max(1, bs)) better = s < bs;
      else if (compareBoot(g.group.bootMs, st.groups[best]!.group.bootMs) !== 0) better = compareBoot(g.group.bootMs, st.groups[best]!.group.bootMs) < 0;
      else if (Math.abs(u - bu) > EPS) better = u > bu;
      else if (price !== bp) better = price < bp;
      else better = nt < bt;
      if (better) { best = gi; bw = w; bs = s; bu = u; bp = price; bt = nt; }
    }
    return best;
  }
}
