// Over 400 lines: node, group, pod and volume translation plus the module-level memo of
// the last build live together; splitting it by concept and moving the memo into a
// SnapshotBuilder per loop is issue 11 step 4, not done yet.
import type { KubernetesObject, V1Node, V1Pod, V1Taint } from '@kubernetes/client-node';
import { parseCapacityAnnotations, parseScalingBounds, HOSTNAME_LABEL, ZONE_LABEL } from '../api/capacity-annotations.js';
import { hasDisruptionTaint } from '../api/disruption-taint.js';
import type { LogSubject } from '../api/log.js';
import { parseMachine, parseNodeGroupObject, type MachineView, type NodeGroupView } from '../api/capi.js';
import { nodeSyncedLabels } from '../api/capi-node-labels.js';
import {
  infrastructureObjectKey, infrastructureRefKey, parseInfrastructureTemplateCapacity, withInfrastructureTemplate,
  type InfrastructureTemplateCapacity,
} from '../api/infrastructure-template.js';
import { NODEPOOL_LABEL, NodePoolError, parseNodePool, type NodePool } from '../api/nodepool.js';
import { validateObjectShape } from '../api/object-shape.js';
import { ObjectValidationError } from '../api/validation-error.js';
import { isDemand, toSchedulingPod } from '../scheduling/pod-demand.js';
import { QuantityError } from '../scheduling/quantity.js';
import { CPU, MEMORY, parseResourceList, type Resources } from '../scheduling/resources.js';
import type { SchedulingPod } from '../scheduling/scheduling-pod.js';
import type { VolumeTopology } from '../scheduling/volume-topology.js';
import { buildNodeGroup, daemonSetTemplatePod, isNodeReady, learnNodeShape, type LearnedShape } from './node-group.js';
import { mapNodesToGroups, resolveMachineSetGroup } from './node-machine-map.js';
import type { ClusterObjects } from './objects.js';
import type { ClusterSnapshot, NodeGroup, PoolLimits, SnapshotNode } from './snapshot.js';

/** Something wrong with the input that did not stop the build (or, when strict, did). */
export interface SnapshotIssue {
  severity: 'error' | 'warning';
  message: string;
  /** The object it is about, when one is (log lines carry its kind, namespace and name). */
  object?: LogSubject;
}

function subjectOf(err: ObjectValidationError | NodePoolError): LogSubject {
  return err instanceof NodePoolError
    ? { kind: 'NodePool', name: err.nodePool }
    : { kind: err.kind, ...(err.namespace ? { namespace: err.namespace } : {}), name: err.objectName };
}

export interface BuildSnapshotOptions {
  /**
   * true (default): the first invalid object throws (ObjectValidationError,
   * NodePoolError), as `headroom plan` wants. false: invalid objects are skipped and
   * reported through onIssue, as a long-running controller wants.
   */
  strict?: boolean;
  /** Invalid objects (non-strict) and warnings, such as a managed group with no known shape. */
  onIssue?: (issue: SnapshotIssue) => void;
  /** Predicted demand (forecasts, CapacityBuffers) appended to pendingPods. */
  extraPendingPods?: readonly SchedulingPod[];
}

const TERMINAL = new Set(['Succeeded', 'Failed']);

/*
 * Per-object memos of what depends on one object alone (shape validation, a pod's
 * SchedulingPod with its equivalence hash, a node's parsed allocatable and taints).
 * A controller or the simulator rebuilds the snapshot every cycle from mostly the
 * same objects, and converting every pod again dominated that cost. Keyed by object
 * identity, which is sound because ClusterStateSource objects are immutable by
 * contract (a change is a new object); only successes are remembered, so invalid
 * objects are reported on every build as before. The cached values are shared
 * between snapshots, which are immutable too.
 */
const validObjects = new WeakSet<KubernetesObject>();
const parsedNodeMemo = new WeakMap<V1Node, { allocatable: Resources; taints: V1Taint[] }>();
const machineViewMemo = new WeakMap<KubernetesObject, MachineView>();
const nodeGroupViewMemo = new WeakMap<KubernetesObject, NodeGroupView>();
/** null: the template reports no capacity. */
const templateCapacityMemo = new WeakMap<KubernetesObject, InfrastructureTemplateCapacity | null>();

