import type { V1Node } from '@kubernetes/client-node';
import { withoutDisruptionTaint } from '../api/disruption-taint.js';
import type { ClusterSnapshot, SnapshotNode } from '../cluster/snapshot.js';
import { nodeSelectorMatches } from '../scheduling/node-affinity.js';
import { addInto, fits, subtract, type Resources } from '../scheduling/resources.js';
import type { SchedulingPod } from '../scheduling/scheduling-pod.js';
import { formatTaint, untoleratedTaint } from '../scheduling/taints.js';

/**
 * Did a scale-up help the pods that triggered it? Karpenter's chaos suite brings every
 * new node up unusable (a NoExecute taint): an autoscaler that only counts capacity
 * keeps adding nodes the pods cannot use. Once a group's new nodes are Ready and took
 * no pod, while the pods that triggered them are still pending and cannot go on them
 * (a taint they do not tolerate, cordoned, too small, labels they do not select) a
 * settle time after Ready, or could but still have not long after, the scale-up did
 * not help: the caller backs the group off. While settling the group adds nothing. A
 * new node that took a pod helped, which ends the back-off. Pure: the records,
 * readiness times and clock are passed in.
 */

/** A scale-up the provisioner wrote for pending pods. */
export interface ScaleUpRecord {
  groupId: string;
  writtenAt: number;
  /** Keys (`namespace/name`) of the real pending pods the plan put on this group. */
  pods: readonly string[];
  /** The group's existing nodes when it was written: the new ones are the others. */
  nodesBefore: ReadonlySet<string>;
  /** Set once judged not helping (the back-off is not renewed for the same record). */
  didNotHelpAt?: number;
  /** New nodes last seen Ready and unable to take the pods (kept if they are then removed). */
  unusable?: { nodes: string[]; since: number; reason: string };
}

export type ScaleUpOutcome =
  /** A new node took a pod: the group works. */
  | { kind: 'helped'; nodes: string[] }
  /** The triggering pods are gone or placed elsewhere, or the record is too old to judge. */
  | { kind: 'moot' }
  /** New nodes are not Ready yet, or the pods may still be bound there. */
  | { kind: 'waiting'; usable?: true }
  /**
   * New nodes are Ready (since `since`) and cannot take the pods, but only just: the group
   * adds nothing until they are judged. The caller keeps this as the record's `unusable`.
   */
  | { kind: 'settling'; nodes: string[]; since: number; reason: string }
  | { kind: 'did-not-help'; nodes: string[]; pending: number; reason: string };

export interface ScaleUpEffectOptions {
  /** How long new nodes must have been Ready before they are judged (startup taints, binding). Default 30 s. */
  settleMs?: number;
  /** Pods that fit a new node but are still pending this long after it was Ready: the node is unusable. Default 3 min. */
  stuckMs?: number;
  /** A record older than this is dropped unjudged (a Machine that never boots is a provisioning failure). Default 30 min. */
  expireMs?: number;
}

export const DEFAULT_SCALE_UP_EFFECT: Required<ScaleUpEffectOptions> = { settleMs: 30_000, stuckMs: 180_000, expireMs: 1_800_000 };

/** The first reason `pod` cannot run on `node`, or undefined when it can. */
export function blockerOn(pod: SchedulingPod, node: SnapshotNode): string | undefined {
  // A taint first: a useless node Headroom is already removing is also unschedulable, and the taint says why.
  const taint = untoleratedTaint(withoutDisruptionTaint(node.taints), pod.tolerations);
  if (taint) return `node ${node.name} has taint ${formatTaint(taint)} that the pods do not tolerate`;
  if (node.unschedulable) return `node ${node.name} is unschedulable`;
  if (!nodeSelectorMatches(pod, node.labels, node.name)) return `node ${node.name} does not match the pods' node selector or affinity`;
  const used: Resources = {};
  for (const p of node.pods) addInto(used, p.requests);
  if (!fits(pod.requests, subtract(node.allocatable, used))) return `node ${node.name} has no room for the pods' requests`;
  return undefined;
}

function isDaemonSetPod(p: SchedulingPod): boolean {
  return p.owner?.startsWith('DaemonSet/') ?? false;
}

/**
 * A snapshot indexed once per cycle for judging: existing nodes by group, real pending
 * pods by key (a burst leaves one record per group; no record scans every node or pod).
 */
export interface JudgeView {
  readonly nodesOfGroup: ReadonlyMap<string, readonly SnapshotNode[]>;
  readonly pendingByKey: ReadonlyMap<string, SchedulingPod>;
}

