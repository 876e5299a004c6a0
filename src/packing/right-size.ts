import { CPU, MEMORY, type Resources } from '../scheduling/resources.js';
import type { Bin, GroupInfo } from './bins.js';

/** What right-sizing needs of the packing state. */
export interface RightSizeView {
  readonly groups: readonly GroupInfo[];
  /** Group indices per topology class, cheapest first. */
  readonly tclasses: readonly (readonly number[])[];
  readonly newBins: readonly Bin[];
  canHold(bin: Bin, gi: number): boolean;
  canSwitch(bin: Bin, gi: number): boolean;
  regroup(bin: Bin, gi: number): void;
}

/**
 * Right-sizing: each new node becomes the cheapest group of its topology class
 * that holds its pods (ties: less capacity left stranded).
 */
export function rightSize(state: RightSizeView): void {
  for (const bin of state.newBins) {
    const cur = state.groups[bin.gi]!;
    let best = bin.gi;
    let bestPrice = cur.group.pricePerHour;
    let bestCap = capacityWeight(cur.capacity);
    for (const gi of state.tclasses[cur.tclass]!) {
      const g = state.groups[gi]!;
      if (g.group.pricePerHour > bestPrice) break;
      if (gi === best) continue;
      const w = capacityWeight(g.capacity);
      if (g.group.pricePerHour === bestPrice && w >= bestCap) continue;
      if (g.group.weight < cur.group.weight) continue;
      if (!state.canHold(bin, gi) || !state.canSwitch(bin, gi)) continue;
      best = gi; bestPrice = g.group.pricePerHour; bestCap = w;
    }
    if (best !== bin.gi) state.regroup(bin, best);
  }
}

/** A scalar for "how much capacity": cores plus GiB, enough to break price ties toward smaller nodes. */
export function capacityWeight(r: Resources): number {
  return (r[CPU] ?? 0) / 1000 + (r[MEMORY] ?? 0) / 2 ** 30;
}
