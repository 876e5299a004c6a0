import type { V1Taint } from '@kubernetes/client-node';
import { hostPortsConflict } from '../scheduling/host-ports.js';
import { nodeSelectorMatches } from '../scheduling/node-affinity.js';
import { requiredAffinityTerms, requiredAntiAffinityTerms, resolveAffinityTerm, termSelects } from '../scheduling/pod-affinity.js';
import { type RelaxationLevel, relaxationLevels } from '../scheduling/preferences.js';
import { isDeviceResource, type PodDevices } from '../scheduling/dra/pod-devices.js';
import { type Resources, addInto, subtract } from '../scheduling/resources.js';
import { HARD_TAINT_EFFECTS, formatTaint, untoleratedTaint } from '../scheduling/taints.js';
import { HOSTNAME, resolveSpread, spreadSelects } from '../scheduling/topology-spread.js';
import { volumeTopologyReason } from '../scheduling/volume-topology.js';
import type { Bin, GroupInfo } from './bins.js';
import { deviceAllowance, deviceStaticReason, needsDevices, takeDevices } from './devices.js';
import { DevicePrice } from './device-price.js';
import type { ClassLevel, ClassState } from './class-levels.js';
import { type ClaimUnit, ClaimUnits } from './claim-units.js';
import { GroupRoom } from './group-room.js';
import type { UnschedulablePod } from './plan.js';
import { type PodClass, buildPodClasses, fitCount } from './pod-classes.js';
import { rightSize } from './right-size.js';
import { nodeUse } from './node-use.js';
import { groupsByTopologyClass, topologyKeysInUse } from './topology-classes.js';
import { type OwnerCounter, type SpreadRef, Topology } from './topology.js';
import type { SolverSnapshot } from './solver-snapshot.js';

const ALL_TAINT_EFFECTS: readonly string[] = [...HARD_TAINT_EFFECTS, 'PreferNoSchedule'];
const EMPTY = new Uint8Array(0);

/**
 * The mutable state of one solve, composed of its parts: the groups by topology
 * class (topology-classes.ts), the bins (bins.ts), the
 * affinity / spread counters (Topology, which sees only a narrow view of this state),
 * group room and NodePool usage (GroupRoom) and right-sizing (right-size.ts). It
 * keeps the static feasibility caches per class level and group. Both packers (the
 * cost-aware one in solve.ts and the FFD baseline) drive it; it turns the result
 * into a Plan (to-plan.ts).
 */
export class PackingState {
  readonly groups: GroupInfo[];
  readonly tclasses: number[][];
  /** Group indices by NodePool weight (descending), then price. */
  readonly byWeightThenPrice: number[];
  readonly classes: ClassState[];
  readonly bins: Bin[] = [];
  readonly existingBins: Bin[] = [];
  readonly newBins: Bin[] = [];
  /** Nodes a group may still add: maxSize - replicas - added. */
  readonly groupRoom: Int32Array;
  readonly added: Int32Array;
  private readonly room: GroupRoom;
  private readonly topology: Topology;
  readonly newBinsPerTclass: number[];
  readonly remainingDemand: Resources = {};
  readonly hostnameDemand = new Map<string, { remaining: number; cap: number }>();
  readonly unschedulable: UnschedulablePod[] = [];

  /** Names taken, so a new bin's is unique: built on the first new bin (most what-if solves open none). */
  private nodeNames: Set<string> | undefined;
  private nextName = 0;
  /** Shared DRA claims placed so far -> the bin that holds them (their other pods may join only it). */
  private readonly sharedHome = new Map<string, Bin>();
  /** Pods sharing DRA claims, placed as units (claim-units.ts). */
  readonly units: ClaimUnits;
  /** Price per pod of device classes on each group's new nodes (device-price.ts). */
  readonly devicePrice: DevicePrice = new DevicePrice(this);
  private block = '';
  /** Whether the last refusal was the topology's (worded by it when read). */
  private blockByTopology = false;

  /** Why the last dynamic check failed, for reasons. */
  get lastBlock(): string { return this.blockByTopology ? this.topology.lastBlock : this.block; }
  set lastBlock(why: string) { this.block = why; this.blockByTopology = false; }
  /** Bumped whenever counts, bins or group room change (cache key). */
  version = 0;