/** memo's value for o, else fn() through guard (a success is remembered; a failure is reported again next time). */
function memoized<K extends object, V>(memo: WeakMap<K, V>, o: K, guard: <T>(fn: () => T) => T | undefined, fn: () => V): V | undefined {
  const hit = memo.get(o);
  if (hit !== undefined) return hit;
  const v = guard(fn);
  if (v !== undefined) memo.set(o, v);
  return v;
}

/**
 * learnNodeShape is pure in each node's allocatable, labels and taints, which are the
 * node object's (or its memo's) own objects: a group's last result is reused while
 * they are all identical.
 */
const lastShape = new Map<string, { ready: readonly SnapshotNode[]; learned: LearnedShape | undefined }>();

function learnedShape(groupId: string, ready: readonly SnapshotNode[]): LearnedShape | undefined {
  const last = lastShape.get(groupId);
  if (last && last.ready.length === ready.length && ready.every((n, i) => {
    const l = last.ready[i]!;
    return l.allocatable === n.allocatable && l.labels === n.labels && l.taints === n.taints;
  })) return last.learned;
  const learned = learnNodeShape(ready);
  lastShape.set(groupId, { ready, learned });
  return learned;
}

/** What the pod pass makes of one pod: skipped, or its SchedulingPod (bound to nodeName, else pending). */
const SKIP = 'skip';
type PodClass = typeof SKIP | { sp: SchedulingPod; nodeName: string | undefined; ephemeralClaims?: EphemeralClaim[] };
const podClassMemo = new WeakMap<V1Pod, PodClass>();

/** Classifies and converts a pod; undefined (not remembered) when it is invalid, so it is reported again next build. */
function classifyPod(pod: V1Pod, valid: (o: KubernetesObject) => boolean, guard: <T>(fn: () => T) => T | undefined): PodClass | undefined {
  if (!valid(pod)) return undefined;
  let c: PodClass = SKIP;
  const nodeName = pod.spec?.nodeName;
  if (!TERMINAL.has(pod.status?.phase ?? '') && (nodeName || isDemand(pod))) {
    const sp = guard(() => schedulingPodOf(pod));
    if (!sp) return undefined;
    c = { sp, nodeName: nodeName || undefined };
    if (!nodeName) {
      for (const v of pod.spec?.volumes ?? []) {
        const tmpl = v.ephemeral?.volumeClaimTemplate;
        if (tmpl) (c.ephemeralClaims ??= []).push({ key: `${sp.namespace}/${sp.name}-${v.name}`, storageClassName: tmpl.spec?.storageClassName });
      }
    }
  }
  podClassMemo.set(pod, c);
  return c;
}

/**
 * mapNodesToGroups is pure; with the memos above its inputs are the same objects
 * until a node, Machine or group changes, so the last result is reused when every
 * input element is identical (checked element by element: a caller may reuse an array).
 */
let lastMap: { nodes: V1Node[]; machines: MachineView[]; views: NodeGroupView[]; map: ReturnType<typeof mapNodesToGroups> } | undefined;
const sameElements = <T>(a: readonly T[], b: readonly T[]) => a.length === b.length && a.every((x, i) => x === b[i]);

function mappedNodes(nodes: V1Node[], machines: MachineView[], views: NodeGroupView[]): ReturnType<typeof mapNodesToGroups> {
  if (lastMap && sameElements(lastMap.nodes, nodes) && sameElements(lastMap.machines, machines) && sameElements(lastMap.views, views)) return lastMap.map;
  const map = mapNodesToGroups(nodes, machines, views);
  lastMap = { nodes, machines, views, map };
  return map;
}
const DEFAULT_CLASS_ANNOTATION = 'storageclass.kubernetes.io/is-default-class';
const NAMESPACE_NAME_LABEL = 'kubernetes.io/metadata.name';

/**
 * Builds the immutable ClusterSnapshot the solver works on. Pure (no I/O, no
 * clock) and linear in the input: every list is walked once into maps; nothing
 * loops pods x nodes. See docs/adr/0020-capacity-model.md for the group model.
 */
