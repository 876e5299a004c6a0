import { parseOptionDuration } from '../api/autoscaling-options.js';
import type { V1Node } from '@kubernetes/client-node';
import { PAUSED_ANNOTATION, parseMachineOnce, parseNodeGroupObjectOnce, type MachineView, type NodeGroupView } from '../api/capi.js';
import { NODEPOOL_LABEL, parseNodePoolOnce } from '../api/nodepool.js';
import type { UnstructuredObject } from '../api/unstructured-object.js';
import type { ClusterObjects } from '../cluster/objects.js';
import { mapNodesToGroups } from '../cluster/node-machine-map.js';
import type { ClusterSnapshot } from '../cluster/snapshot.js';
import { STANDALONE_GROUP_PREFIX } from './standalone.js';

/**
 * Provisioning failures, as Cluster Autoscaler's clusterapi provider treats them: a
 * Machine that is not a Ready node `maxNodeProvisionTime` after it was created (15 min,
 * or the group's `cluster.x-k8s.io/autoscaling-options-maxnodeprovisiontime`), or one
 * CAPI reports failed (phase Failed, a failureReason / failureMessage: how spot
 * "insufficient capacity" surfaces), is removed and its group backs off, so the next
 * cycle plans the pods onto the next best group. Paused groups are held too. Pure: the
 * time and the back-off memory are passed in.
 */

export const MAX_NODE_PROVISION_TIME_ANNOTATION = 'cluster.x-k8s.io/autoscaling-options-maxnodeprovisiontime';
export const DEFAULT_MAX_NODE_PROVISION_MS = 15 * 60_000;
/** How long a Node may be NotReady before it stops counting as capacity (MachineHealthCheck's usual timeout). */
export const DEFAULT_UNHEALTHY_NODE_MS = 5 * 60_000;

export interface ProvisionFailure {
  machine: { namespace: string; name: string; nodeName?: string };
  /** Snapshot group id (`Kind/namespace/name`; standalone pools as their MachineSet id). */
  groupId: string;
  /** Set for a standalone Machine: its NodePool. */
  nodePool?: string;
  kind: 'failed' | 'timeout';
  detail: string;
}


/** Why CAPI reports this Machine failed, or undefined if it does not. */
export function machineFailure(obj: UnstructuredObject): string | undefined {
  const status = (obj.status ?? {}) as {
    phase?: unknown; failureReason?: unknown; failureMessage?: unknown;
    deprecated?: { v1beta1?: { failureReason?: unknown; failureMessage?: unknown } };
  };
  const old = status.deprecated?.v1beta1 ?? {};
  const reason = [status.failureReason, old.failureReason].find((x) => typeof x === 'string' && x);
  const message = [status.failureMessage, old.failureMessage].find((x) => typeof x === 'string' && x);
  if (status.phase !== 'Failed' && !reason && !message) return undefined;
  return [status.phase === 'Failed' ? 'phase Failed' : undefined, reason, message].filter(Boolean).join(': ');
}

function readyCondition(node: V1Node) {
  return node.status?.conditions?.find((c) => c.type === 'Ready');
}

function created(obj: { metadata?: { creationTimestamp?: unknown } }): number | undefined {
  const t = obj.metadata?.creationTimestamp;
  const ms = t instanceof Date ? t.getTime() : typeof t === 'string' ? Date.parse(t) : NaN;
  return Number.isFinite(ms) ? ms : undefined;
}

/**
 * What decides each Machine's provisioning, independent of the time: failed now (with
 * why), or the deadline by which it must be a Ready node. Machines being deleted,
 * provisioned ones and those of no group Headroom scales have none.
 */
interface ProvisionCheck {
  base: Omit<ProvisionFailure, 'kind' | 'detail'>;
  /** The Machine and its name, for the timeout's detail. */
  name: string;
  failed?: string;
  /** When it was created, and its max node provision time. */
  since?: number;
  maxMs?: number;
}

