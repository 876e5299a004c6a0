import type { KubernetesObject, V1Pod, V1PodTemplateSpec } from '@kubernetes/client-node';
import {
  ACTIVE_CAPACITY, bufferChunkCount, parseCapacityBuffer, type CapacityBufferView, type ScalableRef,
} from '../api/capacity-buffer.js';
import type { UnstructuredObject } from '../api/unstructured-object.js';
import { ObjectValidationError } from '../api/validation-error.js';
import { lastInputMemo } from '../cluster/input-memo.js';
import type { ClusterObjects, ObservedScale } from '../cluster/objects.js';
import { matchesSelectorString } from '../scheduling/label-selector.js';
import { parseInteger, parseMilliCpu } from '../scheduling/quantity.js';
import type { SchedulingPod } from '../scheduling/scheduling-pod.js';
import { templatePods } from './template-pods.js';
import { CPU, PODS, podRequests, type Resources } from '../scheduling/resources.js';

/**
 * CapacityBuffers (SIG Autoscaling, autoscaling.x-k8s.io) resolved into chunks:
 * the pod shape (a PodTemplate, or the template of the Deployment / StatefulSet /
 * ReplicaSet / Job / scalable a scalableRef names), how many chunks (replicas,
 * percentage, limits; ADR 0072), capped by the namespace's ResourceQuotas. Each chunk
 * is a virtual pod (`predicted: true`) at the lowest priority: placed by the solver
 * after every real pod, in the workload's own shape (zones, taints, affinity), never
 * created, and counted by the disruption what-if, so capacity held for a buffer is
 * neither missing nor consolidated away. Pure; one result per `objects` value.
 */

/** Below every real pod, so a buffer only ever takes room no real pod needs. */
export const BUFFER_PRIORITY = -(2 ** 31);
/** A ceiling on chunks per buffer (each is a pod in the solve). */
export const MAX_BUFFER_CHUNKS = 1000;

export interface BufferProblem {
  /** ReadyForProvisioning=False reason (CamelCase). */
  reason: string;
  /** One line. */
  message: string;
}

export interface BufferResolution {
  namespace: string;
  name: string;
  uid: string;
  generation?: number;
  strategy: string;
  /** Chunks to keep after limits and quotas (0 when not active or invalid). */
  replicas: number;
  /** The PodTemplate status.podTemplateRef names; for a scalableRef, the one Headroom writes. */
  podTemplateName?: string;
  /** The chunk's pod template. */
  template?: V1PodTemplateSpec;
  /** Why the buffer is not served (invalid, unresolvable, other strategy). */
  problem?: BufferProblem;
  /** Set when a namespace ResourceQuota lowered the chunk count. */
  quota?: { from: number; to: number; quotas: string[] };
}

/** The PodTemplate Headroom keeps for a scalableRef buffer (Cluster Autoscaler's name for it). */
export function scalableTemplateName(bufferName: string): string {
  return `capacitybuffer-${bufferName}-pod-template`;
}

type WorkloadList = 'deployments' | 'statefulSets' | 'replicaSets' | 'jobs';
const BUILTIN_SCALABLES: Record<string, { list: WorkloadList; replicas: (spec: Record<string, unknown>) => number }> = {
  'apps/Deployment': { list: 'deployments', replicas: (s) => intOr(s.replicas, 1) },
  'apps/StatefulSet': { list: 'statefulSets', replicas: (s) => intOr(s.replicas, 1) },
  'apps/ReplicaSet': { list: 'replicaSets', replicas: (s) => intOr(s.replicas, 1) },
  // A Job's scale is its parallelism.
  'batch/Job': { list: 'jobs', replicas: (s) => intOr(s.parallelism, 1) },
};

function intOr(v: unknown, dflt: number): number {
  return typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : dflt;
}

/** Whether a scalableRef names a kind resolved from the watched workloads (not a scale subresource). */
export function isBuiltinScalable(ref: Pick<ScalableRef, 'apiGroup' | 'kind'>): boolean {
  return `${ref.apiGroup}/${ref.kind}` in BUILTIN_SCALABLES;
}

interface Scalable {
  template?: V1PodTemplateSpec;
  replicas: number;
}