export function buildSnapshot(objects: ClusterObjects, options: BuildSnapshotOptions = {}): ClusterSnapshot {
  const strict = options.strict ?? true;
  // A controller's loops (provisioning, disruption) often build again from the very
  // same objects: reuse the last snapshot then, replaying its issues.
  const inputs = SNAPSHOT_INPUTS.map((k) => objects[k] ?? NONE);
  if (!options.extraPendingPods && lastBuild && lastBuild.strict === strict
    && inputs.every((list, i) => sameElements(lastBuild!.inputs[i]!, list))) {
    for (const issue of lastBuild.issues) options.onIssue?.(issue);
    return lastBuild.snapshot;
  }
  const issues: SnapshotIssue[] = [];
  const snapshot = buildFresh(objects, { ...options, strict, onIssue: (i) => { issues.push(i); options.onIssue?.(i); } });
  // Copies: a caller may push into its arrays later (a stale hit otherwise).
  if (!options.extraPendingPods) lastBuild = { strict, inputs: inputs.map((list) => list.slice()), issues, snapshot };
  return snapshot;
}

/** The lists buildSnapshot reads. */
const SNAPSHOT_INPUTS = [
  'pods', 'nodes', 'daemonSets', 'persistentVolumes', 'persistentVolumeClaims', 'storageClasses', 'nodeGroups', 'machines',
  'nodePools', 'namespaces', 'infrastructureTemplates',
] as const satisfies ReadonlyArray<keyof ClusterObjects>;
const NONE: readonly KubernetesObject[] = [];
let lastBuild: { strict: boolean; inputs: ReadonlyArray<readonly KubernetesObject[]>; issues: SnapshotIssue[]; snapshot: ClusterSnapshot } | undefined;