function provisionChecks(objects: ClusterObjects, defaultMaxProvisionMs: number): ProvisionCheck[] {
  const groups: NodeGroupView[] = [];
  for (const o of objects.nodeGroups) {
    try {
      groups.push(parseNodeGroupObjectOnce(o));
    } catch { /* reported by buildSnapshot */ }
  }
  const machines: Array<{ obj: UnstructuredObject; view: MachineView }> = [];
  for (const o of objects.machines) {
    try {
      machines.push({ obj: o, view: parseMachineOnce(o) });
    } catch { /* reported by buildSnapshot */ }
  }
  const map = mapNodesToGroups(objects.nodes, machines.map((m) => m.view), groups);
  const groupById = new Map(groups.map((g) => [g.id, g]));
  const nodeByName = new Map(objects.nodes.map((n) => [n.metadata?.name ?? '', n]));
  const nodeOfMachine = new Map<MachineView, V1Node>();
  for (const [name, m] of map.machineOfNode) {
    const n = nodeByName.get(name);
    if (n) nodeOfMachine.set(m, n);
  }
  const checks: ProvisionCheck[] = [];
  for (const { obj, view } of machines) {
    if (view.deleting) continue;
    const pool = view.labels[NODEPOOL_LABEL];
    const groupId = map.groupOfMachine.get(`${view.namespace}/${view.name}`)
      ?? (pool ? `MachineSet/${view.namespace}/${STANDALONE_GROUP_PREFIX}${pool}` : undefined);
    if (!groupId) continue; // not a group Headroom scales
    const node = nodeOfMachine.get(view) ?? (view.nodeName ? nodeByName.get(view.nodeName) : undefined);
    const machine = { namespace: view.namespace, name: view.name, ...(node?.metadata?.name ? { nodeName: node.metadata.name } : {}) };
    const base = { machine, groupId, ...(pool ? { nodePool: pool } : {}) };
    const name = `${view.namespace}/${view.name}`;
    const failed = machineFailure(obj);
    if (failed) {
      checks.push({ base, name, failed });
      continue;
    }
    // Provisioned once its Node has been Ready; a Node that was Ready and is not now is
    // a health matter (MachineHealthCheck), not a provisioning failure.
    const ready = node ? readyCondition(node) : undefined;
    if (ready?.status === 'True') continue;
    const nodeCreated = node ? created(node) : undefined;
    const wentNotReady = ready?.lastTransitionTime ? new Date(ready.lastTransitionTime).getTime() : undefined;
    if (nodeCreated !== undefined && wentNotReady !== undefined && wentNotReady - nodeCreated > 60_000) continue;
    const since = created(obj);
    if (since === undefined) continue;
    const group = groupById.get(groupId);
    const maxMs = parseOptionDuration(group?.annotations[MAX_NODE_PROVISION_TIME_ANNOTATION]) ?? defaultMaxProvisionMs;
    checks.push({ base, name, since, maxMs });
  }
  return checks;
}

function failuresAt(checks: readonly ProvisionCheck[], now: number): { failures: ProvisionFailure[]; nextDeadline?: number } {
  const failures: ProvisionFailure[] = [];
  let nextDeadline: number | undefined;
  for (const c of checks) {
    if (c.failed !== undefined) {
      failures.push({ ...c.base, kind: 'failed', detail: `Machine ${c.name} failed: ${c.failed}` });
      continue;
    }
    const deadline = c.since! + c.maxMs!;
    if (deadline <= now) {
      failures.push({ ...c.base, kind: 'timeout', detail: `Machine ${c.name} is not a Ready node ${Math.round((now - c.since!) / 1000)} s after it was created (max node provision time ${Math.round(c.maxMs! / 1000)} s)` });
    } else if (nextDeadline === undefined || deadline < nextDeadline) {
      nextDeadline = deadline;
    }
  }
  return { failures, ...(nextDeadline !== undefined ? { nextDeadline } : {}) };
}

/**
 * The Machines to give up on at `now`, and when the next one would time out (so the
 * caller can look again then). Machines being deleted are left alone.
 */
export function findProvisionFailures(
  objects: ClusterObjects, now: number, defaultMaxProvisionMs = DEFAULT_MAX_NODE_PROVISION_MS,
): { failures: ProvisionFailure[]; nextDeadline?: number } {
  return failuresAt(provisionChecks(objects, defaultMaxProvisionMs), now);
}

