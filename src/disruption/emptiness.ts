import type { ClusterObjects } from '../cluster/objects.js';
import type { ClusterSnapshot } from '../cluster/snapshot.js';
import type { DisruptionAllowance, SettingsOf } from './allowance.js';
import { disruptableNodes } from './candidates.js';
import { isEmptyNode } from './pods.js';
import type { Removal, Skip } from './removal.js';

/**
 * Emptiness: a node of a managed group whose only pods are DaemonSet or static
 * (mirror) pods, for at least its pool's consolidateAfter, is removed. Pure: the
 * caller passes the snapshot, when each node was first seen empty, and now.
 */

export interface EmptinessInput {
  snapshot: ClusterSnapshot;
  /** Node name -> when it was first observed empty (ms); nodes not in here are not empty. */
  emptySince: ReadonlyMap<string, number>;
  now: number;
  settingsOf: SettingsOf;
  allowance: DisruptionAllowance;
  /** Nodes that must stay (do-not-disrupt, about to receive pending pods, already being removed). */
  keep?: ReadonlySet<string>;
  /** Nodes whose Ready condition is not True: they wait a group's unreadyAfterMs instead, when it sets one. */
  notReady?: ReadonlySet<string>;
}

/**
 * The empty nodes to remove now, oldest-empty first (then by name), within the
 * budgets and min sizes (taken from `allowance`, which this call uses up).
 */
export function decideEmptiness(input: EmptinessInput): { remove: Removal[]; skipped: Skip[] } {
  const { snapshot, emptySince, now, settingsOf, allowance } = input;
  const candidates: Removal[] = [];
  const skipped: Skip[] = [];
  for (const { node, group } of disruptableNodes(snapshot, input.keep)) {
    const since = emptySince.get(node.name);
    if (since === undefined || !isEmptyNode(node)) continue;
    const settings = settingsOf(group);
    const after = input.notReady?.has(node.name) && settings.unreadyAfterMs !== undefined ? settings.unreadyAfterMs : settings.consolidateAfterMs;
    if (after === null) continue; // consolidateAfter: Never
    if (now - since < after) continue;
    candidates.push({ node: node.name, group, reason: 'Empty', since, ...(node.machine ? { machine: node.machine } : {}), podUids: [] });
  }
  candidates.sort((a, b) => a.since - b.since || (a.node < b.node ? -1 : a.node > b.node ? 1 : 0));
  const remove: Removal[] = [];
  for (const c of candidates) {
    const blocked = allowance.blocked(c.group, 'Empty');
    if (blocked) {
      skipped.push({ node: c.node, why: blocked.why, reason: 'Empty', blockedBy: blocked.by });
      continue;
    }
    allowance.take(c.group, 'Empty');
    remove.push(c);
  }
  return { remove, skipped };
}

/** Nodes whose Ready condition is not True (or that report none): emptiness's `notReady`. */
export function notReadyNodes(objects: Pick<ClusterObjects, 'nodes'>): Set<string> {
  const out = new Set<string>();
  for (const n of objects.nodes) {
    const ready = n.status?.conditions?.find((c) => c.type === 'Ready');
    if (ready?.status !== 'True' && n.metadata?.name) out.add(n.metadata.name);
  }
  return out;
}