function key(ns: string | undefined, name: string | undefined): string {
  return `${ns ?? 'default'}/${name ?? ''}`;
}

class Index {
  readonly templates = new Map<string, KubernetesObject & { template?: V1PodTemplateSpec }>();
  readonly workloads = new Map<string, UnstructuredObject>();
  readonly scales = new Map<string, ObservedScale>();
  private readonly podsByNs = new Map<string, V1Pod[]>();
  constructor(private readonly objects: ClusterObjects) {
    for (const t of objects.podTemplates ?? []) this.templates.set(key(t.metadata?.namespace, t.metadata?.name), t);
    for (const list of ['deployments', 'statefulSets', 'replicaSets', 'jobs'] as const) {
      for (const w of objects[list] ?? []) this.workloads.set(`${list}/${key(w.metadata?.namespace, w.metadata?.name)}`, w);
    }
    for (const s of objects.scales ?? []) this.scales.set(`${s.apiGroup}/${s.kind}/${key(s.namespace, s.name)}`, s);
  }

  pods(ns: string): V1Pod[] {
    let list = this.podsByNs.get(ns);
    if (!list) {
      list = this.objects.pods.filter((p) => (p.metadata?.namespace ?? 'default') === ns);
      this.podsByNs.set(ns, list);
    }
    return list;
  }
}

function resolveScalable(idx: Index, ns: string, ref: ScalableRef): Scalable | BufferProblem {
  const what = `${ref.kind}${ref.apiGroup ? `.${ref.apiGroup}` : ''} ${ns}/${ref.name}`;
  const builtin = BUILTIN_SCALABLES[`${ref.apiGroup}/${ref.kind}`];
  if (builtin) {
    const w = idx.workloads.get(`${builtin.list}/${key(ns, ref.name)}`);
    if (!w) return { reason: 'ScalableNotFound', message: `scalableRef: ${what} not found` };
    const spec = (w.spec ?? {}) as Record<string, unknown>;
    const template = spec.template as V1PodTemplateSpec | undefined;
    if (!template?.spec) return { reason: 'TemplateNotFound', message: `scalableRef: ${what} has no pod template` };
    return { template, replicas: builtin.replicas(spec) };
  }
  const scale = idx.scales.get(`${ref.apiGroup}/${ref.kind}/${key(ns, ref.name)}`);
  if (!scale) return { reason: 'ScalableNotFound', message: `scalableRef: ${what} not found` };
  if (scale.error) return { reason: 'NoScaleSubresource', message: `scalableRef: ${scale.error}` };
  // Like Cluster Autoscaler, a custom scalable's chunk takes the shape of one of its
  // running pods (the scale subresource has replicas and a selector, no template).
  const pod = scale.selector
    ? idx.pods(ns).find((p) => p.spec?.nodeName && !['Succeeded', 'Failed'].includes(p.status?.phase ?? '') && matchesSelectorString(scale.selector!, p.metadata?.labels ?? {}))
    : undefined;
  if (!pod?.spec) return { reason: 'TemplateNotFound', message: `scalableRef: no running pod of ${what} (selector ${JSON.stringify(scale.selector ?? '')}) to take the chunk shape from` };
  const { nodeName: _n, ...spec } = pod.spec;
  return { template: { metadata: { labels: pod.metadata?.labels ?? {}, ...(pod.metadata?.annotations ? { annotations: pod.metadata.annotations } : {}) }, spec }, replicas: scale.replicas ?? 0 };
}

/** The chunk's requests as kube-scheduler would count them. */
function chunkRequests(template: V1PodTemplateSpec): Resources {
  return podRequests({ apiVersion: 'v1', kind: 'Pod', metadata: template.metadata ?? {}, spec: template.spec! });
}

/**
 * The pod resource a quota's hard limit counts, or undefined for what chunks never
 * use (limits.*, object counts other than pods): `cpu` / `requests.cpu` -> cpu,
 * `pods` / `count/pods` -> pods, `requests.nvidia.com/gpu` -> nvidia.com/gpu.
 */
function quotaResource(name: string): string | undefined {
  if (name === 'pods' || name === 'count/pods') return PODS;
  if (name.startsWith('requests.')) return name.slice('requests.'.length);
  if (name.startsWith('limits.') || name.startsWith('count/') || name.includes('.') && !name.includes('/')) return undefined;
  return name;
}

