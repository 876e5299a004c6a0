import type { V1Node } from '@kubernetes/client-node';
import { DISRUPTION_TAINT_KEY, hasDisruptionTaint } from '../api/disruption-taint.js';
import type { ClusterSnapshot } from '../cluster/snapshot.js';
import { addInto, CPU, MEMORY, parseResourceList, type Resources } from '../scheduling/resources.js';

/**
 * Node annotation listing the workloads (`Kind/namespace/name` of the pods' controlling
 * owner, comma-separated) a node was provisioned for. Lets `headroom serve` read
 * provisioned-for from a snapshot file; the controller sets it in memory directly.
 */
export const PROVISIONED_FOR_ANNOTATION = 'headroom.dev/provisioned-for';

/** Node annotation marking a node Headroom is about to drain or consolidate; the value is the reason. */
export const DISRUPTION_ANNOTATION = 'headroom.dev/disruption';

export interface NodeUsage {
  allocatable: Resources;
  /** Sum of the requests of the pods bound to the node. */
  requested: Resources;
}

/**
 * What the extender knows, all in memory so no request waits on the API: per-node
 * usage and allocatable (precomputed, so a call costs O(candidates), not O(pods)), the
 * nodes Headroom is about to disrupt, and the workloads capacity was provisioned for.
 * Built from a ClusterSnapshot by `headroom serve`, kept current by the controller.
 */
/**
 * Everything known about one node, in one map entry so a call does one lookup per
 * candidate. `cpu`/`memory` fields are the usage numbers unpacked for the scoring loop.
 */
export interface NodeEntry {
  readonly usage?: NodeUsage;
  readonly allocCpu: number;
  readonly allocMemory: number;
  readonly requestedCpu: number;
  readonly requestedMemory: number;
  readonly disruption?: string;
  readonly provisionedFor?: ReadonlySet<string>;
}

export class ExtenderState {
  private readonly entries = new Map<string, NodeEntry>();
  private count = 0;
  private disrupting = 0;

  static fromSnapshot(snapshot: ClusterSnapshot, nodes: readonly V1Node[] = []): ExtenderState {
    const state = new ExtenderState();
    for (const n of snapshot.nodes) {
      if (n.inFlight) continue;
      const requested: Resources = {};
      for (const p of n.pods) addInto(requested, p.requests);
      state.setNode(n.name, { allocatable: n.allocatable, requested });
      // Cordoned nodes are kube-scheduler's to skip; a node whose Machine is being
      // deleted or drained is one that new pods must not land on.
      if (n.unschedulable) {
        state.markDisrupting(n.name, hasDisruptionTaint(n.taints) ? `Headroom is removing this node (${DISRUPTION_TAINT_KEY} taint)` : 'node is being drained or deleted');
      }
    }
    for (const node of nodes) state.applyNodeAnnotations(node);
    return state;
  }

  /** The whole entry for a node (the hot path); undefined when nothing is known about it. */
  entry(name: string): NodeEntry | undefined {
    return this.entries.get(name);
  }

  private update(name: string, change: Partial<NodeEntry>): void {
    const prev = this.entries.get(name);
    const next: NodeEntry = { allocCpu: 0, allocMemory: 0, requestedCpu: 0, requestedMemory: 0, ...prev, ...change };
    if (!next.usage && next.disruption === undefined && !next.provisionedFor) this.entries.delete(name);
    else this.entries.set(name, next);
    this.count += (next.usage ? 1 : 0) - (prev?.usage ? 1 : 0);
    this.disrupting += (next.disruption !== undefined ? 1 : 0) - (prev?.disruption !== undefined ? 1 : 0);
  }

  /** Replaces everything known about a node at once (the controller's per-node update). */
  setEntry(name: string, entry: { usage?: NodeUsage; disruption?: string; provisionedFor?: ReadonlySet<string> }): void {
    const prev = this.entries.get(name);
    const u = entry.usage;
    this.count += (u ? 1 : 0) - (prev?.usage ? 1 : 0);
    this.disrupting += (entry.disruption !== undefined ? 1 : 0) - (prev?.disruption !== undefined ? 1 : 0);
    if (!u && entry.disruption === undefined && !entry.provisionedFor) {
      this.entries.delete(name);
      return;
    }
    this.entries.set(name, {
      ...(u ? { usage: u } : {}),
      allocCpu: u?.allocatable[CPU] ?? 0,
      allocMemory: u?.allocatable[MEMORY] ?? 0,
      requestedCpu: u?.requested[CPU] ?? 0,
      requestedMemory: u?.requested[MEMORY] ?? 0,
      ...(entry.disruption !== undefined ? { disruption: entry.disruption } : {}),
      ...(entry.provisionedFor ? { provisionedFor: entry.provisionedFor } : {}),
    });
  }

  setNode(name: string, usage: NodeUsage): void {
    this.update(name, {
      usage,
      allocCpu: usage.allocatable[CPU] ?? 0,
      allocMemory: usage.allocatable[MEMORY] ?? 0,
      requestedCpu: usage.requested[CPU] ?? 0,
      requestedMemory: usage.requested[MEMORY] ?? 0,
    });
  }

  deleteNode(name: string): void {
    const prev = this.entries.get(name);
    if (prev?.usage) this.count--;
    if (prev?.disruption !== undefined) this.disrupting--;
    this.entries.delete(name);
  }

  node(name: string): NodeUsage | undefined {
    return this.entries.get(name)?.usage;
  }

  /** Nodes with known usage. */
  get nodeCount(): number {
    return this.count;
  }

  /** Nodes Headroom is about to disrupt: none (the usual case) lets the filter pass every candidate without a lookup. */
  get disruptingCount(): number {
    return this.disrupting;
  }

  /** Adds a bound pod's requests to a node (the controller's incremental update). */
  addPod(nodeName: string, requests: Resources, times = 1): void {
    const u = this.node(nodeName);
    if (u) this.setNode(nodeName, { allocatable: u.allocatable, requested: addInto({ ...u.requested }, requests, times) });
  }

  markDisrupting(name: string, reason: string): void {
    this.update(name, { disruption: reason });
  }

  clearDisrupting(name: string): void {
    if (this.entries.get(name)?.disruption !== undefined) this.update(name, { disruption: undefined });
  }

  /** Why the node is about to be disrupted, or undefined when it is not. */
  disruptionReason(name: string): string | undefined {
    return this.entries.get(name)?.disruption;
  }

  setProvisionedFor(name: string, owners: Iterable<string>): void {
    const set = new Set(owners);
    this.update(name, { provisionedFor: set.size === 0 ? undefined : set });
  }

  isProvisionedFor(name: string, owner: string | undefined): boolean {
    return owner !== undefined && this.entries.get(name)?.provisionedFor?.has(owner) === true;
  }

  /** Reads our annotations from a Node (snapshot files and tests). */
  applyNodeAnnotations(node: V1Node): void {
    const name = node.metadata?.name;
    const ann = node.metadata?.annotations;
    if (!name || !ann) return;
    const reason = ann[DISRUPTION_ANNOTATION];
    if (reason !== undefined) this.markDisrupting(name, reason || 'Headroom is disrupting this node');
    const owners = ann[PROVISIONED_FOR_ANNOTATION];
    if (owners) this.setProvisionedFor(name, owners.split(',').map((s) => s.trim()).filter(Boolean));
  }
}

/** Usage for a node the state does not know (NodeList mode): its allocatable, nothing requested. */
export function usageFromNode(node: V1Node): NodeUsage {
  return { allocatable: parseResourceList(node.status?.allocatable as Record<string, string> | undefined), requested: {} };
}
