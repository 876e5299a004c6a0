import type { V1Node } from '@kubernetes/client-node';
import type { ClusterSnapshot } from '../cluster/snapshot.js';
import { addInto, parseResourceList, type Resources } from '../scheduling/resources.js';

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
export class ExtenderState {
  private readonly usage = new Map<string, NodeUsage>();
  private readonly disrupting = new Map<string, string>();
  private readonly provisioned = new Map<string, ReadonlySet<string>>();

  static fromSnapshot(snapshot: ClusterSnapshot, nodes: readonly V1Node[] = []): ExtenderState {
    const state = new ExtenderState();
    for (const n of snapshot.nodes) {
      if (n.inFlight) continue;
      const requested: Resources = {};
      for (const p of n.pods) addInto(requested, p.requests);
      state.setNode(n.name, { allocatable: n.allocatable, requested });
      // Cordoned nodes are kube-scheduler's to skip; a node whose Machine is being
      // deleted or drained is one that new pods must not land on.
      if (n.unschedulable) state.markDisrupting(n.name, 'node is being drained or deleted');
    }
    for (const node of nodes) state.applyNodeAnnotations(node);
    return state;
  }

  setNode(name: string, usage: NodeUsage): void {
    this.usage.set(name, usage);
  }

  deleteNode(name: string): void {
    this.usage.delete(name);
    this.disrupting.delete(name);
    this.provisioned.delete(name);
  }

  node(name: string): NodeUsage | undefined {
    return this.usage.get(name);
  }

  get nodeCount(): number {
    return this.usage.size;
  }

  /** Adds a bound pod's requests to a node (the controller's incremental update). */
  addPod(nodeName: string, requests: Resources, times = 1): void {
    const u = this.usage.get(nodeName);
    if (u) this.usage.set(nodeName, { allocatable: u.allocatable, requested: addInto({ ...u.requested }, requests, times) });
  }

  markDisrupting(name: string, reason: string): void {
    this.disrupting.set(name, reason);
  }

  clearDisrupting(name: string): void {
    this.disrupting.delete(name);
  }

  /** Why the node is about to be disrupted, or undefined when it is not. */
  disruptionReason(name: string): string | undefined {
    return this.disrupting.get(name);
  }

  setProvisionedFor(name: string, owners: Iterable<string>): void {
    const set = new Set(owners);
    if (set.size === 0) this.provisioned.delete(name);
    else this.provisioned.set(name, set);
  }

  isProvisionedFor(name: string, owner: string | undefined): boolean {
    return owner !== undefined && this.provisioned.get(name)?.has(owner) === true;
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
