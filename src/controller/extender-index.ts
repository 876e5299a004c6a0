import type { KubernetesObject, V1Node, V1Pod } from '@kubernetes/client-node';
import { DISRUPTION_TAINT_KEY, hasDisruptionTaint } from '../api/disruption-taint.js';
import { MACHINE_ANNOTATION, MACHINE_NAMESPACE_ANNOTATION, parseMachine, type MachineView } from '../api/capi.js';
import { validateObjectShape } from '../api/object-shape.js';
import type { UnstructuredObject } from '../api/unstructured-object.js';
import { mapNodesToGroups } from '../cluster/node-machine-map.js';
import { nodeAllocatable } from '../cluster/node-parse.js';
import { podClass, SKIP } from '../cluster/pod-classify.js';
import { DISRUPTION_ANNOTATION, ExtenderState, PROVISIONED_FOR_ANNOTATION } from '../extender/state.js';
import { addInto, type Resources } from '../scheduling/resources.js';

/** What one bound pod adds to its node's requested resources. */
interface Counted {
  node: string;
  requests: Resources;
}

/** What the extender reads from one Node object; two Nodes with equal facts answer the same. */
interface NodeFacts {
  node: V1Node;
  /** Undefined when the Node is invalid (no usage, as buildSnapshot skips it). */
  allocatable: Resources | undefined;
  /** Why kube-scheduler-visible fields make it a node new pods must not land on. */
  unschedulable: string | undefined;
  annotationReason: string | undefined;
  provisionedFor: ReadonlySet<string> | undefined;
}

const REMOVING = `Headroom is removing this node (${DISRUPTION_TAINT_KEY} taint)`;
const DRAINING = 'node is being drained or deleted';

/** Fields that decide which Machine a Node belongs to (node-machine-map.ts). */
function mappingKey(node: V1Node | undefined): string {
  const ann = node?.metadata?.annotations ?? {};
  return `${node?.spec?.providerID ?? ''}\n${ann[MACHINE_ANNOTATION] ?? ''}\n${ann[MACHINE_NAMESPACE_ANNOTATION] ?? ''}`;
}

/** Fields of a Machine that decide its node and whether that node is leaving. */
function machineKey(m: MachineView | undefined): string {
  return m ? `${m.namespace}/${m.name}\n${m.nodeName ?? ''}\n${m.providerID ?? ''}\n${m.deleting}\n${m.markedForDeletion}` : '';
}

const objectKey = (o: KubernetesObject) => `${o.metadata?.namespace || 'default'}/${o.metadata?.name ?? ''}`;

/**
 * The scheduler extender's ExtenderState kept from the cluster's objects one change
 * at a time, never from a whole snapshot: a Node, pod or Machine change costs O(1)
 * (plus, for a change to which Machine a node belongs, one pass over nodes and
 * Machines, coalesced by the caller). Its answers equal
 * `ExtenderState.fromSnapshot(buildSnapshot(objects), objects.nodes)` with the
 * disrupting() overlay, which the unit tests check after random changes:
 * - usage: a valid Node's allocatable and the requests of its bound, unfinished pods
 *   (podClass, the snapshot's own per-pod memo, so this also warms the controller's builds);
 * - disruption: the Disruptor's overlay, else the Node's disruption annotation, else
 *   cordoned / deleting / tainted by Headroom / its Machine deleting or marked for deletion;
 * - provisioned-for: the Node's annotation.
 * A Node update that changes none of these (kubelet and kwok heartbeats, conditions,
 * images) changes nothing here.
 */
export class ExtenderIndex {
  readonly state = new ExtenderState();
  private readonly counted = new Map<string, Counted>();
  private readonly requested = new Map<string, Resources>();
  private readonly nodes = new Map<string, NodeFacts>();
  private readonly machines = new Map<string, MachineView>();
  /** Nodes whose Machine is being deleted or marked for deletion. */
  private leaving = new Set<string>();
  private overlay: ReadonlyMap<string, string> = new Map();
  /** A change to the node <-> Machine mapping is waiting for remap(). */
  mappingStale = false;

  /** Applies a pod's new version (or its deletion). */
  pod(pod: V1Pod, deleted: boolean): void {
    const key = objectKey(pod);
    const before = this.counted.get(key);
    const after = deleted ? undefined : contribution(pod);
    if (before === undefined && after === undefined) return;
    if (before && after && before.node === after.node && sameResources(before.requests, after.requests)) return;
    if (before) {
      this.counted.delete(key);
      this.addRequests(before.node, before.requests, -1);
    }
    if (after) {
      this.counted.set(key, after);
      this.addRequests(after.node, after.requests, 1);
    }
  }

  private addRequests(node: string, requests: Resources, times: number): void {
    const sum = addInto({ ...this.requested.get(node) }, requests, times);
    this.requested.set(node, sum);
    if (this.nodes.has(node)) this.compose(node);
  }

  /** Applies a Node's new version (or its deletion). */
  node(node: V1Node, deleted: boolean): void {
    const name = node.metadata?.name;
    if (!name) return;
    const prev = this.nodes.get(name);
    if (deleted) {
      if (!prev) return;
      this.nodes.delete(name);
      this.mappingStale = true;
      this.compose(name);
      return;
    }
    const facts = nodeFacts(node);
    this.nodes.set(name, facts);
    if (!prev || !prev.allocatable !== !facts.allocatable || mappingKey(prev.node) !== mappingKey(node)) this.mappingStale = true;
    if (!prev || !sameFacts(prev, facts)) this.compose(name);
  }