const sameElements = <T>(a: readonly T[], b: readonly T[]) => a === b || (a.length === b.length && a.every((x, i) => x === b[i]));

/**
 * findProvisionFailures for a loop that asks on every cycle: the checks depend only on
 * the groups, Machines and Nodes, which are immutable objects (a change is a new one),
 * so they are worked out again only when one of those lists holds other objects. Why:
 * parsing and mapping every Machine on each provisioning cycle was a tenth of a busy
 * Provisioner's time, while Machines change far less often than pods.
 */
export class ProvisionFailureFinder {
  private last: { nodeGroups: UnstructuredObject[]; machines: UnstructuredObject[]; nodes: V1Node[]; defaultMaxProvisionMs: number; checks: ProvisionCheck[] } | undefined;

  find(objects: ClusterObjects, now: number, defaultMaxProvisionMs = DEFAULT_MAX_NODE_PROVISION_MS): { failures: ProvisionFailure[]; nextDeadline?: number } {
    const l = this.last;
    if (!l || l.defaultMaxProvisionMs !== defaultMaxProvisionMs || !sameElements(l.nodeGroups, objects.nodeGroups)
      || !sameElements(l.machines, objects.machines) || !sameElements(l.nodes, objects.nodes)) {
      // Copies: a caller may push into the arrays it passed.
      this.last = {
        nodeGroups: objects.nodeGroups.slice(), machines: objects.machines.slice(), nodes: objects.nodes.slice(), defaultMaxProvisionMs,
        checks: provisionChecks(objects, defaultMaxProvisionMs),
      };
    }
    return failuresAt(this.last!.checks, now);
  }
}

/** Why a Cluster is paused (spec.paused, or the `cluster.x-k8s.io/paused` annotation), or undefined. */
export function clusterPaused(cluster: UnstructuredObject): string | undefined {
  if (cluster.metadata?.annotations && PAUSED_ANNOTATION in cluster.metadata.annotations) return PAUSED_ANNOTATION;
  return (cluster.spec as { paused?: unknown } | undefined)?.paused === true ? 'spec.paused' : undefined;
}

/**
 * Groups that are paused, by id, with the reason: the group itself (annotation
 * `cluster.x-k8s.io/paused`, or MachineDeployment spec.paused), or its Cluster (CAPI
 * stops reconciling a paused Cluster's objects, so a scale written there would wait).
 */
export function pausedGroups(objects: ClusterObjects): Map<string, string> {
  const out = new Map<string, string>();
  const pausedClusters = new Map<string, string>();
  for (const c of objects.clusters ?? []) {
    const why = clusterPaused(c);
    if (why) pausedClusters.set(`${c.metadata?.namespace ?? ''}/${c.metadata?.name ?? ''}`, why);
  }
  for (const o of objects.nodeGroups) {
    let view: NodeGroupView;
    try {
      view = parseNodeGroupObjectOnce(o);
    } catch {
      continue;
    }
    const cluster = pausedClusters.get(`${view.namespace}/${view.clusterName}`);
    if (view.paused) out.set(view.id, `${view.kind} ${view.namespace}/${view.name} is paused (${PAUSED_ANNOTATION in view.annotations ? PAUSED_ANNOTATION : 'spec.paused'})`);
    else if (cluster) out.set(view.id, `Cluster ${view.namespace}/${view.clusterName} of ${view.kind} ${view.namespace}/${view.name} is paused (${cluster})`);
  }
  // Standalone Machines of a NodePool belong to its template's Cluster: CAPI would not reconcile them either.
  if (pausedClusters.size > 0) {
    for (const o of objects.nodePools) {
      let pool;
      try {
        pool = parseNodePoolOnce(o);
      } catch {
        continue;
      }
      const tpl = pool.machineTemplate;
      const cluster = tpl && pausedClusters.get(`${tpl.namespace}/${tpl.clusterName}`);
      if (!tpl || !cluster) continue;
      out.set(`MachineSet/${tpl.namespace}/${STANDALONE_GROUP_PREFIX}${pool.name}`, `Cluster ${tpl.namespace}/${tpl.clusterName} of NodePool ${pool.name} is paused (${cluster})`);
    }
  }
  return out;
}