function buildFresh(objects: ClusterObjects, options: BuildSnapshotOptions): ClusterSnapshot {
  const strict = options.strict ?? true;
  const report = (issue: SnapshotIssue) => options.onIssue?.(issue);
  /** Runs a parse; on a validation error throws (strict) or reports and returns undefined. */
  const guard = <T>(fn: () => T): T | undefined => {
    try {
      return fn();
    } catch (err) {
      if (strict || !(err instanceof ObjectValidationError || err instanceof NodePoolError)) throw err;
      report({ severity: 'error', message: err.message, object: subjectOf(err) });
      return undefined;
    }
  };

  const valid = (o: KubernetesObject) => {
    if (validObjects.has(o)) return true;
    const ok = guard(() => { validateObjectShape(o); return true; }) === true;
    if (ok) validObjects.add(o);
    return ok;
  };

  // CAPI objects.
  const views: NodeGroupView[] = [];
  for (const o of objects.nodeGroups) {
    const v = memoized(nodeGroupViewMemo, o, guard, () => parseNodeGroupObject(o));
    if (v) views.push(v);
  }
  const machines: MachineView[] = [];
  for (const o of objects.machines) {
    const m = memoized(machineViewMemo, o, guard, () => parseMachine(o));
    if (m) machines.push(m);
  }
  // Nodes that pass validation and whose quantities parse, before anything counts them.
  const parsedNodes: Array<{ node: V1Node; name: string; allocatable: Resources; taints: V1Taint[] }> = [];
  for (const node of objects.nodes) {
    const name = node.metadata?.name;
    if (!name || !valid(node)) continue;
    const parsed = memoized(parsedNodeMemo, node, guard, () => ({ allocatable: nodeAllocatable(node), taints: schedulingTaints(node) }));
    if (parsed) parsedNodes.push({ node, name, ...parsed });
  }
  const map = mappedNodes(parsedNodes.map((n) => n.node), machines, views);
  const pools: NodePool[] = [];
  for (const o of objects.nodePools) {
    const p = guard(() => parseNodePool(o));
    if (p) pools.push(p);
  }
  // Infrastructure templates (scale from zero): by key, parsed when a group refers to one.
  const infrastructureObjects = new Map<string, (typeof objects.nodeGroups)[number]>();
  for (const o of objects.infrastructureTemplates ?? []) infrastructureObjects.set(infrastructureObjectKey(o), o);
  const templateCapacityOf = (view: NodeGroupView): InfrastructureTemplateCapacity | undefined => {
    const ref = view.template.infrastructureRef;
    const obj = ref && infrastructureObjects.get(infrastructureRefKey(view.namespace, ref));
    return obj ? memoized(templateCapacityMemo, obj, guard, () => parseInfrastructureTemplateCapacity(obj) ?? null) ?? undefined : undefined;
  };

  // Pods: one pass, bound pods by node, demand aside.
  const podsByNode = new Map<string, SchedulingPod[]>();
  const pendingPods: SchedulingPod[] = [];
  const podNamespaces = new Set<string>();
  const ephemeralClaims: EphemeralClaim[] = [];
  let lastNamespace: string | undefined;
  for (const pod of objects.pods) {
    const c = podClassMemo.get(pod) ?? classifyPod(pod, valid, guard);
    if (!c || c === SKIP) continue;
    const { sp, nodeName } = c;
    if (sp.namespace !== lastNamespace) podNamespaces.add((lastNamespace = sp.namespace));
    if (c.ephemeralClaims) ephemeralClaims.push(...c.ephemeralClaims);
    if (nodeName) {
      let list = podsByNode.get(nodeName);
      if (!list) podsByNode.set(nodeName, (list = []));
      list.push(sp);
    } else {
      pendingPods.push(sp);
    }
  }
  if (options.extraPendingPods) pendingPods.push(...options.extraPendingPods);

  // Existing nodes.
  const nodes: SnapshotNode[] = [];
  const readyNodes = new Map<string, SnapshotNode>();
  /** Nodes being deleted (or whose Machine is): no longer part of the group's replicas. */
  const goingAway = new Set<string>();
  for (const { node, name, allocatable, taints } of parsedNodes) {
    const machine = map.machineOfNode.get(name);
    const sn: SnapshotNode = {
      name,
      // CAPI keeps its Machine's node labels on the Node (re-applied on every reconcile);
      // a new Node has them a moment after it appears, so count them from the start.
      labels: machine ? { ...node.metadata?.labels, ...nodeSyncedLabels(machine.labels) } : node.metadata?.labels ?? {},
      taints,
      allocatable,
      pods: podsByNode.get(name) ?? [],
      inFlight: false,
      unschedulable: node.spec?.unschedulable === true || !!node.metadata?.deletionTimestamp || hasDisruptionTaint(node.spec?.taints)
        || (machine !== undefined && (machine.deleting || machine.markedForDeletion)),
      ...(machine ? { machine: { namespace: machine.namespace, name: machine.name, leaving: machine.deleting || machine.markedForDeletion } } : {}),
    };
    nodes.push(sn);
    if (node.metadata?.deletionTimestamp || machine?.deleting) goingAway.add(name);
    if (isNodeReady(node) && !node.metadata?.deletionTimestamp) readyNodes.set(name, sn);
  }
  const nodeByName = new Map<string, SnapshotNode>();
  for (const n of nodes) nodeByName.set(n.name, n);

  // DaemonSet template pods, once for all groups.
  const dsPods: SchedulingPod[] = [];
  for (const ds of objects.daemonSets) {
    const dsNs = ds.metadata?.namespace || 'default';
    const dsName = ds.metadata?.name ?? '';
    const p = guard(() => {
      validateObjectShape(ds);
      return withObjectContext('DaemonSet', dsNs, dsName, 'spec.template.spec', () => daemonSetTemplatePod(ds));
    });
    if (p) dsPods.push(p);
  }

  // Managed groups.
  const groups: NodeGroup[] = [];
  for (const view of views) {
    if (view.deleting) continue;
    if (view.kind === 'MachineSet' && resolveMachineSetGroup(view) !== view.id) continue; // part of a MachineDeployment
    const group = guard(() => {
      const bounds = parseScalingBounds(view);
      if (!bounds) return undefined;
      const capacity = withInfrastructureTemplate(parseCapacityAnnotations(view), view.annotations, templateCapacityOf(view));
      const ready: SnapshotNode[] = [];
      for (const n of map.nodesOfGroup.get(view.id) ?? []) {
        const sn = readyNodes.get(n);
        if (sn) ready.push(sn);
      }
      const learned: LearnedShape | undefined = learnedShape(view.id, ready);
      const g = buildNodeGroup({ view, bounds, capacity, learned, daemonSetPods: dsPods, pools });
      if (!g) {
        report({
          severity: 'warning',
          object: { kind: view.kind, namespace: view.namespace, name: view.name },
          message: `${view.kind} ${view.namespace}/${view.name}: node shape unknown: set the capacity.cluster-autoscaler.kubernetes.io/cpu and memory annotations (no Ready nodes to learn from); not planned on`,
        });
      }
      return g;
    });
    if (group) groups.push(group);
  }

  // Ownership and in-flight capacity of managed groups.
  const inFlight: SnapshotNode[] = [];
  for (const g of groups) {
    const names = map.nodesOfGroup.get(g.id) ?? [];
    for (const n of names) {
      const sn = nodeByName.get(n);
      if (sn) sn.groupId = g.id;
    }
    let staying = 0;
    for (const n of names) if (!goingAway.has(n)) staying++;
    const missing = g.replicas - staying;
    const pendingMachines = map.pendingMachinesOfGroup.get(g.id) ?? [];
    for (let i = 0; i < missing; i++) {
      const m = pendingMachines[i];
      const name = `in-flight:${g.namespace}/${g.name}:${m ? m.name : i - pendingMachines.length}`;
      const labels: Record<string, string> = { ...g.template.labels, [HOSTNAME_LABEL]: name };
      if (m?.failureDomain && labels[ZONE_LABEL] === undefined) labels[ZONE_LABEL] = m.failureDomain;
      inFlight.push({
        name,
        groupId: g.id,
        labels,
        taints: g.template.taints,
        allocatable: g.template.allocatable,
        pods: (g.daemonSetPods ?? []).map((p) => ({ ...p, name: `${p.name}-${name}`, key: `${p.key}-${name}`, nodeName: name })),
        inFlight: true,
        unschedulable: false,
      });
    }
  }
  nodes.push(...inFlight);

  return {
    groups,
    nodes,
    pendingPods,
    volumes: volumeTopology({
      persistentVolumes: objects.persistentVolumes.filter(valid),
      persistentVolumeClaims: objects.persistentVolumeClaims.filter(valid),
      storageClasses: objects.storageClasses.filter(valid),
    }, ephemeralClaims),
    namespaceLabels: namespaceLabels(objects.namespaces.filter(valid), podNamespaces),
    limits: poolLimits(pools, groups, nodes),
    disruption: Object.fromEntries(pools.map((p) => [p.name, p.disruption])),
  };
}

