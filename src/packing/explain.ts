import type { Bin } from './bins.js';
import type { ClassLevel } from './class-levels.js';
import type { PackingState } from './packing-state.js';
import { fitCount } from './pod-classes.js';

const MAX_IDS = 4;

function bucket(map: Map<string, string[]>, reason: string, id: string): void {
  const ids = map.get(reason);
  if (ids) ids.push(id);
  else map.set(reason, [id]);
}

/** Why the class level fits no existing node, or undefined when it fits one. */
function existingReason(st: PackingState, cl: ClassLevel, bin: Bin): string | undefined {
  if (st.binUnschedulable(bin)) return 'node unschedulable';
  const node = bin.node!;
  const r = st.staticReason(cl, bin.labels, bin.taints, node.allocatable, node.name, node.deviceBlocked);
  if (r) return r;
  if (fitCount(cl.cls, bin.free) <= 0) {
    const short = cl.cls.reqKeys.filter((k, i) => cl.cls.reqVals[i]! > (bin.free[k] ?? 0));
    return `insufficient free ${short.join(', ')}`;
  }
  if (st.dynamicAllowance(cl, bin) <= 0) return st.lastBlock;
  if (st.allowance(cl, bin) <= 0) return st.lastBlock;
  return undefined;
}

/** Why no new node of the group can take the class level now, or undefined. */
export function groupReason(st: PackingState, cl: ClassLevel, gi: number): string | undefined {
  const open = st.openReason(gi);
  if (open) return open;
  const g = st.groups[gi]!;
  const r = st.staticReason(cl, g.labels, g.taints, g.capacity, undefined, g.group.template.deviceBlocked);
  if (r) return r;
  const labels = st.candidateNodeLabels(gi);
  const virtual = { labels, ports: [], existing: false, existingIndex: -1, gi } as unknown as Bin;
  if (st.dynamicAllowance(cl, virtual, labels) <= 0) return st.lastBlock;
  return undefined;
}

/**
 * The reason reported for pods that could not be placed: the constraint that
 * refused each existing node and each node group, aggregated by reason, naming
 * the groups tried.
 */
export function explainUnschedulable(st: PackingState, cl: ClassLevel): string {
  const parts: string[] = [];
  const nodes = new Map<string, string[]>();
  for (const bin of st.existingBins) {
    const r = existingReason(st, cl, bin);
    bucket(nodes, r ?? 'no room left after placing other pending pods', bin.name);
  }
  if (nodes.size) {
    const list = [...nodes].map(([r, ids]) => `${ids.length} ${r}`).join(', ');
    parts.push(`0/${st.existingBins.length} nodes available (${list})`);
  }
  const groups = new Map<string, string[]>();
  for (const g of st.groups) {
    const r = groupReason(st, cl, g.index);
    bucket(groups, r ?? 'no room left after placing other pending pods', g.group.id);
  }
  if (groups.size === 0) {
    parts.push('no node groups');
  } else {
    const list = [...groups].map(([r, ids]) => {
      const shown = ids.slice(0, MAX_IDS).join(', ');
      return `${r}: ${shown}${ids.length > MAX_IDS ? ` (+${ids.length - MAX_IDS} more)` : ''}`;
    });
    parts.push(`node groups tried: ${list.join('; ')}`);
  }
  if (cl.relaxed.length) parts.push(`preferences relaxed: ${cl.relaxed.join(', ')}`);
  return parts.join('; ');
}