  constructor(readonly snapshot: SolverSnapshot) {
    const pods = snapshot.pendingPods;
    const classes = buildPodClasses(pods);
    const preferNoScheduleMatters = snapshot.groups.some((g) => g.template.taints.some((t) => t.effect === 'PreferNoSchedule'))
      || snapshot.nodes.some((n) => n.taints.some((t) => t.effect === 'PreferNoSchedule'));
    const ladders: RelaxationLevel[][] = classes.map((c) => relaxationLevels(c.proto, preferNoScheduleMatters));

    // Topology keys in use decide which groups are interchangeable when right-sizing.
    const { keys: topoKeys, antiOwners } = topologyKeysInUse(ladders, snapshot.nodes);
    const byClass = groupsByTopologyClass(snapshot.groups, topoKeys);
    this.groups = byClass.groups;
    this.tclasses = byClass.tclasses;
    this.newBinsPerTclass = this.tclasses.map(() => 0);
    this.byWeightThenPrice = this.groups.map((g) => g.index).sort((a, b) => {
      const ga = this.groups[a]!.group;
      const gb = this.groups[b]!.group;
      return gb.weight - ga.weight || ga.pricePerHour - gb.pricePerHour || a - b;
    });
    this.room = new GroupRoom(this.groups, snapshot.limits);
    this.groupRoom = this.room.room;
    this.added = this.room.added;
    this.topology = new Topology(this);

    // Existing and in-flight nodes: real nodes first, then capacity on its way.
    const ordered = [...snapshot.nodes.filter((n) => !n.inFlight), ...snapshot.nodes.filter((n) => n.inFlight)];
    const groupById = new Map(this.groups.map((g) => [g.group.id, g]));
    for (const node of ordered) {
      const use = nodeUse(node);
      const free: Resources = { ...use.free };
      const g = node.groupId ? groupById.get(node.groupId) : undefined;
      // A placeholder for a replica without a Node yet holds no pods: its DaemonSets will.
      if (node.inFlight && node.pods.length === 0 && g) addInto(free, g.group.daemonSetOverhead, -1);
      // Every node is its own hostname domain, placeholders for in-flight replicas included.
      const labels = HOSTNAME in node.labels ? node.labels : { ...node.labels, [HOSTNAME]: node.name };
      const bin = this.makeBin(node.name, labels, node.taints, free, true);
      bin.ports = [...use.ports];
      bin.existingIndex = this.existingBins.length;
      bin.node = node;
      this.existingBins.push(bin);
    }

    // Classes, their ladders, and the shared counters their constraints read.
    this.classes = classes.map((cls, i) => {
      const levels = ladders[i]!.map((l, li, all) => this.bindLevel(cls, l, li, li === all.length - 1));
      return { cls, levels, owners: [], matchTerms: [], matchSpreads: [], ownTerms: [], remaining: cls.pods.length, unschedulable: 0, hostnameCap: Infinity };
    });
    for (const cs of this.classes) {
      for (const t of requiredAntiAffinityTerms(cs.cls.proto)) cs.ownTerms.push(this.topology.ownerCounter(resolveAffinityTerm(t, cs.cls.proto, snapshot.namespaceLabels)));
    }
    const binOfNode = antiOwners.length ? new Map(this.existingBins.map((b) => [b.node!, b])) : undefined;
    const existingOwners: Array<{ counter: OwnerCounter; bin: Bin }> = [];
    for (const { pod, node } of antiOwners) {
      const bin = binOfNode!.get(node)!;
      for (const t of requiredAntiAffinityTerms(pod)) existingOwners.push({ counter: this.topology.ownerCounter(resolveAffinityTerm(t, pod, snapshot.namespaceLabels)), bin });
    }
    const termList = this.topology.terms();
    const spreadList = this.topology.spreads();
    const ownerList = this.topology.owners();
    for (const cs of this.classes) {
      const p = cs.cls.proto;
      cs.matchTerms = termList.filter((t) => termSelects(t.term, p.namespace, p.labels));
      cs.matchSpreads = spreadList.filter((s) => spreadSelects(s.spec, p.namespace, p.labels));
      cs.owners = ownerList.filter((o) => termSelects(o.term, p.namespace, p.labels));
      for (const l of cs.levels) {
        for (const r of l.affinity) r.self = cs.matchTerms.includes(r.counter);
        for (const r of l.anti) r.self = cs.matchTerms.includes(r.counter);
        for (const r of l.spreads) r.self = cs.matchSpreads.includes(r.counter);
      }
      addInto(this.remainingDemand, cs.cls.req, cs.remaining);
      // Pods that can share no node with each other need that many nodes at least.
      const last = cs.levels[cs.levels.length - 1]!;
      for (const r of last.anti) if (r.self && r.counter.term.topologyKey === HOSTNAME) { cs.hostnameCap = 1; cs.hostnameKey = `a:${r.counter.term.signature}`; }
      for (const r of last.spreads) {
        if (r.self && r.counter.spec.topologyKey === HOSTNAME && r.maxSkew < cs.hostnameCap) { cs.hostnameCap = r.maxSkew; cs.hostnameKey = `s:${r.counter.spec.signature}`; }
      }
      if (cs.hostnameKey) {
        const e = this.hostnameDemand.get(cs.hostnameKey) ?? { remaining: 0, cap: cs.hostnameCap };
        e.remaining += cs.remaining;
        this.hostnameDemand.set(cs.hostnameKey, e);
      }
    }

    this.topology.countRunning(existingOwners);
    this.units = new ClaimUnits({
      classes: this.classes, existingBins: this.existingBins, groupCount: this.groups.length,
      groupCapacity: (gi) => this.groups[gi]!.capacity,
      groupFeasible: (cl, gi) => this.groupFeasible(cl, gi),
      binFeasible: (cl, bin) => this.binFeasible(cl, bin),
    }, snapshot.dra);
  }