/**
 * Taints that only say a node is still starting (or briefly unreachable); they go
 * away on their own, so a starting node is capacity on its way, as Karpenter
 * treats it (KnownEphemeralTaints). Only the NoSchedule forms: a dead node also
 * carries the NoExecute ones, which stay and keep pods off it.
 */
const EPHEMERAL_TAINTS = new Set([
  'node.kubernetes.io/not-ready',
  'node.kubernetes.io/unreachable',
  'node.cloudprovider.kubernetes.io/uninitialized',
  'node.cluster.x-k8s.io/uninitialized',
]);

function schedulingTaints(node: V1Node): V1Taint[] {
  const taints = (node.spec?.taints ?? []) as V1Taint[];
  if (!taints.some((t) => t.effect === 'NoSchedule' && EPHEMERAL_TAINTS.has(t.key))) return taints;
  return taints.filter((t) => !(t.effect === 'NoSchedule' && EPHEMERAL_TAINTS.has(t.key)));
}

/** Runs fn, turning a QuantityError into an ObjectValidationError on the given object. */
function withObjectContext<T>(kind: string, namespace: string, name: string, field: string, fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if (err instanceof QuantityError) throw new ObjectValidationError(kind, namespace, name, field, err.message);
    throw err;
  }
}

function schedulingPodOf(pod: V1Pod): SchedulingPod {
  const ns = pod.metadata?.namespace || 'default';
  try {
    return toSchedulingPod(pod);
  } catch (err) {
    if (!(err instanceof QuantityError)) throw err;
    throw new ObjectValidationError('Pod', ns, pod.metadata?.name ?? '', quantityField(pod, err.input), err.message);
  }
}

/** The field path of a bad quantity in a pod, for the error message. */
function quantityField(pod: V1Pod, input: unknown): string {
  const spec = pod.spec;
  for (const list of ['containers', 'initContainers'] as const) {
    const cs = spec?.[list] ?? [];
    for (let i = 0; i < cs.length; i++) {
      for (const kind of ['requests', 'limits'] as const) {
        const rl = (cs[i]!.resources?.[kind] ?? {}) as Record<string, unknown>;
        for (const [r, q] of Object.entries(rl)) if (q === input) return `spec.${list}[${i}].resources.${kind}.${r}`;
      }
    }
  }
  for (const [r, q] of Object.entries((spec?.overhead ?? {}) as Record<string, unknown>)) if (q === input) return `spec.overhead.${r}`;
  return 'spec';
}

function nodeAllocatable(node: V1Node): Resources {
  const list = (node.status?.allocatable ?? node.status?.capacity ?? {}) as Record<string, string>;
  try {
    return parseResourceList(list);
  } catch (err) {
    if (!(err instanceof QuantityError)) throw err;
    const field = Object.entries(list).find(([, q]) => q === err.input)?.[0];
    throw new ObjectValidationError('Node', '', node.metadata?.name ?? '', `status.allocatable${field ? `.${field}` : ''}`, err.message);
  }
}

