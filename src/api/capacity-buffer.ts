import type { KubernetesObject } from '@kubernetes/client-node';
import { QuantityError } from '../scheduling/quantity.js';
import { failer } from './validation-error.js';
import { parseResourceList, type Resources } from '../scheduling/resources.js';

/**
 * CapacityBuffer (SIG Autoscaling, autoscaling.x-k8s.io; v1beta1 stored, v1alpha1
 * served with the same fields) parsed at the boundary into a typed view. Invalid
 * fields throw ObjectValidationError with one line naming the field; callers turn
 * it into a ReadyForProvisioning=False condition and go on with the other buffers.
 */

export const CAPACITY_BUFFER_GROUP = 'autoscaling.x-k8s.io';
export const CAPACITY_BUFFER_PLURAL = 'capacitybuffers';
/** Served versions, preferred first. */
export const CAPACITY_BUFFER_VERSIONS = ['v1beta1', 'v1alpha1'] as const;
/** The only strategy acted on, as in Cluster Autoscaler. */
export const ACTIVE_CAPACITY = 'buffer.x-k8s.io/active-capacity';

export interface ScalableRef {
  /** '' for the core group; 'apps', 'batch', or a custom group. */
  apiGroup: string;
  kind: string;
  name: string;
}

export interface CapacityBufferView {
  namespace: string;
  name: string;
  uid: string;
  generation?: number;
  podTemplateRef?: { name: string };
  scalableRef?: ScalableRef;
  replicas?: number;
  percentage?: number;
  /** Parsed resource list (cpu in millicores, others in base units). */
  limits?: Resources;
  provisioningStrategy: string;
}

type Obj = KubernetesObject & { spec?: Record<string, unknown> };

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function nonNegativeInt(v: unknown, field: string, fail: (f: string, p: string) => never): number | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > 2 ** 31 - 1) fail(field, `must be a non-negative 32-bit integer (got ${JSON.stringify(v)})`);
  return v;
}

function refName(v: unknown, field: string, fail: (f: string, p: string) => never): string {
  if (!isRecord(v) || typeof v.name !== 'string' || v.name === '') fail(`${field}.name`, 'must be a non-empty string');
  return (v as { name: string }).name;
}

export function parseCapacityBuffer(obj: Obj): CapacityBufferView {
  const namespace = obj.metadata?.namespace ?? 'default';
  const name = obj.metadata?.name ?? '';
  const fail = failer({ kind: 'CapacityBuffer', namespace, name });
  const spec = obj.spec;
  if (!isRecord(spec)) fail('spec', 'must be an object');
  const s = spec as Record<string, unknown>;
  const view: CapacityBufferView = {
    namespace, name, uid: obj.metadata?.uid ?? `${namespace}/${name}`,
    provisioningStrategy: typeof s.provisioningStrategy === 'string' && s.provisioningStrategy !== '' ? s.provisioningStrategy : ACTIVE_CAPACITY,
  };
  const generation = obj.metadata?.generation;
  if (typeof generation === 'number') view.generation = generation;
  if (s.podTemplateRef !== undefined && s.scalableRef !== undefined) fail('spec', 'set exactly one of podTemplateRef and scalableRef, not both');
  if (s.podTemplateRef !== undefined) view.podTemplateRef = { name: refName(s.podTemplateRef, 'spec.podTemplateRef', fail) };
  else if (s.scalableRef !== undefined) {
    const r = s.scalableRef;
    const nm = refName(r, 'spec.scalableRef', fail);
    const rec = r as Record<string, unknown>;
    if (typeof rec.kind !== 'string' || rec.kind === '') fail('spec.scalableRef.kind', 'must be a non-empty string');
    if (rec.apiGroup !== undefined && typeof rec.apiGroup !== 'string') fail('spec.scalableRef.apiGroup', 'must be a string');
    view.scalableRef = { apiGroup: (rec.apiGroup as string | undefined) ?? '', kind: rec.kind as string, name: nm };
  } else fail('spec', 'set one of podTemplateRef and scalableRef');
  const replicas = nonNegativeInt(s.replicas, 'spec.replicas', fail);
  if (replicas !== undefined) view.replicas = replicas;
  const percentage = nonNegativeInt(s.percentage, 'spec.percentage', fail);
  if (percentage !== undefined) {
    if (!view.scalableRef) fail('spec.percentage', 'needs scalableRef (a share of the scalable\'s replicas)');
    view.percentage = percentage;
  }
  if (s.limits !== undefined) {
    if (!isRecord(s.limits)) fail('spec.limits', 'must be a resource list');
    try {
      view.limits = parseResourceList(s.limits as Record<string, string | number>);
    } catch (err) {
      if (err instanceof QuantityError) fail('spec.limits', err.message);
      throw err;
    }
  }
  if (view.replicas === undefined && view.percentage === undefined && view.limits === undefined) {
    fail('spec', 'set replicas, percentage or limits');
  }
  return view;
}

/**
 * Cluster Autoscaler's chunk count, as documented in the 1.36.1 CRD (ADR 0072):
 * `percentage` of the scalable's replicas rounded up (at least 1 when positive);
 * with both `replicas` and `percentage`, the larger; then capped by how many chunks
 * fit in `limits`; with neither, as many as fit in `limits`. Returns undefined when
 * `limits` names no resource the chunk requests (nothing to count by).
 */
export function bufferChunkCount(b: Pick<CapacityBufferView, 'replicas' | 'percentage' | 'limits'>, chunk: Resources, scalableReplicas?: number): number | undefined {
  let wanted: number | undefined = b.replicas;
  if (b.percentage !== undefined && scalableReplicas !== undefined) {
    const share = b.percentage === 0 ? 0 : Math.max(1, Math.ceil((b.percentage * scalableReplicas) / 100));
    wanted = Math.max(wanted ?? 0, share);
  }
  if (b.limits) {
    let fit = Number.POSITIVE_INFINITY;
    for (const [res, limit] of Object.entries(b.limits)) {
      const per = chunk[res] ?? 0;
      if (per > 0) fit = Math.min(fit, Math.max(0, Math.floor(limit / per)));
    }
    if (!Number.isFinite(fit)) return undefined;
    wanted = wanted === undefined ? fit : Math.min(wanted, fit);
  }
  return wanted ?? 0;
}