  private makeBin(name: string, labels: Record<string, string>, taints: V1Taint[], free: Resources, existing: boolean): Bin {
    const bin: Bin = {
      index: this.bins.length, name, labels, taints, free, ports: [], existing, existingIndex: -1, gi: -1, tclass: -1,
      used: {}, contents: [], share: 1, lastClass: -1, lastClassCount: 0,
    };
    this.bins.push(bin);
    return bin;
  }

  private bindLevel(cls: PodClass, l: RelaxationLevel, level: number, last: boolean): ClassLevel {
    const ns = this.snapshot.namespaceLabels;
    const affinity = requiredAffinityTerms(l.pod).map((t) => ({ counter: this.topology.termCounter(resolveAffinityTerm(t, l.pod, ns)), self: false }));
    const anti = requiredAntiAffinityTerms(l.pod).map((t) => ({ counter: this.topology.termCounter(resolveAffinityTerm(t, l.pod, ns)), self: false }));
    const spreads: SpreadRef[] = [];
    for (const c of l.pod.topologySpreadConstraints) {
      // Eligibility and signature come from the pod's own (unrelaxed) node affinity, as kube-scheduler counts.
      const spec = resolveSpread(c, cls.proto);
      if (!spec.hard) continue;
      spreads.push({ counter: this.topology.spreadCounter(spec, cls.proto), self: false, maxSkew: spec.maxSkew, minDomains: spec.minDomains });
    }
    const zonal = affinity.some((r) => r.counter.term.topologyKey !== HOSTNAME)
      || spreads.some((r) => r.counter.spec.topologyKey !== HOSTNAME);
    return {
      cls, level, last, pod: l.pod, avoidPreferNoSchedule: l.avoidPreferNoSchedule, relaxed: l.relaxed, affinity, anti, spreads, zonal,
      // Allocated on first use: most rungs of most ladders are never tried.
      groupFeasible: EMPTY, existingFeasible: EMPTY,
    };
  }

  binUnschedulable(bin: Bin): boolean {
    return bin.existing && bin.node!.unschedulable;
  }

  // ---- static feasibility ------------------------------------------------------------

  /** Why a class level can never run on a node with these labels, taints and capacity (undefined: it can). */
  staticReason(
    cl: ClassLevel, labels: Record<string, string>, taints: readonly V1Taint[], capacity: Resources, nodeName?: string, deviceBlocked?: readonly string[],
  ): string | undefined {
    const pod = cl.pod;
    if (!nodeSelectorMatches(pod, labels, nodeName)) return 'node selector / required node affinity does not match';
    if (taints.length) {
      const t = untoleratedTaint(taints, pod.tolerations, cl.avoidPreferNoSchedule ? ALL_TAINT_EFFECTS : HARD_TAINT_EFFECTS);
      if (t) return `untolerated taint ${formatTaint(t)}`;
    }
    if (pod.claims.length) {
      const r = volumeTopologyReason(pod, labels, this.snapshot.volumes, nodeName);
      if (r) return `volume topology: ${r}`;
    }
    const keys = cl.cls.reqKeys;
    for (let i = 0; i < keys.length; i++) if (cl.cls.reqVals[i]! > (capacity[keys[i]!] ?? 0)) return `Insufficient ${keys[i]}`;
    const devices = cl.cls.proto.devices;
    if (devices) return deviceStaticReason(devices, capacity, labels, nodeName, deviceBlocked, this.snapshot.dra);
    return undefined;
  }