/**
 * Exponential back-off per group after provisioning failures, as Cluster Autoscaler's
 * (initial 5 min, doubling, at most 30 min). Memory of past failures only delays
 * scale-ups; it never causes a write.
 */
/** One group's back-off: how many failures in a row, until when, and why (for messages). */
export interface BackoffState {
  failures: number;
  until: number;
  cause: string;
}

export class GroupBackoff {
  private readonly state = new Map<string, BackoffState>();

  constructor(private readonly initialMs = 300_000, private readonly maxMs = 1_800_000) {}

  /** Records a failure of `groupId` at `now` (`cause` says why, for messages); returns the end of its back-off. */
  fail(groupId: string, now: number, cause = 'a failed provision'): number {
    const prev = this.state.get(groupId);
    // Failures after a back-off has long expired start over.
    const failures = prev && now - prev.until < this.maxMs ? prev.failures + 1 : 1;
    const until = now + Math.min(this.maxMs, this.initialMs * 2 ** (failures - 1));
    this.state.set(groupId, { failures, until, cause });
    return until;
  }

  /** The group proved it works (a new node of it took a pod): forgets its failures. True if it was backing off. */
  recover(groupId: string, now: number): boolean {
    const prev = this.state.get(groupId);
    this.state.delete(groupId);
    return prev !== undefined && prev.until > now;
  }

  /** Groups backing off at `now`, with until when. */
  active(now: number): Map<string, number> {
    const out = new Map<string, number>();
    for (const [id, s] of this.state) if (s.until > now) out.set(id, s.until);
    return out;
  }

  /**
   * What must outlive this process for `groupId` (ADR 0120): its back-off while it runs
   * or could still double (a failure within maxMs after it ended counts on), else undefined.
   */
  kept(groupId: string, now: number): BackoffState | undefined {
    const s = this.state.get(groupId);
    return s && now - s.until < this.maxMs ? { ...s } : undefined;
  }

  /** Takes over a back-off kept by a previous leader (a later one already here wins). */
  restore(groupId: string, state: BackoffState): void {
    const mine = this.state.get(groupId);
    if (!mine || mine.until < state.until) this.state.set(groupId, { ...state });
  }

  /** Groups with a back-off state, running or not. */
  groups(): string[] {
    return [...this.state.keys()];
  }

  /** Why `groupId` last backed off. */
  causeOf(groupId: string): string | undefined {
    return this.state.get(groupId)?.cause;
  }
}

/**
 * The snapshot with `held` groups unable to grow (max size = replicas) and Nodes that
 * have been NotReady for `unhealthyAfterMs` unable to take pods: the solver then plans
 * the pods onto the next best group. Pure.
 */
export function holdCapacity(
  snapshot: ClusterSnapshot, held: ReadonlyMap<string, string>, objects: ClusterObjects, now: number, unhealthyAfterMs = DEFAULT_UNHEALTHY_NODE_MS,
): ClusterSnapshot {
  const unhealthy = new Set<string>();
  for (const n of objects.nodes) {
    const ready = readyCondition(n);
    if (!ready || ready.status === 'True' || !n.metadata?.name) continue;
    const since = ready.lastTransitionTime ? new Date(ready.lastTransitionTime).getTime() : created(n);
    if (since !== undefined && now - since >= unhealthyAfterMs) unhealthy.add(n.metadata.name);
  }
  if (held.size === 0 && unhealthy.size === 0) return snapshot;
  return {
    ...snapshot,
    groups: snapshot.groups.map((g) => (held.has(g.id) ? { ...g, maxSize: Math.min(g.maxSize, Math.max(g.replicas, g.minSize)) } : g)),
    nodes: unhealthy.size === 0 ? snapshot.nodes : snapshot.nodes.map((n) => (unhealthy.has(n.name) ? { ...n, unschedulable: true } : n)),
  };
}
