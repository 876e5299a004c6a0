import type { ClusterSnapshot } from '../cluster/snapshot.js';
import { CPU, MEMORY } from '../scheduling/resources.js';
import type { GroupInfo } from './bins.js';

/**
 * How many nodes each group may still add (max size minus replicas minus what this
 * solve added) and what each NodePool has used against its limits, counting
 * existing, in-flight and newly opened nodes.
 */
export class GroupRoom {
  /** Nodes a group may still add: maxSize - replicas - added. */
  readonly room: Int32Array;
  readonly added: Int32Array;
  private readonly poolUsed = new Map<string, { cpu: number; memory: number; nodes: number }>();

  constructor(private readonly groups: readonly GroupInfo[], private readonly limits: ClusterSnapshot['limits']) {
    this.room = new Int32Array(groups.length);
    this.added = new Int32Array(groups.length);
    for (const g of groups) this.room[g.index] = Math.max(0, g.group.maxSize - g.group.replicas);
    for (const [pool, lim] of Object.entries(limits)) this.poolUsed.set(pool, { ...lim.used });
  }

  poolFits(gi: number, sign: number, extra?: number): boolean {
    const g = this.groups[gi]!.group;
    if (!g.nodePool) return true;
    const lim = this.limits[g.nodePool];
    if (!lim) return true;
    const used = this.poolUsed.get(g.nodePool)!;
    const a = g.template.allocatable;
    const cpu = used.cpu + sign * (a[CPU] ?? 0) - (extra ?? 0);
    const mem = used.memory + sign * (a[MEMORY] ?? 0);
    const nodes = used.nodes + sign;
    return (lim.cpu === undefined || cpu <= lim.cpu) && (lim.memory === undefined || mem <= lim.memory)
      && (lim.nodes === undefined || nodes <= lim.nodes);
  }

  /** Whether one more node of the group stays within its max size and its NodePool's limits. */
  canOpen(gi: number): boolean {
    return this.room[gi]! > 0 && this.poolFits(gi, 1);
  }

  /** Why a group cannot add a node (undefined: it can). */
  openReason(gi: number): string | undefined {
    const g = this.groups[gi]!.group;
    if (this.room[gi]! <= 0) return `max size ${g.maxSize} reached`;
    if (!this.poolFits(gi, 1)) return `NodePool ${g.nodePool} limits reached`;
    return undefined;
  }

  /** Counts one node more (sign 1) or less (-1) for the group and its pool. */
  account(gi: number, sign: number): void {
    this.room[gi] = this.room[gi]! - sign;
    this.added[gi] = this.added[gi]! + sign;
    const g = this.groups[gi]!.group;
    if (g.nodePool && this.limits[g.nodePool]) {
      const used = this.poolUsed.get(g.nodePool)!;
      used.cpu += sign * (g.template.allocatable[CPU] ?? 0);
      used.memory += sign * (g.template.allocatable[MEMORY] ?? 0);
      used.nodes += sign;
    }
  }

  /** Whether moving a new node from group `from` to group `to` respects max size and pool limits. */
  canSwitch(from: number, to: number): boolean {
    if (to === from) return true;
    if (this.room[to]! <= 0) return false;
    const a = this.groups[from]!.group;
    const b = this.groups[to]!.group;
    if (!b.nodePool || !this.limits[b.nodePool]) return true;
    if (a.nodePool !== b.nodePool) return this.poolFits(to, 1);
    // Same pool: the node count is unchanged; only the resource difference matters.
    const lim = this.limits[b.nodePool]!;
    const used = this.poolUsed.get(b.nodePool)!;
    const dc = (b.template.allocatable[CPU] ?? 0) - (a.template.allocatable[CPU] ?? 0);
    const dm = (b.template.allocatable[MEMORY] ?? 0) - (a.template.allocatable[MEMORY] ?? 0);
    return (lim.cpu === undefined || used.cpu + dc <= lim.cpu) && (lim.memory === undefined || used.memory + dm <= lim.memory);
  }
}
