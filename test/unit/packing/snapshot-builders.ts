import type { V1Pod } from '@kubernetes/client-node';
import type { ClusterSnapshot, NodeGroup, SnapshotNode } from '../../../src/cluster/snapshot.js';
import type { Plan } from '../../../src/packing/plan.js';
import { type SolverSnapshot, boundPodView } from '../../../src/packing/solver-snapshot.js';
import { toSchedulingPod } from '../../../src/scheduling/pod-demand.js';
import { parseResourceList } from '../../../src/scheduling/resources.js';
import type { SchedulingPod } from '../../../src/scheduling/scheduling-pod.js';

export const ZONE = 'topology.kubernetes.io/zone';
export const HOSTNAME = 'kubernetes.io/hostname';

/** A node group with allocatable given as Kubernetes quantities. */
export function group(name: string, o: {
  cpu?: string; memory?: string; pods?: number; extra?: Record<string, string>; price?: number; zone?: string;
  labels?: Record<string, string>; taints?: NodeGroup['template']['taints']; max?: number; replicas?: number;
  nodePool?: string; weight?: number; overhead?: Record<string, string>;
} = {}): NodeGroup {
  const allocatable = parseResourceList({ cpu: o.cpu ?? '4', memory: o.memory ?? '16Gi', pods: o.pods ?? 110, ...(o.extra ?? {}) });
  const g: NodeGroup = {
    id: `MachineDeployment/default/${name}`, kind: 'MachineDeployment', namespace: 'default', name, clusterName: 'c',
    minSize: 0, maxSize: o.max ?? 100, replicas: o.replicas ?? 0,
    template: { allocatable, labels: { [ZONE]: o.zone ?? 'zone-a', ...(o.labels ?? {}) }, taints: o.taints ?? [] },
    pricePerHour: o.price ?? 1, capacityType: 'on-demand', daemonSetOverhead: parseResourceList(o.overhead ?? {}), weight: o.weight ?? 0,
  };
  if (o.nodePool) g.nodePool = o.nodePool;
  return g;
}

type PodSpec = NonNullable<V1Pod['spec']>;

/** A pending pod from a real V1Pod (requests parsed as kube-scheduler does). */
export function pod(name: string, o: {
  cpu?: string; memory?: string; extra?: Record<string, string>; labels?: Record<string, string>; namespace?: string;
  owner?: string; spec?: Partial<PodSpec>; nodeName?: string;
} = {}): SchedulingPod {
  const v1: V1Pod = {
    metadata: {
      name, namespace: o.namespace ?? 'default', labels: o.labels ?? {}, uid: `uid-${name}`,
      ...(o.owner ? { ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: o.owner, uid: o.owner, controller: true }] } : {}),
    },
    spec: {
      containers: [{ name: 'c', image: 'x', resources: { requests: { cpu: o.cpu ?? '1', memory: o.memory ?? '1Gi', ...(o.extra ?? {}) } } }],
      ...(o.spec ?? {}),
      ...(o.nodeName ? { nodeName: o.nodeName } : {}),
    },
  };
  return toSchedulingPod(v1);
}

/** `count` replicas of one owner (one equivalence class). */
export function replicas(prefix: string, count: number, o: Parameters<typeof pod>[1] = {}): SchedulingPod[] {
  return Array.from({ length: count }, (_, i) => pod(`${prefix}-${i}`, { owner: prefix, ...o }));
}

export function node(name: string, o: {
  cpu?: string; memory?: string; pods?: number; zone?: string; labels?: Record<string, string>; bound?: SchedulingPod[];
  groupId?: string; inFlight?: boolean; taints?: SnapshotNode['taints']; unschedulable?: boolean;
} = {}): SnapshotNode {
  const n: SnapshotNode = {
    name, labels: { [ZONE]: o.zone ?? 'zone-a', [HOSTNAME]: name, ...(o.labels ?? {}) }, taints: o.taints ?? [],
    allocatable: parseResourceList({ cpu: o.cpu ?? '4', memory: o.memory ?? '16Gi', pods: o.pods ?? 110 }),
    pods: (o.bound ?? []).map((p) => ({ ...p, nodeName: name })), inFlight: o.inFlight ?? false, unschedulable: o.unschedulable ?? false,
  };
  if (o.groupId) n.groupId = o.groupId;
  return n;
}

export function snapshot(o: Partial<ClusterSnapshot>): ClusterSnapshot {
  return {
    groups: [], nodes: [], pendingPods: [], volumes: { persistentVolumes: {}, claims: {}, storageClasses: {} },
    namespaceLabels: { default: {} }, limits: {}, disruption: {}, templates: {}, ...o,
  };
}

/** The snapshot as a solver worker receives it (ADR 0131): each pod on a node as its BoundPod view. */
export function solverView(s: ClusterSnapshot): SolverSnapshot {
  return { ...s, nodes: s.nodes.map((n) => ({ ...n, pods: n.pods.map(boundPodView) })) };
}

/** Where each pod went: node name, `group#k` for new nodes, or `-` when unschedulable. */
export function where(plan: Plan): Record<string, string> {
  const out: Record<string, string> = {};
  for (const p of plan.placements) out[p.pod] = 'node' in p ? p.node : `${p.group.split('/')[2]}#${p.newNode}`;
  for (const u of plan.unschedulable) out[u.pod] = '-';
  return out;
}

export function newNodes(plan: Plan): Record<string, number> {
  const out: Record<string, number> = {};
  for (const s of plan.scaleUps) out[s.name] = s.to - s.from;
  return out;
}

/** The group name of a placement target, for tests that only care about the group. */
export function groupOf(plan: Plan, podKey: string): string | undefined {
  const p = plan.placements.find((x) => x.pod === podKey);
  return p && 'group' in p ? p.group.split('/')[2] : undefined;
}
