import type { V1Taint } from '@kubernetes/client-node';
import { parseInteger, parseMilliCpu, QuantityError } from '../scheduling/quantity.js';
import { CPU, EPHEMERAL_STORAGE, MEMORY, PODS, type Resources } from '../scheduling/resources.js';
import type { NodeGroupView } from './capi.js';
import { CAPACITY_TYPE_LABEL } from './nodepool.js';
import { failer } from './validation-error.js';

/**
 * The capacity annotation contract (issue 3, docs/adr/0020-capacity-model.md): the
 * annotations Cluster Autoscaler's clusterapi provider defined, read from a
 * MachineDeployment / MachineSet / MachinePool, plus our price annotation.
 */
export const MIN_SIZE_ANNOTATION = 'cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size';
export const MAX_SIZE_ANNOTATION = 'cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size';
export const CAPACITY_ANNOTATION_PREFIX = 'capacity.cluster-autoscaler.kubernetes.io/';
export const CPU_ANNOTATION = `${CAPACITY_ANNOTATION_PREFIX}cpu`;
export const MEMORY_ANNOTATION = `${CAPACITY_ANNOTATION_PREFIX}memory`;
export const EPHEMERAL_DISK_ANNOTATION = `${CAPACITY_ANNOTATION_PREFIX}ephemeral-disk`;
export const MAX_PODS_ANNOTATION = `${CAPACITY_ANNOTATION_PREFIX}maxPods`;
export const GPU_TYPE_ANNOTATION = `${CAPACITY_ANNOTATION_PREFIX}gpu-type`;
export const GPU_COUNT_ANNOTATION = `${CAPACITY_ANNOTATION_PREFIX}gpu-count`;
export const LABELS_ANNOTATION = `${CAPACITY_ANNOTATION_PREFIX}labels`;
export const TAINTS_ANNOTATION = `${CAPACITY_ANNOTATION_PREFIX}taints`;
/** With gpu-count: the DRA driver whose devices a new node publishes (no extended resource unless gpu-type is set, as CA does). */
export const DRA_DRIVER_ANNOTATION = `${CAPACITY_ANNOTATION_PREFIX}dra-driver`;
/** `driver=count,...`: CSI volumes a new node attaches per driver (CA's clusterapi provider). */
export const CSI_DRIVER_ANNOTATION = `${CAPACITY_ANNOTATION_PREFIX}csi-driver`;
/** Ours: a decimal price per node-hour. */
export const PRICE_ANNOTATION = 'headroom.dev/price';

export const DEFAULT_MAX_PODS = 110;
export const DEFAULT_GPU_RESOURCE = 'nvidia.com/gpu';
export const ZONE_LABEL = 'topology.kubernetes.io/zone';
export const HOSTNAME_LABEL = 'kubernetes.io/hostname';
export const OS_LABEL = 'kubernetes.io/os';
export const ARCH_LABEL = 'kubernetes.io/arch';
export { CAPACITY_TYPE_LABEL };
export type CapacityType = 'on-demand' | 'spot';

export interface ScalingBounds {
  minSize: number;
  maxSize: number;
}

/** What the group's annotations (and template) say about its nodes. */
export interface CapacityAnnotations {
  /** The allocatable the annotations declare; only the resources they name. */
  allocatable: Resources;
  /** cpu and memory are both declared: enough to build a node from nothing. */
  complete: boolean;
  /** From the labels annotation. */
  labels: Record<string, string>;
  /** From the taints annotation. */
  taints: V1Taint[];
  /** headroom.dev/price, if set. */
  pricePerHour?: number;
  /** The extended resource GPUs are counted in, if gpu-count is set. */
  gpuResource?: string;
}

const COUNT = /^[0-9]+$/;
const PRICE = /^(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)$/;
const LABEL_KEY = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const LABEL_VALUE = /^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$/;
const TAINT_EFFECTS = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'];