function chunkUse(res: string, chunk: Resources): number {
  return res === PODS ? 1 : chunk[res] ?? 0;
}

type QuotaStatus = { hard?: Record<string, string | number>; used?: Record<string, string | number> };

/** status.hard as the quota controller publishes it, else spec.hard (not yet synced: nothing used). */
function quotaHard(quota: KubernetesObject): QuotaStatus {
  const q = quota as { spec?: { hard?: Record<string, string | number> }; status?: QuotaStatus };
  return q.status?.hard ? q.status : { hard: q.spec?.hard ?? {}, used: q.status?.used ?? {} };
}

/** How many chunks one ResourceQuota still admits; `reserved` is what earlier buffers took of it. */
function quotaRoom(quota: KubernetesObject, chunk: Resources, reserved: Record<string, number>): number {
  const status = quotaHard(quota);
  let room = Number.POSITIVE_INFINITY;
  for (const [name, hard] of Object.entries(status?.hard ?? {})) {
    const res = quotaResource(name);
    const per = res ? chunkUse(res, chunk) : 0;
    if (!res || per <= 0) continue;
    const parse = res === CPU ? parseMilliCpu : parseInteger;
    try {
      const free = parse(hard) - parse(status?.used?.[name] ?? 0) - (reserved[name] ?? 0);
      room = Math.min(room, Math.max(0, Math.floor(free / per)));
    } catch {
      continue; // an unreadable quantity in status (the apiserver writes these): no cap from it
    }
  }
  return room;
}

function reserveQuota(quota: KubernetesObject, chunk: Resources, n: number, reserved: Record<string, number>): void {
  for (const name of Object.keys(quotaHard(quota).hard ?? {})) {
    const res = quotaResource(name);
    const per = res ? chunkUse(res, chunk) : 0;
    if (per > 0) reserved[name] = (reserved[name] ?? 0) + per * n;
  }
}

function resolveOne(idx: Index, view: CapacityBufferView): BufferResolution {
  const base: BufferResolution = {
    namespace: view.namespace, name: view.name, uid: view.uid, strategy: view.provisioningStrategy, replicas: 0,
    ...(view.generation !== undefined ? { generation: view.generation } : {}),
  };
  let template: V1PodTemplateSpec | undefined;
  let scalableReplicas: number | undefined;
  if (view.podTemplateRef) {
    base.podTemplateName = view.podTemplateRef.name;
    template = idx.templates.get(key(view.namespace, view.podTemplateRef.name))?.template;
    if (!template?.spec) return { ...base, problem: { reason: 'TemplateNotFound', message: `podTemplateRef: PodTemplate ${view.namespace}/${view.podTemplateRef.name} not found` } };
  } else {
    const s = resolveScalable(idx, view.namespace, view.scalableRef!);
    if ('reason' in s) return { ...base, problem: s };
    base.podTemplateName = scalableTemplateName(view.name);
    template = s.template;
    scalableReplicas = s.replicas;
  }
  base.template = template;
  if (view.provisioningStrategy !== ACTIVE_CAPACITY) {
    return { ...base, problem: { reason: 'UnsupportedProvisioningStrategy', message: `provisioningStrategy ${view.provisioningStrategy} is not acted on; only ${ACTIVE_CAPACITY} is` } };
  }
  let chunk: Resources;
  try {
    chunk = chunkRequests(template!);
    templatePods({ template: template!, namespace: view.namespace, baseName: 'check', uid: view.uid, count: 1, owner: '' });
  } catch (err) {
    return { ...base, problem: { reason: 'InvalidTemplate', message: `pod template: ${(err as Error).message}` } };
  }
  const count = bufferChunkCount(view, chunk, scalableReplicas);
  if (count === undefined) return { ...base, problem: { reason: 'InvalidLimits', message: `spec.limits names no resource the chunk requests (${Object.keys(chunk).join(', ') || 'none'})` } };
  return { ...base, replicas: Math.min(count, MAX_BUFFER_CHUNKS) };
}

