import type { DraTable, PodDevices } from '../scheduling/dra/pod-devices.js';
import type { Resources } from '../scheduling/resources.js';
import type { Bin } from './bins.js';
import type { ClassLevel, ClassState } from './class-levels.js';
import { deviceAllowance, takeDevices } from './devices.js';

/**
 * Pods that share DRA claims, as units (issue 27). A shared claim's devices are
 * allocated on one node, so every pod naming it runs there; pods naming several
 * claims join those claims' pods (transitively) into one unit. Placing pods one
 * class at a time, the first pod of a unit used to open or fill a node its other pods
 * then found full. Instead, the first pod of a unit goes only where the whole unit fits
 * (its pods' summed requests, its own devices, each shared claim's devices once), and
 * the room of the unit's pods not placed yet is held on that node (its home) until they
 * are placed or reported unschedulable. A unit that fits no node or group as a whole
 * is placed pod by pod as before (the pods that fit its node run, the rest are held).
 */
export interface ClaimUnit {
  index: number;
  /** The shared claims and their devices, each once. */
  claims: Array<{ claim: string; devices: Record<string, number> }>;
  /** Indices of the classes whose pods name the unit's claims. */
  classes: number[];
  /** Where the unit's first pod went: every other pod of the unit may join only it. */
  home?: Bin;
  /** Per class: its pods whose room is held on the home node, and the devices held for them. */
  held: Map<number, { pods: number; devices: Resources }>;
  /** Whether some node or group can hold the whole unit (undefined: not known yet). */
  whole?: boolean;
  /** The unit's summed requests and devices for its remaining pods (dropped when a count changes). */
  need?: { requests: Resources; devices: PodDevices };
}

/** What the units need of the packing state. */
export interface UnitView {
  readonly classes: readonly ClassState[];
  readonly existingBins: readonly Bin[];
  readonly groupCount: number;
  groupCapacity(gi: number): Resources;
  groupFeasible(cl: ClassLevel, gi: number): boolean;
  binFeasible(cl: ClassLevel, bin: Bin): boolean;
}

const lastLevel = (cs: ClassState) => cs.levels[cs.levels.length - 1]!;

export class ClaimUnits {
  readonly units: ClaimUnit[] = [];
  /** Per class: the index of its unit, -1 for none. */
  private readonly unitOfClass: Int32Array;
  /** Requests held on new nodes for pods not placed yet (room that new nodes opened cannot give to others). */
  readonly heldOnNew: Resources = {};
  /** Homes holding room, with the number of classes they hold it for. */
  private readonly holding = new Map<Bin, number>();

  constructor(private readonly view: UnitView, private readonly table: DraTable | undefined) {
    const classes = view.classes;
    this.unitOfClass = new Int32Array(classes.length).fill(-1);
    // Union-find over the claims named by the classes' pods.
    const parent = new Map<string, string>();
    const find = (c: string): string => {
      let r = c;
      while (parent.get(r) !== r) r = parent.get(r)!;
      while (parent.get(c) !== r) { const next = parent.get(c)!; parent.set(c, r); c = next; }
      return r;
    };
    for (const cs of classes) {
      const shared = cs.cls.proto.devices?.shared ?? [];
      for (const s of shared) if (!parent.has(s.claim)) parent.set(s.claim, s.claim);
      for (let i = 1; i < shared.length; i++) {
        const a = find(shared[0]!.claim);
        const b = find(shared[i]!.claim);
        if (a !== b) parent.set(b, a);
      }
    }
    const byRoot = new Map<string, ClaimUnit>();
    const seen = new Set<string>();
    for (const cs of classes) {
      const shared = cs.cls.proto.devices?.shared ?? [];
      if (shared.length === 0) continue;
      const root = find(shared[0]!.claim);
      let u = byRoot.get(root);
      if (!u) {
        u = { index: this.units.length, claims: [], classes: [], held: new Map() };
        byRoot.set(root, u);
        this.units.push(u);
      }
      for (const s of shared) if (!seen.has(s.claim)) { seen.add(s.claim); u.claims.push(s); }
      u.classes.push(cs.cls.index);
      this.unitOfClass[cs.cls.index] = u.index;
    }
  }

