import type { Condition } from '../api/condition.js';
import type { BufferResolution } from './capacity-buffers.js';

/**
 * The status Headroom writes on a CapacityBuffer (autoscaling.x-k8s.io, as Cluster
 * Autoscaler fills it): replicas, the PodTemplate in use and its generation, the
 * strategy, and the conditions ReadyForProvisioning, Provisioning and
 * LimitedByQuotas, each with the buffer's generation as observedGeneration. Pure.
 */

export const BUFFER_CONDITION = {
  ReadyForProvisioning: 'ReadyForProvisioning',
  Provisioning: 'Provisioning',
  LimitedByQuotas: 'LimitedByQuotas',
} as const;

export type BufferCondition = Condition;

export interface BufferStatus {
  replicas?: number;
  podTemplateRef?: { name: string };
  podTemplateGeneration?: number;
  provisioningStrategy: string;
  conditions: BufferCondition[];
}

/** How the last provisioning solve treated the buffer's chunks. */
export interface BufferPlacement {
  /** Chunks with no room on existing or new nodes, and the solver's reason. */
  unplaced?: { count: number; reason: string };
}

export function capacityBufferStatus(
  b: BufferResolution, now: string, placement: BufferPlacement | undefined, podTemplateGeneration: number | undefined,
): BufferStatus {
  const cond = (type: string, status: 'True' | 'False', reason: string, message: string): BufferCondition => ({
    type, status, reason, message, lastTransitionTime: now, ...(b.generation !== undefined ? { observedGeneration: b.generation } : {}),
  });
  const status: BufferStatus = { provisioningStrategy: b.strategy, conditions: [] };
  if (b.podTemplateName && !(b.problem && b.problem.reason !== 'UnsupportedProvisioningStrategy')) {
    status.podTemplateRef = { name: b.podTemplateName };
    if (podTemplateGeneration !== undefined) status.podTemplateGeneration = podTemplateGeneration;
  }
  if (b.problem) {
    status.conditions.push(cond(BUFFER_CONDITION.ReadyForProvisioning, 'False', b.problem.reason, b.problem.message));
    return status;
  }
  status.replicas = b.replicas;
  status.conditions.push(cond(BUFFER_CONDITION.ReadyForProvisioning, 'True', 'AttributesSetSuccessfully', 'ready'));
  if (b.quota) {
    status.conditions.push(cond(BUFFER_CONDITION.LimitedByQuotas, 'True', 'ResourceQuotasAllocated',
      `Buffer replicas limited from ${b.quota.from} to ${b.quota.to} due to quotas: ${b.quota.quotas.join(', ')}`));
  } else {
    status.conditions.push(cond(BUFFER_CONDITION.LimitedByQuotas, 'False', 'ResourceQuotasAllocated', ''));
  }
  if (b.replicas === 0) {
    status.conditions.push(cond(BUFFER_CONDITION.Provisioning, 'False', 'NoChunks', 'the buffer resolves to 0 chunks'));
  } else if (placement?.unplaced && placement.unplaced.count > 0) {
    status.conditions.push(cond(BUFFER_CONDITION.Provisioning, 'False', 'CapacityNotAvailable',
      `${placement.unplaced.count} of ${b.replicas} chunk(s) have no room on existing or new nodes: ${placement.unplaced.reason}`));
  } else if (placement) {
    status.conditions.push(cond(BUFFER_CONDITION.Provisioning, 'True', 'ChunksPlaced',
      `${b.replicas} chunk(s) kept free on existing or new nodes`));
  }
  return status;
}

/**
 * Keeps lastTransitionTime of conditions whose status did not change, and the
 * conditions of types Headroom does not write; says whether anything differs.
 */
export function mergeBufferStatus(current: Partial<BufferStatus> | undefined, next: BufferStatus): { status: BufferStatus; changed: boolean } {
  const prev = new Map((current?.conditions ?? []).map((c) => [c.type, c]));
  const ours = new Set(next.conditions.map((c) => c.type));
  let changed = false;
  const conditions = next.conditions.map((c) => {
    const p = prev.get(c.type);
    if (!p || p.status !== c.status || p.reason !== c.reason || p.message !== c.message || p.observedGeneration !== c.observedGeneration) changed = true;
    return p && p.status === c.status ? { ...c, lastTransitionTime: p.lastTransitionTime } : c;
  });
  // Others' condition types stay. Provisioning is only known after a solve: the last
  // one stays until then, unless the buffer is no longer served at all.
  const kept = (current?.conditions ?? []).filter((c) => !ours.has(c.type)
    && (!Object.values(BUFFER_CONDITION).includes(c.type as never) || (c.type === BUFFER_CONDITION.Provisioning && next.replicas !== undefined)));
  const status: BufferStatus = { ...next, conditions: [...conditions, ...kept] };
  for (const k of ['replicas', 'podTemplateGeneration', 'provisioningStrategy'] as const) if (current?.[k] !== status[k]) changed = true;
  if (current?.podTemplateRef?.name !== status.podTemplateRef?.name) changed = true;
  if ((current?.conditions?.length ?? 0) !== status.conditions.length) changed = true;
  return { status, changed };
}
