import type { ClusterSnapshot } from '../cluster/snapshot.js';
import type { Plan } from '../packing/plan.js';
import type { SchedulingPod } from '../scheduling/scheduling-pod.js';
import type { DisruptionAllowance, SettingsOf } from './allowance.js';
import { disruptableNodes } from './candidates.js';
import { podsToMove } from './pods.js';
import type { Removal, Skip } from './removal.js';

/**
 * Expiry, the safe way: a node older than its pool's expireAfter is removed only
 * when the real solver, given the snapshot without that node and its pods pending,
 * puts every one of them on existing capacity with no new node. Unlike Karpenter,
 * which replaces expired nodes regardless, we never remove a node whose pods could
 * not go elsewhere. Pure apart from the solver passed in.
 */

export type SolveSnapshot = (snapshot: ClusterSnapshot) => Plan | Promise<Plan>;

export interface ExpiryInput {
  snapshot: ClusterSnapshot;
  /** Node name -> creation time (ms). */
  createdAt: ReadonlyMap<string, number>;
  now: number;
  settingsOf: SettingsOf;
  allowance: DisruptionAllowance;
  solve: SolveSnapshot;
  keep?: ReadonlySet<string>;
  /** At most this many expired nodes per pass (each check is a solve). Default 1. */
  max?: number;
}

/** The snapshot as it would be without `nodeName`: its movable pods pending, nothing else pending. */
export function withoutNode(snapshot: ClusterSnapshot, nodeName: string): { snapshot: ClusterSnapshot; moved: SchedulingPod[] } {
  const node = snapshot.nodes.find((n) => n.name === nodeName);
  if (!node) throw new Error(`node ${nodeName} is not in the snapshot`);
  const moved = podsToMove(node).map((p) => {
    const { nodeName: _bound, ...rest } = p;
    return rest;
  });
  return { snapshot: { ...snapshot, nodes: snapshot.nodes.filter((n) => n !== node), pendingPods: moved }, moved };
}

/**
 * Why the pods of `nodeName` could not all move to other existing nodes (in-flight
 * capacity does not count: it may never come), or undefined when they can.
 */
export async function cannotMovePods(snapshot: ClusterSnapshot, nodeName: string, solve: SolveSnapshot): Promise<string | undefined> {
  const { snapshot: what, moved } = withoutNode(snapshot, nodeName);
  if (moved.length === 0) return undefined;
  const plan = await solve(what);
  if (plan.unschedulable.length > 0) return `${plan.unschedulable.length} pod(s) would not fit anywhere`;
  if (plan.scaleUps.some((s) => s.to > s.from)) return 'its pods would need a new node';
  const existing = new Set(what.nodes.filter((n) => !n.inFlight).map((n) => n.name));
  const placed = new Set<string>();
  for (const p of plan.placements) {
    if (!('node' in p) || !existing.has(p.node)) return 'its pods would need a new or in-flight node';
    placed.add(p.pod);
  }
  const missing = moved.filter((p) => !placed.has(p.key)).length;
  return missing > 0 ? `${missing} pod(s) got no placement` : undefined;
}

/**
 * Expired nodes to remove now, oldest first, each checked by a solve. Skipped
 * entirely while real pods are pending: that capacity is spoken for.
 */
export async function decideExpiry(input: ExpiryInput): Promise<{ remove: Removal[]; skipped: Skip[] }> {
  const { snapshot, createdAt, now, settingsOf, allowance, solve } = input;
  const max = input.max ?? 1;
  const remove: Removal[] = [];
  const skipped: Skip[] = [];
  if (snapshot.pendingPods.some((p) => !p.predicted)) return { remove, skipped };
  const expired: Removal[] = [];
  const movedOf = new Map<string, SchedulingPod[]>();
  for (const { node, group, byReplicas } of disruptableNodes(snapshot, input.keep)) {
    if (byReplicas) continue; // a decrement removes whichever instance the provider picks, not this one
    const ttl = settingsOf(group).expireAfterMs;
    const created = createdAt.get(node.name);
    if (ttl === null || created === undefined || now - created < ttl) continue;
    // Bare pods have no owner to recreate them elsewhere.
    if (node.pods.some((p) => p.owner === undefined)) {
      skipped.push({ node: node.name, why: 'has a pod without a controller', reason: 'Expired', blockedBy: 'pod-without-controller' });
      continue;
    }
    const moved = podsToMove(node);
    movedOf.set(node.name, moved);
    expired.push({
      node: node.name, group, reason: 'Expired', since: created, ...(node.machine ? { machine: node.machine } : {}),
      podUids: moved.map((p) => p.uid),
    });
  }
  expired.sort((a, b) => a.since - b.since || (a.node < b.node ? -1 : a.node > b.node ? 1 : 0));
  for (const e of expired) {
    if (remove.length >= max) break;
    const moved = movedOf.get(e.node) ?? [];
    const blocked = allowance.blocked(e.group, 'Expired', moved);
    if (blocked) {
      skipped.push({ node: e.node, why: blocked.why, reason: 'Expired', blockedBy: blocked.by });
      continue;
    }
    const why = await cannotMovePods(snapshot, e.node, solve);
    if (why) {
      skipped.push({ node: e.node, why, reason: 'Expired', blockedBy: 'pods-cannot-move' });
      continue;
    }
    allowance.take(e.group, 'Expired', moved);
    remove.push(e);
  }
  return { remove, skipped };
}