  groupFeasible(cl: ClassLevel, gi: number): boolean {
    if (cl.groupFeasible === EMPTY) {
      cl.groupFeasible = new Uint8Array(this.groups.length);
      // A pod that needs DRA devices never runs on a group whose nodes have none:
      // marked at once (staticReason would say so group by group).
      const devices = cl.cls.proto.devices;
      if (devices && needsDevices(devices)) for (const i of this.devicelessGroups()) cl.groupFeasible[i] = 2;
    }
    let v = cl.groupFeasible[gi]!;
    if (v === 0) {
      const g = this.groups[gi]!;
      v = this.staticReason(cl, g.labels, g.taints, g.capacity, undefined, g.group.template.deviceBlocked) === undefined ? 1 : 2;
      cl.groupFeasible[gi] = v;
    }
    return v === 1;
  }

  private deviceless: number[] | undefined;

  /** Indices of the groups whose new nodes offer no DRA device. */
  private devicelessGroups(): number[] {
    if (!this.deviceless) {
      this.deviceless = [];
      for (let i = 0; i < this.groups.length; i++) {
        if (!Object.keys(this.groups[i]!.capacity).some(isDeviceResource)) this.deviceless.push(i);
      }
    }
    return this.deviceless;
  }

  existingFeasible(cl: ClassLevel, bin: Bin): boolean {
    if (cl.existingFeasible === EMPTY) cl.existingFeasible = new Uint8Array(this.existingBins.length);
    let v = cl.existingFeasible[bin.existingIndex]!;
    if (v === 0) {
      const node = bin.node!;
      v = !node.unschedulable && this.staticReason(cl, bin.labels, bin.taints, node.allocatable, node.name, node.deviceBlocked) === undefined ? 1 : 2;
      cl.existingFeasible[bin.existingIndex] = v;
    }
    return v === 1;
  }

  binFeasible(cl: ClassLevel, bin: Bin): boolean {
    return bin.existing ? this.existingFeasible(cl, bin) : this.groupFeasible(cl, bin.gi);
  }

  // ---- dynamic constraints -----------------------------------------------------------

  /**
   * How many pods of the class level the bin's topology, ports and pod (anti-)affinity
   * allow now, resources aside. 0 sets `lastBlock` to the constraint that refused.
   */
  dynamicAllowance(cl: ClassLevel, bin: Bin, labels: Record<string, string> = bin.labels): number {
    let n = Infinity;
    const pod = cl.pod;
    if (pod.hostPorts.length) {
      if (hostPortsConflict(pod.hostPorts, bin.ports)) { this.lastBlock = 'host port conflict'; return 0; }
      n = 1;
    }
    const devices = cl.cls.proto.devices;
    // A virtual bin (explain.ts: a group's next node) has no free room: its devices were checked statically.
    if (devices && bin.free) {
      n = this.deviceRoom(devices, bin, n);
      if (n === 0) return 0;
    }
    n = this.topology.allowance(cl, this.classes[cl.cls.index]!.owners, bin, labels, n);
    // The topology words its refusal only when read; it keeps it until its next refusal, which comes through here too.
    if (n === 0) this.blockByTopology = true;
    return n;
  }

  /** Pods (of at most `max`) the bin's free DRA devices take; shared claims placed elsewhere keep their pods there. */
  private deviceRoom(devices: PodDevices, bin: Bin, max: number): number {
    for (const s of devices.shared) {
      const home = this.sharedHome.get(s.claim);
      if (home !== undefined && home !== bin) { this.lastBlock = `shared DRA claim ${s.claim} is on node ${home.name}`; return 0; }
    }
    // Infinity (no host ports): at most every pod left, bounded by the pods resource anyway.
    const cap = Number.isFinite(max) ? max : Math.max(1, bin.free.pods ?? 1);
    const n = deviceAllowance(devices, bin.free, this.snapshot.dra, bin.claims, cap);
    if (n === 0) this.lastBlock = 'insufficient free DRA devices';
    return n;
  }

  /** Whether one more pod of the class level's devices fit a node of group gi holding what the bin holds (FFD regrouping). */
  devicesFitOn(cl: ClassLevel, bin: Bin, gi: number): boolean {
    const devices = cl.cls.proto.devices;
    if (!devices) return true;
    return deviceAllowance(devices, subtract(this.groups[gi]!.capacity, bin.used), this.snapshot.dra, bin.claims, 1) >= 1;
  }