  get empty(): boolean {
    return this.units.length === 0;
  }

  /** The class's unit when it is placed as one (undefined: the class has no shared claim, or its unit fits nowhere whole). */
  unitOf(ci: number): ClaimUnit | undefined {
    const i = this.unitOfClass[ci]!;
    if (i < 0) return undefined;
    const u = this.units[i]!;
    u.whole ??= this.fitsSomewhere(u);
    return u.whole ? u : undefined;
  }

  /** Whether the bin holds room for pods of a unit not placed yet (it is not full for them). */
  holds(bin: Bin): boolean {
    return this.holding.has(bin);
  }

  /** Pods of the class whose room is held on its unit's home node. */
  heldPods(u: ClaimUnit, ci: number): number {
    return u.held.get(ci)?.pods ?? 0;
  }

  /**
   * Whether the whole unit, every pod not placed yet, fits `free` (with the shared
   * claims in `placed` already there) and may run where `feasible` says.
   */
  fits(u: ClaimUnit, free: Resources, placed: ReadonlySet<string> | undefined, feasible: (cl: ClassLevel) => boolean): boolean {
    const need = this.needOf(u);
    for (const ci of u.classes) {
      const cs = this.view.classes[ci]!;
      if (cs.remaining > 0 && !feasible(lastLevel(cs))) return false;
    }
    for (const k in need.requests) if (need.requests[k]! > (free[k] ?? 0)) return false;
    return deviceAllowance(need.devices, free, this.table, placed, 1) >= 1;
  }

  /**
   * Before `n` pods of the class are placed on the bin: when it is the unit's home, what
   * is held for the class is given back (the pods take it now). Returns the pods it held.
   */
  beforePlace(u: ClaimUnit, bin: Bin, ci: number): number {
    if (u.home !== bin) return 0;
    const pods = this.heldPods(u, ci);
    if (pods > 0) this.unhold(u, ci);
    return pods;
  }

  /**
   * After `n` pods of the class were placed on the bin (`held`: what beforePlace gave back).
   * The unit's first pods make the bin its home: the claims' devices are taken (its own
   * pods took theirs) and the room of every pod of the unit not placed yet is held there.
   */
  afterPlace(u: ClaimUnit, bin: Bin, ci: number, n: number, held: number): void {
    if (u.home === undefined) {
      u.home = bin;
      const claims = (bin.claims ??= new Set());
      const rest = u.claims.filter((c) => !claims.has(c.claim));
      const dra: PodDevices = { own: {}, shared: rest, pinned: [] };
      if (rest.length && deviceAllowance(dra, bin.free, this.table, claims, 1) >= 1) takeDevices(dra, 1, bin.free, bin.existing ? undefined : bin.used, this.table, claims);
      for (const c of u.classes) {
        const pods = this.view.classes[c]!.remaining;
        if (pods > 0) this.hold(u, c, pods);
      }
    } else if (u.home === bin && held > n) {
      this.hold(u, ci, held - n);
    }
  }

  /** `count` pods of the class are reported unschedulable: what their home held for them is given back. */
  givenUp(ci: number, count: number): void {
    const i = this.unitOfClass[ci]!;
    if (i < 0) return;
    const u = this.units[i]!;
    u.need = undefined;
    const h = u.held.get(ci);
    if (!h) return;
    this.unhold(u, ci);
    if (h.pods > count) this.hold(u, ci, h.pods - count);
  }

  /** f() with the room the home holds for the class counted as free (how many of its pods fit there). */
  withHeldFree<T>(u: ClaimUnit, ci: number, f: () => T): T {
    const pods = this.heldPods(u, ci);
    if (pods === 0) return f();
    this.unhold(u, ci);
    try {
      return f();
    } finally {
      this.hold(u, ci, pods);
    }
  }

