import type { KubernetesObject } from '@kubernetes/client-node';
import type { LogSubject } from '../api/log.js';
import { CSI_DRIVER_ANNOTATION } from '../api/capacity-annotations.js';
import {
  CsiLimitError, UNLIMITED_VOLUMES, csiLimitResource, csiNodeLimits, parseCsiDriverLimits, podCsiVolumes,
  type CsiVolumeSources, type PodCsiVolumes,
} from '../scheduling/csi-limits.js';
import type { SchedulingPod } from '../scheduling/scheduling-pod.js';
import type { ClusterObjects } from './objects.js';
import type { NodeGroup, SnapshotNode } from './snapshot.js';

export interface CsiIssue {
  severity: 'error' | 'warning';
  message: string;
  object?: LogSubject;
}

export interface CsiInput {
  nodes: SnapshotNode[];
  groups: NodeGroup[];
  pendingPods: SchedulingPod[];
  /** Group id -> its annotations. */
  groupAnnotations: ReadonlyMap<string, Record<string, string>>;
}

type CsiObjects = Pick<ClusterObjects, 'csiNodes' | 'persistentVolumes' | 'persistentVolumeClaims' | 'storageClasses'>;
type Obj = KubernetesObject & { spec?: unknown };

/**
 * CSI attach limits in the snapshot (scheduling/csi-limits.ts). Pure. Limits come from
 * each node's CSINode and each group's csi-driver annotation; for every driver that has
 * a limit somewhere and a volume in some pod, pods request their volumes of it and nodes
 * and templates offer their limit (unlimited where they have none). A node's volumes
 * shared by several of its pods are counted once, as kube-scheduler counts them, by
 * offering the node the difference. Without any limit or any CSI volume it returns its
 * input unchanged.
 */
export function applyCsiLimits(objects: CsiObjects, input: CsiInput, report: (issue: CsiIssue) => void): CsiInput {
  const nodeLimits = new Map<string, Map<string, number>>();
  for (const c of (objects.csiNodes ?? []) as Obj[]) {
    const limits = csiNodeLimits(c.spec);
    if (limits.size && c.metadata?.name) nodeLimits.set(c.metadata.name, limits);
  }
  const groupLimits = new Map<string, Map<string, number>>();
  for (const g of input.groups) {
    const raw = input.groupAnnotations.get(g.id)?.[CSI_DRIVER_ANNOTATION];
    if (raw === undefined) continue;
    try {
      groupLimits.set(g.id, parseCsiDriverLimits(raw));
    } catch (err) {
      if (!(err instanceof CsiLimitError)) throw err;
      report({ severity: 'error', message: `${g.kind} ${g.namespace}/${g.name}: annotation ${CSI_DRIVER_ANNOTATION}: ${err.message}; no attach limits assumed`, object: { kind: g.kind, namespace: g.namespace, name: g.name } });
    }
  }
  const limited = new Set<string>();
  for (const m of [...nodeLimits.values(), ...groupLimits.values()]) for (const d of m.keys()) limited.add(d);
  if (limited.size === 0) return input;
  const anyClaims = input.pendingPods.some((p) => p.claims.length) || input.nodes.some((n) => n.pods.some((p) => p.claims.length));
  if (!anyClaims) return input;

  const pvcs = new Map<string, { volumeName?: string; storageClassName?: string }>();
  for (const c of objects.persistentVolumeClaims) {
    const spec = c.spec ?? {};
    pvcs.set(`${c.metadata?.namespace || 'default'}/${c.metadata?.name ?? ''}`, {
      ...(spec.volumeName ? { volumeName: spec.volumeName } : {}),
      ...(spec.storageClassName ? { storageClassName: spec.storageClassName } : {}),
    });
  }
  const pvs = new Map<string, { driver: string; handle: string }>();
  for (const v of objects.persistentVolumes) {
    const csi = v.spec?.csi;
    if (csi?.driver && v.metadata?.name) pvs.set(v.metadata.name, { driver: csi.driver, handle: csi.volumeHandle ?? v.metadata.name });
  }
  const provisioners = new Map(objects.storageClasses.map((s) => [s.metadata?.name ?? '', s.provisioner]));
  const src: CsiVolumeSources = { claim: (k) => pvcs.get(k), volume: (n) => pvs.get(n), provisioner: (s) => provisioners.get(s) };

  const counted = (pod: SchedulingPod): { pod: SchedulingPod; volumes: PodCsiVolumes } => {
    const volumes = pod.claims.length ? podCsiVolumes(pod.namespace, pod.claims, src) : new Map<string, Set<string>>();
    const extra: Record<string, number> = {};
    for (const [driver, ids] of volumes) if (limited.has(driver)) extra[csiLimitResource(driver)] = ids.size;
    const keys = Object.keys(extra).sort();
    if (!keys.length) return { pod, volumes };
    const tag = keys.map((k) => `${k}=${extra[k]}`).join(',');
    return { pod: { ...pod, requests: { ...pod.requests, ...extra }, equivalenceKey: `${pod.equivalenceKey}#csi:${tag}` }, volumes };
  };
  const offer = (limits: Map<string, number> | undefined, shared: ReadonlyMap<string, number> = new Map()) => {
    const out: Record<string, number> = {};
    for (const d of limited) out[csiLimitResource(d)] = (limits?.get(d) ?? UNLIMITED_VOLUMES) + (shared.get(d) ?? 0);
    return out;
  };

  const nodes = input.nodes.map((n) => {
    if (!n.pods.some((p) => p.claims.length)) return { ...n, allocatable: { ...n.allocatable, ...offer(nodeLimits.get(n.name)) } };
    const pods = n.pods.map(counted);
    // Volumes several of the node's pods use: requested by each, attached once.
    const shared = new Map<string, number>();
    const unique = new Map<string, Set<string>>();
    for (const { volumes } of pods) {
      for (const [driver, ids] of volumes) {
        if (!limited.has(driver)) continue;
        let set = unique.get(driver);
        if (!set) unique.set(driver, (set = new Set()));
        for (const id of ids) {
          if (set.has(id)) shared.set(driver, (shared.get(driver) ?? 0) + 1);
          else set.add(id);
        }
      }
    }
    return { ...n, pods: pods.map((p) => p.pod), allocatable: { ...n.allocatable, ...offer(nodeLimits.get(n.name), shared) } };
  });
  const groups = input.groups.map((g) => ({ ...g, template: { ...g.template, allocatable: { ...g.template.allocatable, ...offer(groupLimits.get(g.id)) } } }));
  return { ...input, nodes, groups, pendingPods: input.pendingPods.map((p) => counted(p).pod) };
}