  /** Pods of the class level the bin can take now (resources and every constraint). */
  allowance(cl: ClassLevel, bin: Bin): number {
    if (!this.binFeasible(cl, bin)) return 0;
    const u = this.units.empty ? undefined : this.units.unitOf(cl.cls.index);
    if (u) {
      if (u.home === bin) return this.units.withHeldFree(u, cl.cls.index, () => this.roomFor(cl, bin));
      const why = this.unitBlock(u, cl, bin);
      if (why) { this.lastBlock = why; return 0; }
    }
    return this.roomFor(cl, bin);
  }

  private roomFor(cl: ClassLevel, bin: Bin): number {
    const r = fitCount(cl.cls, bin.free);
    if (r <= 0) return 0;
    const d = this.dynamicAllowance(cl, bin);
    return d < r ? d : r;
  }

  /** Why the class's unit of pods sharing claims cannot go to the bin (undefined: it can, or the class has none). */
  unitBlock(u: ClaimUnit, cl: ClassLevel, bin: Bin): string | undefined {
    if (u.home) return u.home === bin ? undefined : `shared DRA claim ${u.claims[0]!.claim} is on node ${u.home.name}`;
    if (this.units.fits(u, bin.free, bin.claims, (c) => this.binFeasible(c, bin))) return undefined;
    return `the pods sharing DRA claim ${u.claims[0]!.claim} do not fit together`;
  }

  /** The bin every pod of the class must join (its unit's home), if any. */
  unitHome(cl: ClassLevel): Bin | undefined {
    return this.units.empty ? undefined : this.units.unitOf(cl.cls.index)?.home;
  }

  /** Pods of the class whose room its unit's home holds. */
  heldFor(cl: ClassLevel): number {
    const u = this.units.empty ? undefined : this.units.unitOf(cl.cls.index);
    return u ? this.units.heldPods(u, cl.cls.index) : 0;
  }

  /**
   * Whether a node of group gi holding what the new bin holds could take the class's whole
   * unit (FFD regrouping; true when the class has no unit or the unit already has a home).
   */
  unitFitsOn(cl: ClassLevel, bin: Bin, gi: number): boolean {
    const u = this.units.empty ? undefined : this.units.unitOf(cl.cls.index);
    if (!u || u.home) return true;
    return this.units.fits(u, subtract(this.groups[gi]!.capacity, bin.used), bin.claims, (c) => this.groupFeasible(c, gi));
  }

  /** Places n pods of the class level on the bin and counts them everywhere. */
  place(cl: ClassLevel, bin: Bin, n: number): void {
    if (n <= 0) return;
    this.version++;
    const cs = this.classes[cl.cls.index]!;
    const cls = cl.cls;
    const unit = this.units.empty ? undefined : this.units.unitOf(cls.index);
    const held = unit ? this.units.beforePlace(unit, bin, cls.index) : 0;
    for (let i = 0; i < cls.reqKeys.length; i++) {
      const k = cls.reqKeys[i]!;
      const v = cls.reqVals[i]! * n;
      bin.free[k] = (bin.free[k] ?? 0) - v;
      if (!bin.existing) bin.used[k] = (bin.used[k] ?? 0) + v;
      this.remainingDemand[k] = (this.remainingDemand[k] ?? 0) - v;
    }
    if (cl.pod.hostPorts.length) bin.ports.push(...cl.pod.hostPorts);
    const devices = cls.proto.devices;
    if (devices) {
      takeDevices(devices, n, bin.free, bin.existing ? undefined : bin.used, this.snapshot.dra, bin.claims ??= new Set());
      for (const s of devices.shared) if (!this.sharedHome.has(s.claim)) this.sharedHome.set(s.claim, bin);
    }
    this.topology.place(cs, bin, n);
    const last = bin.contents[bin.contents.length - 1];
    if (last && last.cl === cl) last.n += n;
    else bin.contents.push({ cl, n });
    if (bin.lastClass === cls.index) bin.lastClassCount += n;
    else { bin.lastClass = cls.index; bin.lastClassCount = n; }
    cs.remaining -= n;
    if (cs.hostnameKey) this.hostnameDemand.get(cs.hostnameKey)!.remaining -= n;
    if (unit) this.units.afterPlace(unit, bin, cls.index, n, held);
  }

  // ---- groups, limits and new nodes --------------------------------------------------