  /**
   * Holds room for `pods` pods of the class on the unit's home: their requests, and their
   * own devices where those still fit (a greedy device assignment taken in parts may not
   * find what one taken at once would; the pods then take theirs when placed).
   */
  private hold(u: ClaimUnit, ci: number, pods: number): void {
    const bin = u.home!;
    const cls = this.view.classes[ci]!.cls;
    for (let i = 0; i < cls.reqKeys.length; i++) {
      const k = cls.reqKeys[i]!;
      const v = cls.reqVals[i]! * pods;
      bin.free[k] = (bin.free[k] ?? 0) - v;
      if (!bin.existing) {
        bin.used[k] = (bin.used[k] ?? 0) + v;
        this.heldOnNew[k] = (this.heldOnNew[k] ?? 0) + v;
      }
    }
    const devices: Resources = {};
    const own = cls.proto.devices?.own;
    if (own && Object.keys(own).length) {
      const dra: PodDevices = { own, shared: [], pinned: [] };
      if (deviceAllowance(dra, bin.free, this.table, undefined, pods) >= pods) {
        const before = { ...bin.free };
        takeDevices(dra, pods, bin.free, bin.existing ? undefined : bin.used, this.table, new Set());
        for (const k in before) if (bin.free[k] !== before[k]) devices[k] = before[k]! - bin.free[k]!;
      }
    }
    u.held.set(ci, { pods, devices });
    this.holding.set(bin, (this.holding.get(bin) ?? 0) + 1);
  }

  private unhold(u: ClaimUnit, ci: number): void {
    const h = u.held.get(ci)!;
    u.held.delete(ci);
    const bin = u.home!;
    const left = this.holding.get(bin)! - 1;
    if (left) this.holding.set(bin, left);
    else this.holding.delete(bin);
    const cls = this.view.classes[ci]!.cls;
    for (let i = 0; i < cls.reqKeys.length; i++) {
      const k = cls.reqKeys[i]!;
      const v = cls.reqVals[i]! * h.pods;
      bin.free[k] = bin.free[k]! + v;
      if (!bin.existing) {
        bin.used[k] = bin.used[k]! - v;
        this.heldOnNew[k] = this.heldOnNew[k]! - v;
      }
    }
    for (const k in h.devices) {
      bin.free[k] = (bin.free[k] ?? 0) + h.devices[k]!;
      if (!bin.existing) bin.used[k] = (bin.used[k] ?? 0) - h.devices[k]!;
    }
  }

  private needOf(u: ClaimUnit): { requests: Resources; devices: PodDevices } {
    if (u.need) return u.need;
    const requests: Resources = {};
    const own: Record<string, number> = {};
    for (const ci of u.classes) {
      const cs = this.view.classes[ci]!;
      if (cs.remaining <= 0) continue;
      const cls = cs.cls;
      for (let i = 0; i < cls.reqKeys.length; i++) requests[cls.reqKeys[i]!] = (requests[cls.reqKeys[i]!] ?? 0) + cls.reqVals[i]! * cs.remaining;
      const o = cls.proto.devices?.own ?? {};
      for (const s in o) own[s] = (own[s] ?? 0) + o[s]! * cs.remaining;
    }
    u.need = { requests, devices: { own, shared: u.claims, pinned: [] } };
    return u.need;
  }

  /** Whether a new node of some group, or some existing node's free room now, holds the whole unit. */
  private fitsSomewhere(u: ClaimUnit): boolean {
    const v = this.view;
    for (let gi = 0; gi < v.groupCount; gi++) {
      if (this.fits(u, v.groupCapacity(gi), undefined, (cl) => v.groupFeasible(cl, gi))) return true;
    }
    for (const bin of v.existingBins) {
      if (this.fits(u, bin.free, bin.claims, (cl) => v.binFeasible(cl, bin))) return true;
    }
    return false;
  }
}