/** Every CapacityBuffer in `objects`, resolved (invalid ones carry their problem). */
export function resolveCapacityBuffers(objects: ClusterObjects): BufferResolution[] {
  if (objects.capacityBuffers.length === 0) return [];
  // Pods matter only for custom scalables (their chunk shape is a running pod's).
  return resolveMemo(objects.capacityBuffers, objects.podTemplates, objects.deployments, objects.statefulSets, objects.replicaSets, objects.jobs, objects.scales, objects.resourceQuotas, objects.scales?.length ? objects.pods : undefined, objects);
}

const resolveMemo = lastInputMemo((_b: unknown, _t: unknown, _d: unknown, _ss: unknown, _rs: unknown, _j: unknown, _s: unknown, _q: unknown, _p: unknown, objects: ClusterObjects) => resolveUncached(objects));

function resolveUncached(objects: ClusterObjects): BufferResolution[] {
  const idx = new Index(objects);
  const out: BufferResolution[] = [];
  for (const obj of objects.capacityBuffers) {
    try {
      out.push(resolveOne(idx, parseCapacityBuffer(obj)));
    } catch (err) {
      if (!(err instanceof ObjectValidationError)) throw err;
      const namespace = obj.metadata?.namespace ?? 'default';
      const name = obj.metadata?.name ?? '';
      out.push({
        namespace, name, uid: obj.metadata?.uid ?? `${namespace}/${name}`, strategy: ACTIVE_CAPACITY, replicas: 0,
        ...(typeof obj.metadata?.generation === 'number' ? { generation: obj.metadata.generation } : {}),
        problem: { reason: 'InvalidSpec', message: `${err.field}: ${err.problem}` },
      });
    }
  }
  applyQuotas(objects, out);
  return out;
}

/**
 * As Cluster Autoscaler does: in each namespace, buffers (by name) take what the
 * namespace's ResourceQuotas still allow (hard - used - taken by earlier buffers).
 */
function applyQuotas(objects: ClusterObjects, buffers: BufferResolution[]): void {
  const quotasByNs = new Map<string, KubernetesObject[]>();
  for (const q of objects.resourceQuotas ?? []) {
    const ns = q.metadata?.namespace ?? 'default';
    quotasByNs.set(ns, [...(quotasByNs.get(ns) ?? []), q]);
  }
  if (quotasByNs.size === 0) return;
  const reserved = new Map<KubernetesObject, Record<string, number>>();
  for (const b of [...buffers].sort((x, y) => x.namespace.localeCompare(y.namespace) || x.name.localeCompare(y.name))) {
    const quotas = quotasByNs.get(b.namespace);
    if (!quotas || b.problem || b.replicas === 0 || !b.template) continue;
    const chunk = chunkRequests(b.template);
    let allowed = b.replicas;
    const blocking: string[] = [];
    for (const q of [...quotas].sort((x, y) => (x.metadata?.name ?? '').localeCompare(y.metadata?.name ?? ''))) {
      if (!reserved.has(q)) reserved.set(q, {});
      const room = quotaRoom(q, chunk, reserved.get(q)!);
      if (room < allowed) {
        allowed = room;
        blocking.push(q.metadata?.name ?? '');
      }
    }
    if (allowed < b.replicas) {
      b.quota = { from: b.replicas, to: allowed, quotas: blocking };
      b.replicas = allowed;
    }
    if (allowed > 0) for (const q of quotas) reserveQuota(q, chunk, allowed, reserved.get(q)!);
  }
}

/** The chunks of every active, valid buffer as lowest-priority predicted pods. */
export function capacityBufferPods(objects: ClusterObjects): SchedulingPod[] {
  return chunkMemo(resolveCapacityBuffers(objects));
}

const chunkMemo = lastInputMemo((buffers: readonly BufferResolution[]): SchedulingPod[] => {
  const out: SchedulingPod[] = [];
  for (const b of buffers) {
    if (b.problem || b.replicas === 0 || !b.template?.spec) continue;
    try {
      out.push(...templatePods({
        template: b.template, namespace: b.namespace, baseName: `capacitybuffer-${b.name}`, uid: b.uid, count: b.replicas,
        owner: `CapacityBuffer/${b.namespace}/${b.name}`, priority: BUFFER_PRIORITY,
      }));
    } catch {
      continue; // an invalid template: resolveCapacityBuffers reports it in the buffer's status
    }
  }
  return out;
});
