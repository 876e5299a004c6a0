import type { V1DaemonSet, V1Node, V1Pod, V1Taint, V1Toleration } from '@kubernetes/client-node';
import {
  ARCH_LABEL, capacityTypeOf, HOSTNAME_LABEL, OS_LABEL, ZONE_LABEL, type CapacityAnnotations, type ScalingBounds,
} from '../api/capacity-annotations.js';
import type { NodeGroupView } from '../api/capi.js';
import { nodeSyncedLabels } from '../api/capi-node-labels.js';
import type { NodePool } from '../api/nodepool.js';
import { poolsForCluster } from '../api/nodepool-cluster-ref.js';
import { derivedPricePerHour } from '../api/price.js';
import { nodeSelectorMatches } from '../scheduling/node-affinity.js';
import { toSchedulingPod } from '../scheduling/pod-demand.js';
import { addInto, type Resources } from '../scheduling/resources.js';
import type { SchedulingPod } from '../scheduling/scheduling-pod.js';
import { untoleratedTaint } from '../scheduling/taints.js';
import { admitGroup } from './pool-admission.js';
import type { NodeGroup, NodeTemplate } from './snapshot.js';

/**
 * A node group's model: its template node (docs/adr/0020-capacity-model.md), its
 * price, bounds, pool and DaemonSet overhead.
 */

/** Taints that describe a node's lifecycle, not its group: never learned into a template. */
const LIFECYCLE_TAINT_PREFIXES = ['node.kubernetes.io/', 'node.cloudprovider.kubernetes.io/', 'node.cluster.x-k8s.io/', 'karpenter.sh/disruption'];
const LIFECYCLE_TAINTS = new Set(['ToBeDeletedByClusterAutoscaler', 'DeletionCandidateOfClusterAutoscaler']);

export function isLifecycleTaint(t: V1Taint): boolean {
  return LIFECYCLE_TAINTS.has(t.key) || LIFECYCLE_TAINT_PREFIXES.some((p) => t.key.startsWith(p));
}

export function isNodeReady(node: V1Node): boolean {
  return node.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
}

/** What a group's existing nodes say about its shape. */
export interface LearnedShape {
  allocatable: Resources;
  labels: Record<string, string>;
  taints: V1Taint[];
}

/** The shape common to a group's Ready nodes; undefined for none. See ADR 0020. */
export function learnNodeShape(nodes: ReadonlyArray<{ allocatable: Resources; labels: Record<string, string>; taints: readonly V1Taint[] }>): LearnedShape | undefined {
  const first = nodes[0];
  if (!first) return undefined;
  const allocatable: Resources = { ...first.allocatable };
  // The first node's label keys that every node has with the same value (a key list,
  // not deletes from an object: this runs over every Ready node of a group).
  let labelKeys = Object.keys(first.labels).filter((k) => k !== HOSTNAME_LABEL);
  let taints = first.taints.filter((t) => !isLifecycleTaint(t));
  for (let i = 1; i < nodes.length; i++) {
    const n = nodes[i]!;
    for (const k in allocatable) {
      const v = n.allocatable[k];
      if (v === undefined) delete allocatable[k];
      else if (v < allocatable[k]!) allocatable[k] = v;
    }
    if (n.labels !== first.labels) labelKeys = labelKeys.filter((k) => n.labels[k] === first.labels[k]);
    taints = taints.filter((t) => n.taints.some((o) => o.key === t.key && o.effect === t.effect && (o.value ?? '') === (t.value ?? '')));
  }
  for (const k in allocatable) if (!(allocatable[k]! > 0)) delete allocatable[k];
  const labels: Record<string, string> = {};
  for (const k of labelKeys) labels[k] = first.labels[k]!;
  return { allocatable, labels, taints };
}

function mergeTaints(...lists: ReadonlyArray<readonly V1Taint[]>): V1Taint[] {
  const byKey = new Map<string, V1Taint>();
  for (const list of lists) for (const t of list) byKey.set(`${t.key}:${t.effect}`, t);
  return [...byKey.values()];
}

/**
 * The template node of a group: annotations over learned shape for allocatable;
 * labels learned < the template metadata labels CAPI copies to Nodes < labels
 * annotation, then zone from a single failure domain if no zone label, then os/arch
 * defaults; taints merged. Undefined when neither annotations (cpu and memory) nor
 * Ready nodes give a shape. Other template labels stay on the Machine: a pod that
 * selects one must not look schedulable on the group's new nodes.
 */
export function buildNodeTemplate(group: NodeGroupView, capacity: CapacityAnnotations, learned?: LearnedShape): NodeTemplate | undefined {
  if (!capacity.complete && !learned) return undefined;
  const allocatable: Resources = { ...(learned?.allocatable ?? {}), ...capacity.allocatable };
  if (!allocatable.cpu || !allocatable.memory || !allocatable.pods) return undefined;
  const labels: Record<string, string> = { ...(learned?.labels ?? {}) };
  Object.assign(labels, nodeSyncedLabels(group.template.labels), capacity.labels);
  if (labels[ZONE_LABEL] === undefined && group.failureDomains.length === 1) labels[ZONE_LABEL] = group.failureDomains[0]!;
  labels[OS_LABEL] ??= 'linux';
  labels[ARCH_LABEL] ??= 'amd64';
  delete labels[HOSTNAME_LABEL];
  const taints = mergeTaints(learned?.taints ?? [], group.template.taints, capacity.taints);
  return { allocatable, labels, taints };
}

