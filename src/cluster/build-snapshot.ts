import type { KubernetesObject, V1Node, V1Pod, V1Taint } from '@kubernetes/client-node';
import { autoscalingOptionProblems } from '../api/autoscaling-options.js';
import { parseCapacityAnnotations, parseScalingBounds } from '../api/capacity-annotations.js';
import { hasDisruptionTaint } from '../api/disruption-taint.js';
import type { LogSubject } from '../api/log.js';
import { parseMachineOnce, parseNodeGroupObjectOnce, type MachineView, type NodeGroupView } from '../api/capi.js';
import { nodeSyncedLabels } from '../api/capi-node-labels.js';
import {
  infrastructureObjectKey, infrastructureRefKey, parseInfrastructureTemplateCapacity, withInfrastructureTemplate,
  type InfrastructureTemplateCapacity,
} from '../api/infrastructure-template.js';
import { NodePoolError, parseNodePoolOnce, type NodePool } from '../api/nodepool.js';
import { validateObjectShape } from '../api/object-shape.js';
import { ObjectValidationError } from '../api/validation-error.js';
import { QuantityError } from '../scheduling/quantity.js';
import type { Resources } from '../scheduling/resources.js';
import type { SchedulingPod } from '../scheduling/scheduling-pod.js';
import { DEFAULT_EXPENDABLE_PODS_PRIORITY_CUTOFF } from '../scheduling/expendable.js';
import { inFlightNodes } from './in-flight-nodes.js';
import { podsCounted, sortPending } from './left-alone.js';
import { namespaceLabels } from './namespace-labels.js';
import { applyCsiLimits } from './csi-snapshot.js';
import { applyDra } from './dra-snapshot.js';
import { buildNodeGroup, daemonSetTemplatePod, isNodeReady, learnNodeShape, type LearnedShape } from './node-group.js';
import { mapNodesToGroups, resolveMachineSetGroup } from './node-machine-map.js';
import { nodeAllocatable, schedulingTaints } from './node-parse.js';
import type { ClusterObjects } from './objects.js';
import { podClass, type EphemeralClaim } from './pod-classify.js';
import { placePods, type ClassifiedPod, type PodPlacement } from './pod-placement.js';
import { poolLimits } from './pool-limits.js';
import { poolTemplates } from './pool-templates.js';
import type { ClusterSnapshot, NodeGroup, SnapshotNode } from './snapshot.js';
import { volumeTopology } from './volume-topology.js';

const NO_ISSUES: readonly SnapshotIssue[] = [];

/** Something wrong with the input that did not stop the build (or, when strict, did). */
export interface SnapshotIssue {
  severity: 'error' | 'warning';
  message: string;
  /** The object it is about, when one is (log lines carry its kind, namespace and name). */
  object?: LogSubject;
  /** CamelCase reason of the Warning Event the controller writes on the object; default by severity. */
  reason?: string;
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
  /**
   * Pods with a priority below this are expendable (Cluster Autoscaler's
   * --expendable-pods-priority-cutoff; default -10): no demand, and not counted on nodes.
   */
  expendablePodsPriorityCutoff?: number;
}

/*
 * Per-object memos of what depends on one object alone (shape validation, a pod's
 * SchedulingPod with its equivalence hash, a node's parsed allocatable and taints;
 * Machine and group views are capi.ts's parse*Once).
 * A controller or the simulator rebuilds the snapshot every cycle from mostly the
 * same objects, and converting every pod again dominated that cost. Keyed by object
 * identity, which is sound because ClusterStateSource objects are immutable by
 * contract (a change is a new object); only successes are remembered, so invalid
 * objects are reported on every build as before. The cached values are shared
 * between snapshots, which are immutable too. WeakMaps: an entry goes with its object,
 * so these are safe at module level (the pod memo is in pod-classify.ts). Memos that
 * hold whole inputs (the last build, node mapping, learned shapes) are a
 * SnapshotBuilder's, owned by the loop that builds.
 */
const validObjects = new WeakSet<KubernetesObject>();
const parsedNodeMemo = new WeakMap<V1Node, { allocatable: Resources; taints: V1Taint[] }>();
/** null: the template reports no capacity. */
const templateCapacityMemo = new WeakMap<KubernetesObject, InfrastructureTemplateCapacity | null>();
/**
 * A Node's labels with its Machine's node labels, by the two label objects: the same
 * object from build to build, so a SnapshotBuilder's learned node shapes (compared by
 * identity) are kept while neither changes.
 */