  /** Applies a Machine's new version (or its deletion). */
  machine(obj: UnstructuredObject, deleted: boolean): void {
    const key = objectKey(obj);
    const prev = this.machines.get(key);
    let view: MachineView | undefined;
    if (!deleted) {
      try {
        view = parseMachine(obj);
      } catch {
        view = undefined; // invalid: the snapshot skips it too
      }
    }
    if (view) this.machines.set(key, view);
    else this.machines.delete(key);
    if (machineKey(prev) !== machineKey(view)) this.mappingStale = true;
  }

  /** Recomputes which nodes are leaving with their Machine (one pass over nodes and Machines). */
  remap(): void {
    if (!this.mappingStale) return;
    this.mappingStale = false;
    const valid: V1Node[] = [];
    for (const f of this.nodes.values()) if (f.allocatable) valid.push(f.node);
    const { machineOfNode } = mapNodesToGroups(valid, [...this.machines.values()], []);
    const next = new Set<string>();
    for (const [node, m] of machineOfNode) if (m.deleting || m.markedForDeletion) next.add(node);
    const prev = this.leaving;
    this.leaving = next;
    for (const n of next) if (!prev.has(n)) this.compose(n);
    for (const n of prev) if (!next.has(n)) this.compose(n);
  }

  /** Nodes the Disruptor is removing (before the cache shows it), with the reason; overrides the rest. */
  setOverlay(overlay: ReadonlyMap<string, string>): void {
    const prev = this.overlay;
    if (prev.size === 0 && overlay.size === 0) return;
    this.overlay = new Map(overlay);
    for (const [n, r] of this.overlay) if (prev.get(n) !== r) this.compose(n);
    for (const n of prev.keys()) if (!this.overlay.has(n)) this.compose(n);
  }

  private compose(name: string): void {
    const f = this.nodes.get(name);
    const usage = f?.allocatable ? { allocatable: f.allocatable, requested: this.requested.get(name) ?? {} } : undefined;
    const unschedulable = f?.unschedulable ?? (usage && this.leaving.has(name) ? DRAINING : undefined);
    const disruption = this.overlay.get(name) ?? f?.annotationReason ?? (usage ? unschedulable : undefined);
    this.state.setEntry(name, {
      ...(usage ? { usage } : {}),
      ...(disruption !== undefined ? { disruption } : {}),
      ...(f?.provisionedFor ? { provisionedFor: f.provisionedFor } : {}),
    });
  }
}

function nodeFacts(node: V1Node): NodeFacts {
  let allocatable: Resources | undefined;
  try {
    validateObjectShape(node);
    allocatable = nodeAllocatable(node);
  } catch {
    allocatable = undefined; // invalid: buildSnapshot skips it (and reports it)
  }
  const ann = node.metadata?.annotations;
  const reason = ann?.[DISRUPTION_ANNOTATION];
  const owners = ann?.[PROVISIONED_FOR_ANNOTATION]?.split(',').map((s) => s.trim()).filter(Boolean) ?? [];
  const removing = hasDisruptionTaint(node.spec?.taints);
  return {
    node,
    allocatable,
    unschedulable: removing ? REMOVING : node.spec?.unschedulable === true || !!node.metadata?.deletionTimestamp ? DRAINING : undefined,
    annotationReason: reason === undefined ? undefined : reason || 'Headroom is disrupting this node',
    provisionedFor: owners.length > 0 ? new Set(owners) : undefined,
  };
}

function sameFacts(a: NodeFacts, b: NodeFacts): boolean {
  return (a.allocatable === b.allocatable || (!!a.allocatable && !!b.allocatable && sameResources(a.allocatable, b.allocatable)))
    && a.unschedulable === b.unschedulable && a.annotationReason === b.annotationReason
    && sameOwners(a.provisionedFor, b.provisionedFor);
}

function sameOwners(a: ReadonlySet<string> | undefined, b: ReadonlySet<string> | undefined): boolean {
  if (a === b) return true;
  if (!a || !b || a.size !== b.size) return false;
  for (const x of a) if (!b.has(x)) return false;
  return true;
}

const rejectInvalid = (o: KubernetesObject): boolean => {
  try {
    validateObjectShape(o);
    return true;
  } catch {
    return false;
  }
};
const swallow = <T>(fn: () => T): T | undefined => {
  try {
    return fn();
  } catch {
    return undefined;
  }
};

/** What a pod adds to its node, exactly as buildSnapshot counts it: valid, bound and not finished. */
function contribution(pod: V1Pod): Counted | undefined {
  const c = podClass(pod, rejectInvalid, swallow);
  if (!c || c === SKIP || !c.nodeName) return undefined;
  return { node: c.nodeName, requests: c.sp.requests };
}

function sameResources(a: Resources, b: Resources): boolean {
  const ka = Object.keys(a);
  return ka.length === Object.keys(b).length && ka.every((k) => a[k] === b[k]);
}