function isLabelKey(k: string): boolean {
  const name = k.includes('/') ? k.slice(k.indexOf('/') + 1) : k;
  return LABEL_KEY.test(k) && name.length <= 63 && k.length <= 253 + 1 + 63;
}

function isLabelValue(v: string): boolean {
  return v.length <= 63 && LABEL_VALUE.test(v);
}

/**
 * min/max size. A group with neither annotation is not managed (undefined). As
 * Cluster Autoscaler does, a missing min is 0, and min = max = 0 is not managed
 * either. A missing max with a min set, max < min, or a value that is not a
 * non-negative integer is an error.
 */
export function parseScalingBounds(group: NodeGroupView): ScalingBounds | undefined {
  const fail = failer(group);
  const a = group.annotations;
  const rawMin = a[MIN_SIZE_ANNOTATION];
  const rawMax = a[MAX_SIZE_ANNOTATION];
  if (rawMin === undefined && rawMax === undefined) return undefined;
  const count = (key: string, raw: string) => {
    if (!COUNT.test(raw.trim())) fail(`annotation ${key}`, `must be a non-negative integer, got ${JSON.stringify(raw)}`);
    return Number(raw.trim());
  };
  const minSize = rawMin === undefined ? 0 : count(MIN_SIZE_ANNOTATION, rawMin);
  if (rawMax === undefined) fail(`annotation ${MAX_SIZE_ANNOTATION}`, `is required when ${MIN_SIZE_ANNOTATION} is set`);
  const maxSize = count(MAX_SIZE_ANNOTATION, rawMax!);
  if (maxSize < minSize) fail(`annotation ${MAX_SIZE_ANNOTATION}`, `${maxSize} is less than min size ${minSize}`);
  if (maxSize === 0) return undefined;
  return { minSize, maxSize };
}

/** `k=v,k2=v2` (whitespace around items allowed; empty string = none). Throws Error with the problem. */
export function parseLabelsAnnotation(value: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const raw of value.split(',')) {
    const item = raw.trim();
    if (!item) continue;
    const eq = item.indexOf('=');
    if (eq < 0) throw new Error(`label ${JSON.stringify(item)} is not key=value`);
    const k = item.slice(0, eq).trim();
    const v = item.slice(eq + 1).trim();
    if (!isLabelKey(k)) throw new Error(`invalid label key ${JSON.stringify(k)}`);
    if (!isLabelValue(v)) throw new Error(`invalid label value ${JSON.stringify(v)} for key ${k}`);
    out[k] = v;
  }
  return out;
}

/** `k=v:NoSchedule,k2:NoExecute`. Throws Error with the problem. */
export function parseTaintsAnnotation(value: string): V1Taint[] {
  const out: V1Taint[] = [];
  for (const raw of value.split(',')) {
    const item = raw.trim();
    if (!item) continue;
    const colon = item.lastIndexOf(':');
    if (colon < 0) throw new Error(`taint ${JSON.stringify(item)} has no effect (want key=value:Effect)`);
    const effect = item.slice(colon + 1).trim();
    if (!TAINT_EFFECTS.includes(effect)) throw new Error(`taint ${JSON.stringify(item)}: effect must be one of ${TAINT_EFFECTS.join(', ')}`);
    const kv = item.slice(0, colon);
    const eq = kv.indexOf('=');
    const key = (eq < 0 ? kv : kv.slice(0, eq)).trim();
    const val = eq < 0 ? undefined : kv.slice(eq + 1).trim();
    if (!isLabelKey(key)) throw new Error(`invalid taint key ${JSON.stringify(key)}`);
    if (val !== undefined && !isLabelValue(val)) throw new Error(`invalid taint value ${JSON.stringify(val)} for key ${key}`);
    const taint: V1Taint = { key, effect };
    if (val) taint.value = val;
    out.push(taint);
  }
  return out;
}