/** Tolerations the DaemonSet controller adds to every DaemonSet pod (pkg/controller/daemon/util). */
const DAEMONSET_TOLERATIONS: V1Toleration[] = [
  { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute' },
  { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute' },
  { key: 'node.kubernetes.io/disk-pressure', operator: 'Exists', effect: 'NoSchedule' },
  { key: 'node.kubernetes.io/memory-pressure', operator: 'Exists', effect: 'NoSchedule' },
  { key: 'node.kubernetes.io/pid-pressure', operator: 'Exists', effect: 'NoSchedule' },
  { key: 'node.kubernetes.io/unschedulable', operator: 'Exists', effect: 'NoSchedule' },
];
const NETWORK_UNAVAILABLE: V1Toleration = { key: 'node.kubernetes.io/network-unavailable', operator: 'Exists', effect: 'NoSchedule' };

/** The pod a DaemonSet would create on a new node: its template plus the controller's tolerations. */
export function daemonSetTemplatePod(ds: V1DaemonSet): SchedulingPod {
  const namespace = ds.metadata?.namespace || 'default';
  const name = ds.metadata?.name ?? '';
  const spec = ds.spec?.template?.spec;
  const tolerations = [...(spec?.tolerations ?? []), ...DAEMONSET_TOLERATIONS];
  if (spec?.hostNetwork) tolerations.push(NETWORK_UNAVAILABLE);
  const pod: V1Pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: `${name}-template`,
      namespace,
      labels: ds.spec?.template?.metadata?.labels ?? {},
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'DaemonSet', name, uid: ds.metadata?.uid ?? '', controller: true }],
    },
    spec: { ...(spec ?? { containers: [] }), tolerations },
  };
  return toSchedulingPod(pod);
}

/** The DaemonSet pods that would run on a node with this template (selector, affinity, taints). */
export function daemonSetPodsFor(template: NodeTemplate, daemonSetPods: readonly SchedulingPod[]): SchedulingPod[] {
  return daemonSetPods.filter((p) => nodeSelectorMatches(p, template.labels) && !untoleratedTaint(template.taints, p.tolerations));
}

export interface NodeGroupInput {
  view: NodeGroupView;
  bounds: ScalingBounds;
  capacity: CapacityAnnotations;
  /** The shape learned from the group's Ready nodes, if any. */
  learned?: LearnedShape;
  /** Template pods of all DaemonSets (daemonSetTemplatePod). */
  daemonSetPods: readonly SchedulingPod[];
  /** The valid NodePools. */
  pools: readonly NodePool[];
  /** How many NodePool objects there are, valid or not (pool-admission.ts); default pools.length. */
  poolObjects?: number;
}

/** A group no NodePool admits while some NodePool exists: not scaled (pool-admission.ts), with why. */
export interface HeldGroup {
  held: string;
}

/**
 * The solver's NodeGroup; a HeldGroup when NodePools exist and none admits it;
 * undefined when the group's shape is unknown. Throws ObjectValidationError.
 */
export function buildNodeGroup(input: NodeGroupInput): NodeGroup | HeldGroup | undefined {
  const { view, bounds, capacity } = input;
  const template = buildNodeTemplate(view, capacity, input.learned);
  if (!template) return undefined;
  // The price reads the capacity type from the template metadata too, though CAPI
  // does not copy that label to the Nodes.
  const capacityType = capacityTypeOf(view, { ...view.template.labels, ...template.labels });
  const dsPods = daemonSetPodsFor(template, input.daemonSetPods);
  const daemonSetOverhead: Resources = {};
  for (const p of dsPods) addInto(daemonSetOverhead, p.requests);
  // Pools of other Clusters (spec.clusterRef) neither admit nor hold this group; invalid pools count (ADR 0138).
  const pools = poolsForCluster(input.pools, view.namespace, view.clusterName);
  const poolObjects = (input.poolObjects ?? input.pools.length) - (input.pools.length - pools.length);
  const admission = admitGroup(pools, poolObjects, view.labels, template.labels);
  if (admission.held !== undefined) return { held: admission.held };
  const pool = admission.pool;
  const group: NodeGroup = {
    id: view.id,
    kind: view.kind,
    namespace: view.namespace,
    name: view.name,
    clusterName: view.clusterName,
    minSize: bounds.minSize,
    maxSize: bounds.maxSize,
    // CAPI's defaulting webhook sets unset replicas to the min size for autoscaled groups.
    replicas: view.replicas ?? view.statusReplicas ?? bounds.minSize,
    template,
    pricePerHour: capacity.pricePerHour ?? derivedPricePerHour(template.allocatable, capacityType),
    capacityType,
    daemonSetOverhead,
    daemonSetPods: dsPods,
    weight: pool?.weight ?? 0,
  };
  if (pool) group.nodePool = pool.name;
  return group;
}
