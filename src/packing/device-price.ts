import type { DraTable } from '../scheduling/dra/pod-devices.js';
import type { GroupInfo } from './bins.js';
import type { ClassLevel, ClassState } from './class-levels.js';
import { deviceAllowance, needsDevices } from './devices.js';
import { fitCount } from './pod-classes.js';

/** What device pricing needs of the packing state. */
export interface DevicePriceView {
  readonly groups: readonly GroupInfo[];
  readonly snapshot: { readonly dra?: DraTable };
  groupFeasible(cl: ClassLevel, gi: number): boolean;
}

/**
 * What a new node costs per pod of a class that claims DRA devices (ADR 0146). On a
 * GPU node the devices, not cpu or memory, are what the pods use up and what the
 * price pays for, so the cost-aware packer weighs a device class's groups by price
 * over the pods of that class an empty node holds (its requests and its devices
 * counted together: a pod whose cpu fills a node before its devices do uses fewer of
 * them), and orders device classes by the least such price any group offers, dearest
 * first. Static (capacities and prices do not change during a solve): cached per class
 * level and group. Classes without device demand are never asked.
 */
export class DevicePrice {
  /** Per class level: pods per empty node of each group (-1: not computed yet). */
  private readonly perNode = new Map<ClassLevel, Float64Array>();
  private readonly maxPods = new Map<ClassLevel, number>();

  constructor(private readonly view: DevicePriceView) {}

  /** Whether the class level's pods need devices (then its groups are weighed by price per pod). */
  static applies(cl: ClassLevel): boolean {
    const d = cl.cls.proto.devices;
    return d !== undefined && needsDevices(d);
  }

  /** Pods of the class level an empty node of group gi holds, by requests and devices (0: none). */
  podsPerNode(cl: ClassLevel, gi: number): number {
    let a = this.perNode.get(cl);
    if (!a) { a = new Float64Array(this.view.groups.length).fill(-1); this.perNode.set(cl, a); }
    let k = a[gi]!;
    if (k < 0) {
      const cap = this.view.groups[gi]!.capacity;
      const byRequests = fitCount(cl.cls, cap);
      const max = Number.isFinite(byRequests) ? byRequests : Math.max(1, cap.pods ?? 1);
      k = max > 0 ? deviceAllowance(cl.cls.proto.devices!, cap, this.view.snapshot.dra, undefined, max) : 0;
      a[gi] = k;
    }
    return k;
  }

  /** The most pods of the class level an empty node of any group holds (bounds the price per pod of dearer groups). */
  maxPodsPerNode(cl: ClassLevel): number {
    let m = this.maxPods.get(cl);
    if (m === undefined) {
      m = 0;
      for (let gi = 0; gi < this.view.groups.length; gi++) if (this.view.groupFeasible(cl, gi)) m = Math.max(m, this.podsPerNode(cl, gi));
      this.maxPods.set(cl, m);
    }
    return m;
  }

  /**
   * The least price per pod any group's new node offers the class (its most relaxed
   * rung); Infinity when no group can run it (only existing nodes can: it goes first
   * to their room). 0 for a class without device demand.
   */
  leastPerPod(cs: ClassState): number {
    const cl = cs.levels[cs.levels.length - 1]!;
    if (!DevicePrice.applies(cl)) return 0;
    let best = Infinity;
    for (let gi = 0; gi < this.view.groups.length; gi++) {
      if (!this.view.groupFeasible(cl, gi)) continue;
      const k = this.podsPerNode(cl, gi);
      if (k <= 0) continue;
      const p = this.view.groups[gi]!.group.pricePerHour / k;
      if (p < best) best = p;
    }
    return best;
  }
}
