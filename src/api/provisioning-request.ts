import type { KubernetesObject } from '@kubernetes/client-node';
import type { Condition } from './condition.js';
import { failer } from './validation-error.js';

/**
 * ProvisioningRequest (SIG Autoscaling, autoscaling.x-k8s.io; v1 stored, v1beta1
 * served with the same fields) parsed at the boundary. Condition types, reasons and
 * messages follow Cluster Autoscaler's (cluster-autoscaler/provisioningrequest/
 * conditions), so tools written for it (Kueue's admission checks) read ours alike.
 */

export const PROVISIONING_REQUEST_PLURAL = 'provisioningrequests';
/** Served versions, preferred first. */
export const PROVISIONING_REQUEST_VERSIONS = ['v1', 'v1beta1'] as const;

export const CHECK_CAPACITY_CLASS = 'check-capacity.autoscaling.x-k8s.io';
export const ATOMIC_SCALE_UP_CLASS = 'best-effort-atomic-scale-up.autoscaling.x-k8s.io';
export const SUPPORTED_CLASSES: readonly string[] = [CHECK_CAPACITY_CLASS, ATOMIC_SCALE_UP_CLASS];

/** Pods carrying either annotation consume the named request's booking. */
export const CONSUME_ANNOTATIONS = [
  'autoscaling.x-k8s.io/consume-provisioning-request',
  'cluster-autoscaler.kubernetes.io/consume-provisioning-request',
] as const;

export const CONDITION = {
  Accepted: 'Accepted',
  Provisioned: 'Provisioned',
  Failed: 'Failed',
  BookingExpired: 'BookingExpired',
  CapacityRevoked: 'CapacityRevoked',
} as const;

export const REASON = {
  Accepted: 'Accepted',
  CapacityIsFound: 'CapacityIsFound',
  CapacityIsNotFound: 'CapacityIsNotFound',
  CapacityIsProvisioned: 'CapacityIsProvisioned',
  FailedToCreatePods: 'FailedToCreatePods',
  CapacityReservationTimeExpired: 'CapacityReservationTimeExpired',
  Expired: 'Expired',
} as const;

export const MESSAGE = {
  Accepted: 'ProvisioningRequest is accepted by Headroom',
  CapacityIsFound: 'Capacity is found in the cluster',
  CapacityIsProvisioned: 'Capacity is found in the cluster',
  CapacityReservationTimeExpired: 'Capacity reservation time is expired',
  Expired: 'ProvisioningRequest is expired',
} as const;

export type RequestCondition = Condition;

export interface PodSet {
  podTemplateRef: { name: string };
  count: number;
}

export interface ProvisioningRequestView {
  namespace: string;
  name: string;
  uid: string;
  generation?: number;
  /** ms since epoch; 0 when unknown. */
  createdAt: number;
  className: string;
  podSets: PodSet[];
  parameters: Record<string, string>;
  conditions: RequestCondition[];
}

type Obj = KubernetesObject & { spec?: Record<string, unknown>; status?: Record<string, unknown> };

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function parseProvisioningRequest(obj: Obj): ProvisioningRequestView {
  const namespace = obj.metadata?.namespace ?? 'default';
  const name = obj.metadata?.name ?? '';
  const fail = failer({ kind: 'ProvisioningRequest', namespace, name });
  const spec = obj.spec;
  if (!isRecord(spec)) fail('spec', 'must be an object');
  const s = spec as Record<string, unknown>;
  if (typeof s.provisioningClassName !== 'string' || s.provisioningClassName === '') fail('spec.provisioningClassName', 'must be a non-empty string');
  if (!Array.isArray(s.podSets) || s.podSets.length === 0) fail('spec.podSets', 'must be a non-empty list');
  const podSets = (s.podSets as unknown[]).map((ps, i): PodSet => {
    if (!isRecord(ps)) fail(`spec.podSets[${i}]`, 'must be an object');
    const p = ps as Record<string, unknown>;
    const ref = p.podTemplateRef;
    if (!isRecord(ref) || typeof ref.name !== 'string' || ref.name === '') fail(`spec.podSets[${i}].podTemplateRef.name`, 'must be a non-empty string');
    if (typeof p.count !== 'number' || !Number.isInteger(p.count) || p.count < 1 || p.count > 2 ** 31 - 1) fail(`spec.podSets[${i}].count`, `must be a positive integer (got ${JSON.stringify(p.count)})`);
    return { podTemplateRef: { name: (ref as { name: string }).name }, count: p.count as number };
  });
  const parameters: Record<string, string> = {};
  if (isRecord(s.parameters)) for (const [k, v] of Object.entries(s.parameters)) if (typeof v === 'string') parameters[k] = v;
  const rawConditions = isRecord(obj.status) && Array.isArray(obj.status.conditions) ? obj.status.conditions : [];
  const conditions = rawConditions.filter((c): c is RequestCondition => isRecord(c) && typeof c.type === 'string' && typeof c.status === 'string');
  const created = Date.parse(String(obj.metadata?.creationTimestamp ?? ''));
  const view: ProvisioningRequestView = {
    namespace, name, uid: obj.metadata?.uid ?? `${namespace}/${name}`,
    createdAt: Number.isFinite(created) ? created : 0,
    className: s.provisioningClassName as string, podSets, parameters, conditions,
  };
  if (typeof obj.metadata?.generation === 'number') view.generation = obj.metadata.generation;
  return view;
}

export function conditionOf(view: Pick<ProvisioningRequestView, 'conditions'>, type: string): RequestCondition | undefined {
  return view.conditions.find((c) => c.type === type);
}

export function isTrue(view: Pick<ProvisioningRequestView, 'conditions'>, type: string): boolean {
  return conditionOf(view, type)?.status === 'True';
}

/** The request a pod consumes, `namespace/name`, from either annotation. */
export function consumedRequest(pod: KubernetesObject): string | undefined {
  const a = pod.metadata?.annotations;
  if (!a) return undefined;
  for (const k of CONSUME_ANNOTATIONS) if (a[k]) return `${pod.metadata?.namespace ?? 'default'}/${a[k]}`;
  return undefined;
}
