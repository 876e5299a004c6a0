import { parseInteger, parseMilliCpu, QuantityError } from '../scheduling/quantity.js';
import type { InfrastructureRef } from './capi.js';
import { CPU, MEMORY, PODS, type Resources } from '../scheduling/resources.js';
import { ARCH_LABEL, DEFAULT_MAX_PODS, MAX_PODS_ANNOTATION, OS_LABEL, type CapacityAnnotations } from './capacity-annotations.js';
import type { UnstructuredObject } from './unstructured-object.js';
import { failer } from './validation-error.js';

/**
 * Scale from zero as Cluster API defines it (the "Opt-in Autoscaling from Zero"
 * proposal; the InfraMachineTemplate contract): an infrastructure provider may
 * report on its machine template `status.capacity` (a ResourceList: cpu, memory,
 * pods, ephemeral-storage, nvidia.com/gpu, ...) and `status.nodeInfo`
 * (`architecture`, `operatingSystem`). Cluster Autoscaler's clusterapi provider reads
 * them through the node group's infrastructure reference; the
 * capacity.cluster-autoscaler.kubernetes.io/* annotations override them key by key
 * (parseCapacityAnnotations).
 */

/** What an infrastructure template's status says about the nodes it makes. */
export interface InfrastructureTemplateCapacity {
  /** status.capacity in scheduler units; only the resources it names. */
  allocatable: Resources;
  /** kubernetes.io/arch and kubernetes.io/os from status.nodeInfo. */
  labels: Record<string, string>;
}

export function infrastructureRefKey(namespace: string, ref: InfrastructureRef): string {
  return `${ref.group}/${ref.kind}/${namespace}/${ref.name}`;
}

/** The key of an infrastructure object, for lookup by infrastructureRefKey. */
export function infrastructureObjectKey(obj: UnstructuredObject): string {
  const apiVersion = obj.apiVersion ?? '';
  const group = apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '';
  return `${group}/${obj.kind ?? ''}/${obj.metadata?.namespace ?? ''}/${obj.metadata?.name ?? ''}`;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Reads status.capacity and status.nodeInfo; undefined when the template reports
 * neither. Throws ObjectValidationError naming the field for a malformed one.
 */
export function parseInfrastructureTemplateCapacity(obj: UnstructuredObject): InfrastructureTemplateCapacity | undefined {
  const fail = failer({ kind: obj.kind ?? 'InfrastructureMachineTemplate', namespace: obj.metadata?.namespace ?? '', name: obj.metadata?.name ?? '<unnamed>' });
  const status = obj.status;
  if (!isRecord(status)) return undefined;
  const { capacity, nodeInfo } = status;
  if (capacity === undefined && nodeInfo === undefined) return undefined;
  const allocatable: Resources = {};
  if (capacity !== undefined && capacity !== null) {
    if (!isRecord(capacity)) fail('status.capacity', 'must be a resource list');
    for (const [name, q] of Object.entries(capacity)) {
      if (typeof q !== 'string' && typeof q !== 'number') fail(`status.capacity.${name}`, 'must be a quantity');
      try {
        allocatable[name] = name === 'cpu' ? parseMilliCpu(q as string | number) : parseInteger(q as string | number);
      } catch (err) {
        if (err instanceof QuantityError) fail(`status.capacity.${name}`, err.message);
        throw err;
      }
      if (allocatable[name]! < 0) fail(`status.capacity.${name}`, `must not be negative, got ${JSON.stringify(q)}`);
    }
  }
  const labels: Record<string, string> = {};
  if (nodeInfo !== undefined && nodeInfo !== null) {
    if (!isRecord(nodeInfo)) fail('status.nodeInfo', 'must be an object');
    for (const [field, label] of [['architecture', ARCH_LABEL], ['operatingSystem', OS_LABEL]] as const) {
      const v = (nodeInfo as Record<string, unknown>)[field];
      if (v === undefined || v === null || v === '') continue;
      if (typeof v !== 'string' || !/^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/.test(v)) fail(`status.nodeInfo.${field}`, `must be a label value, got ${JSON.stringify(v)}`);
      labels[label] = v as string;
    }
  }
  return { allocatable, labels };
}

/**
 * The group's capacity model with its infrastructure template's status under the
 * annotations, key by key, as Cluster Autoscaler merges them: a resource or label
 * the annotations name wins; the rest comes from the template. `annotations` are the
 * group's raw annotations (the pods default of parseCapacityAnnotations yields to a
 * template's pods; an explicit maxPods annotation does not).
 */
export function withInfrastructureTemplate(
  fromAnnotations: CapacityAnnotations, rawAnnotations: Readonly<Record<string, string>>, template: InfrastructureTemplateCapacity | undefined,
): CapacityAnnotations {
  if (!template) return fromAnnotations;
  const allocatable: Resources = { ...template.allocatable };
  for (const [k, v] of Object.entries(fromAnnotations.allocatable)) {
    if (k === PODS && rawAnnotations[MAX_PODS_ANNOTATION] === undefined && template.allocatable[PODS] !== undefined) continue;
    allocatable[k] = v;
  }
  const complete = allocatable[CPU] !== undefined && allocatable[MEMORY] !== undefined;
  if (complete && allocatable[PODS] === undefined) allocatable[PODS] = DEFAULT_MAX_PODS;
  return { ...fromAnnotations, allocatable, complete, labels: { ...template.labels, ...fromAnnotations.labels } };
}