  /** Whether one more node of the group stays within its max size and its NodePool's limits. */
  canOpen(gi: number): boolean {
    return this.room.canOpen(gi);
  }

  /** Whether the group has room for a node (max size; pool limits aside). */
  hasRoom(gi: number): boolean {
    return this.groupRoom[gi]! > 0;
  }

  /** Why a group cannot add a node (undefined: it can). */
  openReason(gi: number): string | undefined {
    return this.room.openReason(gi);
  }

  private account(gi: number, sign: number): void {
    this.version++;
    this.room.account(gi, sign);
  }

  private freshName(): string {
    let name: string;
    this.nodeNames ??= new Set(this.existingBins.map((b) => b.name));
    do name = `headroom-new-${this.nextName++}`; while (this.nodeNames.has(name));
    this.nodeNames.add(name);
    return name;
  }

  private readonly candidateLabels: Array<Record<string, string> | undefined> = [];

  /** Labels of a not-yet-opened node of the group (a hostname no pod is on), cached. */
  candidateNodeLabels(gi: number): Record<string, string> {
    let l = this.candidateLabels[gi];
    if (!l) { l = this.newNodeLabels(gi, '\u0000candidate'); this.candidateLabels[gi] = l; }
    return l;
  }

  /** Labels a new node of the group would have, with a hostname of its own. */
  newNodeLabels(gi: number, name: string): Record<string, string> {
    return { ...this.groups[gi]!.labels, [HOSTNAME]: name };
  }

  openBin(gi: number): Bin {
    const g = this.groups[gi]!;
    const name = this.freshName();
    const bin = this.makeBin(name, this.newNodeLabels(gi, name), g.taints, { ...g.capacity }, false);
    bin.gi = gi;
    bin.tclass = g.tclass;
    this.account(gi, 1);
    this.newBins.push(bin);
    this.newBinsPerTclass[g.tclass] = this.newBinsPerTclass[g.tclass]! + 1;
    return bin;
  }

  /** Gives back the newest bin when it turned out unusable: it holds no pods and no group room. */
  releaseEmpty(bin: Bin): void {
    if (bin.contents.length || this.newBins[this.newBins.length - 1] !== bin || this.bins[this.bins.length - 1] !== bin) {
      throw new Error('releaseEmpty: only the newest, empty bin can be released');
    }
    this.newBins.pop();
    this.bins.pop();
    this.account(bin.gi, -1);
    this.newBinsPerTclass[bin.tclass] = this.newBinsPerTclass[bin.tclass]! - 1;
  }

  /** Moves a new bin to another group of its topology class (right-sizing). */
  regroup(bin: Bin, gi: number): void {
    this.account(bin.gi, -1);
    this.account(gi, 1);
    bin.gi = gi;
    bin.labels = this.newNodeLabels(gi, bin.name);
    bin.taints = this.groups[gi]!.taints;
    bin.free = subtract(this.groups[gi]!.capacity, bin.used);
  }

  /** Whether the bin's contents could run on a node of group gi instead (same topology class). */
  canHold(bin: Bin, gi: number): boolean {
    const cap = this.groups[gi]!.capacity;
    for (const k in bin.used) if (bin.used[k]! > (cap[k] ?? 0)) return false;
    for (const { cl } of bin.contents) if (!this.groupFeasible(cl, gi)) return false;
    return true;
  }

  /** Whether switching the bin to group gi respects max size and pool limits. */
  canSwitch(bin: Bin, gi: number): boolean {
    return this.room.canSwitch(bin.gi, gi);
  }

  /** Right-sizing (right-size.ts): each new node becomes the cheapest group of its topology class that holds its pods. */
  rightSize(): void {
    rightSize(this);
  }

  // ---- result ------------------------------------------------------------------------

  /**
   * Reports `count` (default: all remaining) pods of the class as unschedulable.
   * They are taken from the end of the class; placements take pods from the front.
   */
  markUnschedulable(cs: ClassState, reason: string, count = cs.remaining): void {
    const pods = cs.cls.pods;
    for (let i = 0; i < count; i++) this.unschedulable.push({ pod: pods[pods.length - 1 - cs.unschedulable - i]!.key, reason });
    cs.unschedulable += count;
    if (!this.units.empty) this.units.givenUp(cs.cls.index, count);
    if (cs.hostnameKey) this.hostnameDemand.get(cs.hostnameKey)!.remaining -= count;
    addInto(this.remainingDemand, cs.cls.req, -count);
    cs.remaining -= count;
  }
}