export function judgeView(snapshot: ClusterSnapshot): JudgeView {
  const nodesOfGroup = new Map<string, SnapshotNode[]>();
  for (const n of snapshot.nodes) {
    if (n.inFlight || !n.groupId) continue;
    let list = nodesOfGroup.get(n.groupId);
    if (!list) nodesOfGroup.set(n.groupId, (list = []));
    list.push(n);
  }
  const pendingByKey = new Map<string, SchedulingPod>();
  for (const p of snapshot.pendingPods) if (!p.predicted) pendingByKey.set(p.key, p);
  return { nodesOfGroup, pendingByKey };
}

/**
 * Judges one record on the current snapshot (as judgeView indexes it). `readySince`
 * maps the names of Ready Nodes to when they became Ready.
 */
export function judgeScaleUp(
  record: ScaleUpRecord, view: JudgeView, readySince: ReadonlyMap<string, number>, now: number, options: ScaleUpEffectOptions = {},
): ScaleUpOutcome {
  const o = { ...DEFAULT_SCALE_UP_EFFECT, ...options };
  const newNodes = (view.nodesOfGroup.get(record.groupId) ?? []).filter((n) => !record.nodesBefore.has(n.name));
  const used = newNodes.filter((n) => n.pods.some((p) => !isDaemonSetPod(p)));
  if (used.length > 0) return { kind: 'helped', nodes: used.map((n) => n.name) };
  if (now - record.writtenAt > o.expireMs) return { kind: 'moot' };
  const pending: SchedulingPod[] = [];
  for (const key of record.pods) {
    const p = view.pendingByKey.get(key);
    if (p) pending.push(p);
  }
  if (pending.length === 0) return { kind: 'moot' };
  if (record.didNotHelpAt !== undefined) return { kind: 'waiting' };
  const ready = newNodes.filter((n) => readySince.has(n.name));
  const seen = record.unusable;
  if (ready.length === 0) {
    // Seen unusable, then removed (emptiness takes an empty useless node within seconds): still judged.
    if (!seen) return { kind: 'waiting' };
    if (now - seen.since < o.settleMs) return { kind: 'settling', ...seen };
    return { kind: 'did-not-help', nodes: seen.nodes, pending: pending.length, reason: `${seen.reason} (since removed)` };
  }
  const nodes = ready.map((n) => n.name);
  const readyFor = now - Math.min(...ready.map((n) => readySince.get(n.name)!));
  let reason: string | undefined;
  for (const pod of pending) {
    for (const node of ready) {
      const blocker = blockerOn(pod, node);
      if (blocker === undefined) {
        // The pod could go there: give kube-scheduler until stuckMs before calling the node unusable.
        if (readyFor < o.stuckMs) return { kind: 'waiting', usable: true };
        return { kind: 'did-not-help', nodes, pending: pending.length, reason: `the pods are still pending ${Math.round(readyFor / 1000)} s after the new nodes were Ready` };
      }
      reason ??= blocker;
    }
  }
  // Startup taints and labels settle a moment after Ready: until then hold the group, judge after.
  const since = Math.min(seen?.since ?? Infinity, now - readyFor);
  if (now - since < o.settleMs) return { kind: 'settling', nodes, since, reason: reason! };
  return { kind: 'did-not-help', nodes, pending: pending.length, reason: reason! };
}

/** When each of `names` became Ready (Ready nodes only), read from the Node objects. */
export function readyTimes(nodes: readonly V1Node[], names: ReadonlySet<string>): Map<string, number> {
  const out = new Map<string, number>();
  if (names.size === 0) return out;
  for (const n of nodes) {
    const name = n.metadata?.name;
    if (!name || !names.has(name)) continue;
    const ready = n.status?.conditions?.find((c) => c.type === 'Ready');
    if (ready?.status !== 'True') continue;
    const t = ready.lastTransitionTime ? new Date(ready.lastTransitionTime).getTime() : NaN;
    const created = n.metadata?.creationTimestamp ? new Date(n.metadata.creationTimestamp).getTime() : NaN;
    const since = Number.isFinite(t) ? t : created;
    if (Number.isFinite(since)) out.set(name, since);
  }
  return out;
}

/** Names of the nodes of the records' groups that were not there when they were written. */
export function newNodeNames(records: readonly ScaleUpRecord[], view: JudgeView): Set<string> {
  const out = new Set<string>();
  for (const r of records) {
    for (const n of view.nodesOfGroup.get(r.groupId) ?? []) if (!r.nodesBefore.has(n.name)) out.add(n.name);
  }
  return out;
}