/** The claim a pending pod's generic ephemeral volume will get, from its template. */
interface EphemeralClaim {
  key: string;
  storageClassName: string | undefined;
}

function volumeTopology(
  objects: Pick<ClusterObjects, 'persistentVolumes' | 'persistentVolumeClaims' | 'storageClasses'>, ephemeralClaims: readonly EphemeralClaim[],
): VolumeTopology {
  const out: VolumeTopology = { persistentVolumes: {}, claims: {}, storageClasses: {} };
  let defaultClass: string | undefined;
  for (const sc of objects.storageClasses) {
    const name = sc.metadata?.name;
    if (!name) continue;
    const entry: VolumeTopology['storageClasses'][string] = { waitForFirstConsumer: sc.volumeBindingMode === 'WaitForFirstConsumer' };
    if (sc.allowedTopologies?.length) entry.allowedTopologies = sc.allowedTopologies;
    out.storageClasses[name] = entry;
    if (sc.metadata?.annotations?.[DEFAULT_CLASS_ANNOTATION] === 'true') defaultClass = name;
  }
  for (const pv of objects.persistentVolumes) {
    const name = pv.metadata?.name;
    if (!name) continue;
    out.persistentVolumes[name] = pv.spec?.nodeAffinity ? { nodeAffinity: pv.spec.nodeAffinity } : {};
  }
  for (const pvc of objects.persistentVolumeClaims) {
    const name = pvc.metadata?.name;
    if (!name) continue;
    const volumeName = pvc.spec?.volumeName;
    // Unset class: the DefaultStorageClass admission plugin fills it in; "" means no class.
    const storageClassName = pvc.spec?.storageClassName ?? defaultClass;
    const claim: VolumeTopology['claims'][string] = { bound: !!volumeName };
    if (volumeName) claim.volumeName = volumeName;
    if (storageClassName) claim.storageClassName = storageClassName;
    out.claims[`${pvc.metadata?.namespace || 'default'}/${name}`] = claim;
  }
  // Not created yet: it will be, unbound, from the pod's template.
  for (const e of ephemeralClaims) {
    if (out.claims[e.key]) continue;
    const storageClassName = e.storageClassName ?? defaultClass;
    out.claims[e.key] = storageClassName ? { bound: false, storageClassName } : { bound: false };
  }
  return out;
}

function namespaceLabels(namespaces: readonly KubernetesObject[], podNamespaces: ReadonlySet<string>): Record<string, Record<string, string>> {
  const out: Record<string, Record<string, string>> = {};
  // The apiserver labels every namespace with its name; namespaces absent from the input still have that label.
  for (const ns of podNamespaces) out[ns] = { [NAMESPACE_NAME_LABEL]: ns };
  for (const ns of namespaces) {
    const name = ns.metadata?.name;
    if (name) out[name] = { [NAMESPACE_NAME_LABEL]: name, ...(ns.metadata?.labels ?? {}) };
  }
  return out;
}

function poolLimits(pools: readonly NodePool[], groups: readonly NodeGroup[], nodes: readonly SnapshotNode[]): Record<string, PoolLimits> {
  const out: Record<string, PoolLimits> = {};
  if (pools.length === 0) return out;
  const poolOfGroup = new Map<string, string>();
  for (const g of groups) if (g.nodePool) poolOfGroup.set(g.id, g.nodePool);
  for (const p of pools) {
    const l: PoolLimits = { used: { cpu: 0, memory: 0, nodes: 0 } };
    if (p.limits.cpu !== undefined) l.cpu = p.limits.cpu;
    if (p.limits.memory !== undefined) l.memory = p.limits.memory;
    if (p.limits.nodes !== undefined) l.nodes = p.limits.nodes;
    out[p.name] = l;
  }
  for (const n of nodes) {
    const pool = (n.groupId ? poolOfGroup.get(n.groupId) : undefined) ?? n.labels[NODEPOOL_LABEL];
    const l = pool ? out[pool] : undefined;
    if (!l) continue;
    l.used.cpu += n.allocatable[CPU] ?? 0;
    l.used.memory += n.allocatable[MEMORY] ?? 0;
    l.used.nodes += 1;
  }
  return out;
}