const syncedLabelsMemo = new WeakMap<object, WeakMap<object, Record<string, string>>>();
const NO_LABELS: Record<string, string> = Object.freeze({}) as Record<string, string>;
function labelsWithMachine(nodeLabels: Record<string, string> | undefined, machineLabels: Readonly<Record<string, string>>): Record<string, string> {
  const own = nodeLabels ?? NO_LABELS;
  let byMachine = syncedLabelsMemo.get(own);
  if (!byMachine) syncedLabelsMemo.set(own, (byMachine = new WeakMap()));
  let labels = byMachine.get(machineLabels);
  if (!labels) byMachine.set(machineLabels, (labels = { ...own, ...nodeSyncedLabels(machineLabels) }));
  return labels;
}

/** memo's value for o, else fn() through guard (a success is remembered; a failure is reported again next time). */
function memoized<K extends object, V>(memo: WeakMap<K, V>, o: K, guard: <T>(fn: () => T) => T | undefined, fn: () => V): V | undefined {
  const hit = memo.get(o);
  if (hit !== undefined) return hit;
  const v = guard(fn);
  if (v !== undefined) memo.set(o, v);
  return v;
}

/**
 * Memos of the build's pure whole-cluster steps, kept by a SnapshotBuilder between the
 * builds of one loop (snapshot-builder.ts). Each returns exactly what the step would.
 */
export interface BuildSteps {
  /** mapNodesToGroups over these inputs. */
  mapNodes(nodes: V1Node[], machines: MachineView[], views: NodeGroupView[]): ReturnType<typeof mapNodesToGroups>;
  /** learnNodeShape of a group's Ready nodes. */
  learnShape(groupId: string, ready: readonly SnapshotNode[]): LearnedShape | undefined;
  /**
   * placePods over these pods (non-strict builds), given how to classify one pod and
   * collect its issues; every invalid pod's issues go to `report`, in list order.
   */
  placePods?(pods: readonly V1Pod[], classify: (pod: V1Pod) => ClassifiedPod, report: (issue: SnapshotIssue) => void): PodPlacement;
}

/** No memo: every step runs. */
const UNMEMOIZED: BuildSteps = {
  mapNodes: (nodes, machines, views) => mapNodesToGroups(nodes, machines, views),
  learnShape: (_groupId, ready) => learnNodeShape(ready),
};

/**
 * Builds the immutable ClusterSnapshot the solver works on. Pure (no I/O, no
 * clock) and linear in the input: every list is walked once into maps; nothing
 * loops pods x nodes. See docs/adr/0020-capacity-model.md for the group model.
 * A loop that builds again and again uses a SnapshotBuilder, which passes `steps`.
 */