/** Parses the capacity annotations and the price. Throws ObjectValidationError naming the annotation. */
export function parseCapacityAnnotations(group: NodeGroupView): CapacityAnnotations {
  const fail = failer(group);
  const a = group.annotations;
  const allocatable: Resources = {};
  const quantity = (key: string, parse: (q: string) => number): number | undefined => {
    const raw = a[key];
    if (raw === undefined) return undefined;
    let n: number;
    try {
      n = parse(raw);
    } catch (err) {
      if (err instanceof QuantityError) fail(`annotation ${key}`, err.message);
      throw err;
    }
    // parseQuantity refuses negative values, so n >= 0 here.
    return n;
  };
  const count = (key: string): number | undefined => {
    const raw = a[key];
    if (raw === undefined) return undefined;
    if (!COUNT.test(raw.trim())) fail(`annotation ${key}`, `must be a non-negative integer, got ${JSON.stringify(raw)}`);
    return Number(raw.trim());
  };

  const cpu = quantity(CPU_ANNOTATION, parseMilliCpu);
  const memory = quantity(MEMORY_ANNOTATION, parseInteger);
  const disk = quantity(EPHEMERAL_DISK_ANNOTATION, parseInteger);
  const maxPods = count(MAX_PODS_ANNOTATION);
  if (cpu !== undefined) allocatable[CPU] = cpu;
  if (memory !== undefined) allocatable[MEMORY] = memory;
  if (disk !== undefined) allocatable[EPHEMERAL_STORAGE] = disk;
  const complete = cpu !== undefined && memory !== undefined;
  if (maxPods !== undefined) allocatable[PODS] = maxPods;
  else if (complete) allocatable[PODS] = DEFAULT_MAX_PODS;

  const out: CapacityAnnotations = { allocatable, complete, labels: {}, taints: [] };
  const gpuCount = count(GPU_COUNT_ANNOTATION);
  const gpuType = a[GPU_TYPE_ANNOTATION]?.trim();
  if (gpuType !== undefined && (!gpuType.includes('/') || !isLabelKey(gpuType))) {
    fail(`annotation ${GPU_TYPE_ANNOTATION}`, `must be an extended resource name like ${DEFAULT_GPU_RESOURCE}, got ${JSON.stringify(gpuType)}`);
  }
  // CA 1.36 counts dra-driver GPUs as devices only (ResourceSlices), an extended resource only when gpu-type names one.
  const draOnly = a[DRA_DRIVER_ANNOTATION]?.trim() && gpuType === undefined;
  if (gpuCount !== undefined && gpuCount > 0 && !draOnly) {
    out.gpuResource = gpuType || DEFAULT_GPU_RESOURCE;
    allocatable[out.gpuResource] = gpuCount;
  }

  for (const [key, parse, set] of [
    [LABELS_ANNOTATION, parseLabelsAnnotation, (v: unknown) => { out.labels = v as Record<string, string>; }],
    [TAINTS_ANNOTATION, parseTaintsAnnotation, (v: unknown) => { out.taints = v as V1Taint[]; }],
  ] as const) {
    const raw = a[key];
    if (raw === undefined) continue;
    try {
      set(parse(raw));
    } catch (err) {
      fail(`annotation ${key}`, (err as Error).message);
    }
  }

  const price = a[PRICE_ANNOTATION];
  if (price !== undefined) {
    if (!PRICE.test(price.trim())) fail(`annotation ${PRICE_ANNOTATION}`, `must be a non-negative decimal price per node-hour, got ${JSON.stringify(price)}`);
    out.pricePerHour = Number(price.trim());
  }
  return out;
}

/**
 * The capacity type from the `karpenter.sh/capacity-type` label (from the labels
 * annotation or the template labels); on-demand when absent.
 */
export function capacityTypeOf(group: NodeGroupView, labels: Record<string, string>): CapacityType {
  const v = labels[CAPACITY_TYPE_LABEL];
  if (v === undefined || v === 'on-demand') return 'on-demand';
  if (v === 'spot') return 'spot';
  return failer(group)(`label ${CAPACITY_TYPE_LABEL}`, `must be "on-demand" or "spot", got ${JSON.stringify(v)}`);
}