export function buildSnapshot(objects: ClusterObjects, options: BuildSnapshotOptions = {}, steps: BuildSteps = UNMEMOIZED): ClusterSnapshot {
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

  const validWith = (o: KubernetesObject, g: typeof guard) => {
    if (validObjects.has(o)) return true;
    const ok = g(() => { validateObjectShape(o); return true; }) === true;
    if (ok) validObjects.add(o);
    return ok;
  };
  const valid = (o: KubernetesObject) => validWith(o, guard);
  /** A pod's class, its issues collected instead of reported (non-strict only); one collector for the whole build. */
  let sink: SnapshotIssue[] | undefined;
  const collect = <T>(fn: () => T): T | undefined => {
    try {
      return fn();
    } catch (err) {
      if (!(err instanceof ObjectValidationError || err instanceof NodePoolError)) throw err;
      (sink ??= []).push({ severity: 'error', message: err.message, object: subjectOf(err) });
      return undefined;
    }
  };
  const validCollecting = (o: KubernetesObject) => validWith(o, collect);
  const classifyCollecting = (pod: V1Pod): ClassifiedPod => {
    sink = undefined;
    const c = podClass(pod, validCollecting, collect);
    return { c, issues: sink ?? NO_ISSUES };
  };

  // CAPI objects.
  const views: NodeGroupView[] = [];
  for (const o of objects.nodeGroups) {
    const v = guard(() => parseNodeGroupObjectOnce(o));
    if (v) views.push(v);
  }
  const machines: MachineView[] = [];
  for (const o of objects.machines) {
    const m = guard(() => parseMachineOnce(o));
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
  const map = steps.mapNodes(parsedNodes.map((n) => n.node), machines, views);
  const pools: NodePool[] = [];
  for (const o of objects.nodePools) {
    const p = guard(() => parseNodePoolOnce(o));
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

  // Pods: bound pods by node, demand aside (a builder keeps this step from build to build).
  const placed = !strict && steps.placePods
    ? steps.placePods(objects.pods, classifyCollecting, report)
    : placePods(objects.pods, (pod) => podClass(pod, valid, guard));
  const { podsByNode, podNamespaces, ephemeralClaims } = placed;
  // Expendable and nominated pods are no demand (left-alone.ts); predicted pods are not sorted.
  const cutoff = options.expendablePodsPriorityCutoff ?? DEFAULT_EXPENDABLE_PODS_PRIORITY_CUTOFF;
  const nodeNames = new Set(parsedNodes.map((n) => n.name));
  const sorted = sortPending(placed.pendingPods, cutoff, (n) => nodeNames.has(n));
  const pendingPods = (options.extraPendingPods?.length ? [...sorted.demand, ...options.extraPendingPods] : sorted.demand) as SchedulingPod[];

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
      labels: machine ? labelsWithMachine(node.metadata?.labels, machine.labels) : node.metadata?.labels ?? {},
      taints,
      allocatable,
      pods: podsCounted(podsByNode.get(name) ?? [], cutoff, sorted.nominated.get(name)) as SchedulingPod[],
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
      // Cluster Autoscaler's per-group options: one that does not parse fails a strict
      // build (plan) and is reported on the group otherwise, the option ignored.
      for (const p of autoscalingOptionProblems(view.annotations)) {
        const err = new ObjectValidationError(view.kind, view.namespace, view.name, `annotation ${p.annotation}`, p.problem);
        if (strict) throw err;
        report({ severity: 'error', reason: 'InvalidAnnotation', object: { kind: view.kind, namespace: view.namespace, name: view.name }, message: `${err.message}; ignored` });
      }
      const capacity = withInfrastructureTemplate(parseCapacityAnnotations(view), view.annotations, templateCapacityOf(view));
      const ready: SnapshotNode[] = [];
      for (const n of map.nodesOfGroup.get(view.id) ?? []) {
        const sn = readyNodes.get(n);
        if (sn) ready.push(sn);
      }
      const learned: LearnedShape | undefined = steps.learnShape(view.id, ready);
      const g = buildNodeGroup({ view, bounds, capacity, learned, daemonSetPods: dsPods, pools, poolObjects: objects.nodePools.length });
      if (g && 'held' in g) {
        report({ severity: 'warning', reason: 'NotScaled', object: { kind: view.kind, namespace: view.namespace, name: view.name }, message: `${view.kind} ${view.namespace}/${view.name}: ${g.held}` });
        return undefined;
      }
      if (!g) {
        report({
          severity: 'warning',
          reason: 'NotScaled',
          object: { kind: view.kind, namespace: view.namespace, name: view.name },
          message: `${view.kind} ${view.namespace}/${view.name}: node shape unknown: set the capacity.cluster-autoscaler.kubernetes.io/cpu and memory annotations (no Ready nodes to learn from); not planned on`,
        });
      }
      return g;
    });
    if (group) groups.push(group);
  }

  // DRA devices: free ones per node, template ones per group, and the pods' claims.
  const groupAnnotations = new Map(views.map((v) => [v.id, v.annotations]));
  const dra = applyDra(objects, {
    nodes, groups, pendingPods,
    groupAnnotations,
    readyNodesOfGroup: new Map(groups.map((g) => [g.id, (map.nodesOfGroup.get(g.id) ?? []).filter((n) => readyNodes.has(n))])),
  }, report);
  // CSI attach limits: per node from its CSINode, per group from the csi-driver annotation.
  const csi = applyCsiLimits(objects, { nodes: dra.nodes, groups: dra.groups, pendingPods: dra.pendingPods, groupAnnotations }, report);
  const draNodes = csi.nodes;

  // Ownership and in-flight capacity of managed groups.
  const inFlight = inFlightNodes(csi.groups, map, new Map(draNodes.map((n) => [n.name, n])), goingAway);
  const allNodes = inFlight.length ? [...draNodes, ...inFlight] : draNodes;

  return {
    groups: csi.groups,
    nodes: allNodes,
    pendingPods: csi.pendingPods,
    ...(dra.dra ? { dra: dra.dra } : {}),
    volumes: volumeTopology({
      persistentVolumes: objects.persistentVolumes.filter(valid),
      persistentVolumeClaims: objects.persistentVolumeClaims.filter(valid),
      storageClasses: objects.storageClasses.filter(valid),
    }, ephemeralClaims as EphemeralClaim[]),
    namespaceLabels: namespaceLabels(objects.namespaces.filter(valid), podNamespaces),
    limits: poolLimits(pools, csi.groups, allNodes),
    disruption: Object.fromEntries(pools.map((p) => [p.name, p.disruption])),
    templates: poolTemplates(pools),
    ...(sorted.leftAlone.length ? { leftAlone: sorted.leftAlone } : {}),
    ...(cutoff !== DEFAULT_EXPENDABLE_PODS_PRIORITY_CUTOFF ? { expendablePodsPriorityCutoff: cutoff } : {}),
  };
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
