import type { V1OwnerReference, V1Taint } from '@kubernetes/client-node';
import { checkShape, OBJECT_META_SHAPE } from './object-shape.js';
import type { UnstructuredObject } from './unstructured-object.js';
import { failer, type ObjectRef } from './validation-error.js';

/**
 * Typed, version-independent views of the Cluster API objects Headroom reads:
 * MachineDeployment, MachineSet, MachinePool and Machine, in cluster.x-k8s.io
 * v1beta2 (storage in CAPI v1.14) and v1beta1 (served). The fields we use live in
 * the same place in both versions except:
 * - Machine status.nodeRef: an ObjectReference in v1beta1, `{name}` in v1beta2
 *   (we read only `name`);
 * - Machine failure domain: spec.failureDomain, and in v1beta2 also
 *   status.failureDomain (where the infrastructure actually placed it);
 * - MachinePool failure domains: spec.failureDomains (a list) in both;
 * - paused: MachineDeployment spec.paused in both; cluster.x-k8s.io/paused annotation.
 */

/** The CAPI kinds Headroom scales: a node group is one of these. */
export type NodeGroupKind = 'MachineDeployment' | 'MachineSet' | 'MachinePool';

export const CAPI_GROUP = 'cluster.x-k8s.io';
export const CAPI_VERSIONS = ['v1beta2', 'v1beta1'] as const;
export type CapiVersion = (typeof CAPI_VERSIONS)[number];
export const NODE_GROUP_KINDS: readonly NodeGroupKind[] = ['MachineDeployment', 'MachineSet', 'MachinePool'];

export const CLUSTER_NAME_LABEL = 'cluster.x-k8s.io/cluster-name';
export const DEPLOYMENT_NAME_LABEL = 'cluster.x-k8s.io/deployment-name';
export const SET_NAME_LABEL = 'cluster.x-k8s.io/set-name';
export const POOL_NAME_LABEL = 'cluster.x-k8s.io/pool-name';
/** Node annotations CAPI sets: the Machine's name, its namespace, and the Machine's owner. */
export const MACHINE_ANNOTATION = 'cluster.x-k8s.io/machine';
export const MACHINE_NAMESPACE_ANNOTATION = 'cluster.x-k8s.io/cluster-namespace';
export const CLUSTER_NAME_ANNOTATION = 'cluster.x-k8s.io/cluster-name';
export const OWNER_KIND_ANNOTATION = 'cluster.x-k8s.io/owner-kind';
export const OWNER_NAME_ANNOTATION = 'cluster.x-k8s.io/owner-name';
export const DELETE_MACHINE_ANNOTATION = 'cluster.x-k8s.io/delete-machine';
export const PAUSED_ANNOTATION = 'cluster.x-k8s.io/paused';

/** A node group's infrastructure reference, version-independent. */
export interface InfrastructureRef {
  /** API group (v1beta2 `apiGroup`; v1beta1: the group of `apiVersion`). */
  group: string;
  kind: string;
  name: string;
}

interface CommonView {
  apiVersion: string;
  version: CapiVersion;
  namespace: string;
  name: string;
  uid: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  ownerReferences: V1OwnerReference[];
  clusterName: string;
  /** metadata.deletionTimestamp is set. */
  deleting: boolean;
}

export interface NodeGroupView extends CommonView {
  kind: NodeGroupKind;
  /** `${kind}/${namespace}/${name}` */
  id: string;
  /** spec.replicas; undefined when unset (CAPI then defaults it). */
  replicas: number | undefined;
  /** status.replicas, if reported. */
  statusReplicas: number | undefined;
  paused: boolean;
  template: {
    labels: Record<string, string>;
    annotations: Record<string, string>;
    /** spec.template.spec.taints (CAPI-managed node taints), without `propagation`. */
    taints: V1Taint[];
    failureDomain?: string;
    version?: string;
    /**
     * spec.template.spec.infrastructureRef: an InfraMachineTemplate for a
     * MachineDeployment / MachineSet, the InfraMachinePool for a MachinePool. Its
     * status.capacity / nodeInfo describe the nodes (infrastructure-template.ts).
     */
    infrastructureRef?: InfrastructureRef;
  };
  /** MachinePool spec.failureDomains, else the template's failure domain if any. */
  failureDomains: string[];
  /** MachinePool spec.providerIDList. */
  providerIDList: string[];
  /** MachinePool status.nodeRefs[].name. */
  nodeRefNames: string[];
}

export interface MachineView extends CommonView {
  kind: 'Machine';
  providerID?: string;
  /** status.nodeRef.name */
  nodeName?: string;
  failureDomain?: string;
  /** Marked `cluster.x-k8s.io/delete-machine`: chosen for the next scale-down. */
  markedForDeletion: boolean;
  phase?: string;
}

type Fail = (field: string, problem: string) => never;

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function record(v: unknown, field: string, fail: Fail): Record<string, unknown> {
  if (v === undefined || v === null) return {};
  if (!isRecord(v)) fail(field, 'must be an object');
  return v as Record<string, unknown>;
}

function stringMap(v: unknown, field: string, fail: Fail): Record<string, string> {
  const r = record(v, field, fail);
  for (const [k, val] of Object.entries(r)) if (typeof val !== 'string') fail(`${field}.${k}`, 'must be a string');
  return r as Record<string, string>;
}

function optString(v: unknown, field: string, fail: Fail): string | undefined {
  if (v === undefined || v === null || v === '') return undefined;
  if (typeof v !== 'string') fail(field, 'must be a string');
  return v as string;
}

function optCount(v: unknown, field: string, fail: Fail): number | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) fail(field, `must be a non-negative integer, got ${JSON.stringify(v)}`);
  return v as number;
}

function stringList(v: unknown, field: string, fail: Fail): string[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) fail(field, 'must be a list');
  const arr = v as unknown[];
  arr.forEach((s, i) => { if (typeof s !== 'string') fail(`${field}[${i}]`, 'must be a string'); });
  return arr as string[];
}

function versionOf(apiVersion: unknown, fail: Fail): CapiVersion {
  const [group, version] = typeof apiVersion === 'string' ? apiVersion.split('/') : [];
  if (group !== CAPI_GROUP || !CAPI_VERSIONS.includes(version as CapiVersion)) {
    fail('apiVersion', `unsupported ${JSON.stringify(apiVersion)} (want ${CAPI_GROUP}/v1beta2 or v1beta1)`);
  }
  return version as CapiVersion;
}

function common(obj: UnstructuredObject, kind: string): { view: CommonView; fail: Fail; ref: ObjectRef } {
  const meta = (obj.metadata ?? {}) as NonNullable<UnstructuredObject['metadata']>;
  const ref: ObjectRef = { kind, namespace: meta.namespace || 'default', name: meta.name ?? '<unnamed>' };
  const fail = failer(ref);
  if (!meta.name) fail('metadata.name', 'is required');
  const problem = checkShape(meta, OBJECT_META_SHAPE, 'metadata');
  if (problem) fail(problem[0], problem[1]);
  const version = versionOf(obj.apiVersion, fail);
  const labels = stringMap(meta.labels, 'metadata.labels', fail);
  const annotations = stringMap(meta.annotations, 'metadata.annotations', fail);
  const spec = record(obj.spec, 'spec', fail);
  const clusterName = optString(spec.clusterName, 'spec.clusterName', fail) ?? labels[CLUSTER_NAME_LABEL] ?? '';
  return {
    ref,
    fail,
    view: {
      apiVersion: obj.apiVersion!,
      version,
      namespace: ref.namespace,
      name: ref.name,
      uid: meta.uid ?? '',
      labels,
      annotations,
      ownerReferences: meta.ownerReferences ?? [],
      clusterName,
      deleting: meta.deletionTimestamp !== undefined && meta.deletionTimestamp !== null,
    },
  };
}

const TAINT_EFFECTS = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'];

function taintList(v: unknown, field: string, fail: Fail): V1Taint[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) fail(field, 'must be a list');
  return (v as unknown[]).map((t, i) => {
    if (!isRecord(t) || typeof t.key !== 'string' || !t.key) fail(`${field}[${i}].key`, 'is required');
    const r = t as Record<string, unknown>;
    if (typeof r.effect !== 'string' || !TAINT_EFFECTS.includes(r.effect)) fail(`${field}[${i}].effect`, `must be one of ${TAINT_EFFECTS.join(', ')}`);
    const taint: V1Taint = { key: r.key as string, effect: r.effect as string };
    const value = optString(r.value, `${field}[${i}].value`, fail);
    if (value !== undefined) taint.value = value;
    return taint;
  });
}

/** True for a MachineDeployment, MachineSet or MachinePool of cluster.x-k8s.io (any version). */
export function isNodeGroupObject(obj: { apiVersion?: string; kind?: string }): boolean {
  return NODE_GROUP_KINDS.includes(obj.kind as NodeGroupKind) && (obj.apiVersion ?? '').startsWith(`${CAPI_GROUP}/`);
}

/*
 * parseNodeGroupObject / parseMachine once per object: the loops read every group and
 * Machine on every pass (snapshot, provisioning failures, paused and rolling-out groups,
 * scale-down options, boot times), and parsing them again was a measurable share of a
 * pass. Sound because ClusterStateSource objects are immutable (a change is a new
 * object); an invalid one throws again each time, so it is reported each time. The
 * views are shared and must not be changed.
 */
const nodeGroupViews = new WeakMap<object, NodeGroupView>();
const machineViews = new WeakMap<object, MachineView>();

/** parseNodeGroupObject, remembered per object. */
export function parseNodeGroupObjectOnce(obj: UnstructuredObject): NodeGroupView {
  let v = nodeGroupViews.get(obj);
  if (!v) nodeGroupViews.set(obj, (v = parseNodeGroupObject(obj)));
  return v;
}

/** parseMachine, remembered per object. */
export function parseMachineOnce(obj: UnstructuredObject): MachineView {
  let v = machineViews.get(obj);
  if (!v) machineViews.set(obj, (v = parseMachine(obj)));
  return v;
}

/** Parses and validates a MachineDeployment / MachineSet / MachinePool. Throws ObjectValidationError. */
export function parseNodeGroupObject(obj: UnstructuredObject): NodeGroupView {
  const kind = obj.kind as NodeGroupKind;
  if (!NODE_GROUP_KINDS.includes(kind)) {
    failer({ kind: String(obj.kind), namespace: obj.metadata?.namespace ?? '', name: obj.metadata?.name ?? '<unnamed>' })('kind', 'is not a CAPI node group');
  }
  const { view, fail } = common(obj, kind);
  const spec = record(obj.spec, 'spec', fail);
  const status = record(obj.status, 'status', fail);
  const template = record(spec.template, 'spec.template', fail);
  const tmeta = record(template.metadata, 'spec.template.metadata', fail);
  const tspec = record(template.spec, 'spec.template.spec', fail);
  const failureDomain = optString(tspec.failureDomain, 'spec.template.spec.failureDomain', fail);
  const failureDomains = kind === 'MachinePool'
    ? stringList(spec.failureDomains, 'spec.failureDomains', fail)
    : (failureDomain ? [failureDomain] : []);
  const nodeRefs = status.nodeRefs;
  if (nodeRefs !== undefined && nodeRefs !== null && !Array.isArray(nodeRefs)) fail('status.nodeRefs', 'must be a list');
  const nodeRefNames = ((nodeRefs as unknown[] | undefined) ?? []).map((r, i) => {
    if (!isRecord(r) || typeof r.name !== 'string') fail(`status.nodeRefs[${i}].name`, 'is required');
    return (r as { name: string }).name;
  });
  const out: NodeGroupView = {
    ...view,
    kind,
    id: `${kind}/${view.namespace}/${view.name}`,
    replicas: optCount(spec.replicas, 'spec.replicas', fail),
    statusReplicas: optCount(status.replicas, 'status.replicas', fail),
    paused: spec.paused === true || PAUSED_ANNOTATION in view.annotations,
    template: {
      labels: stringMap(tmeta.labels, 'spec.template.metadata.labels', fail),
      annotations: stringMap(tmeta.annotations, 'spec.template.metadata.annotations', fail),
      taints: taintList(tspec.taints, 'spec.template.spec.taints', fail),
    },
    failureDomains,
    providerIDList: kind === 'MachinePool' ? stringList(spec.providerIDList, 'spec.providerIDList', fail) : [],
    nodeRefNames,
  };
  if (failureDomain) out.template.failureDomain = failureDomain;
  const version = optString(tspec.version, 'spec.template.spec.version', fail);
  if (version) out.template.version = version;
  const infrastructureRef = parseInfrastructureRef(tspec.infrastructureRef, 'spec.template.spec.infrastructureRef', fail);
  if (infrastructureRef) out.template.infrastructureRef = infrastructureRef;
  return out;
}

/** v1beta2 `{apiGroup, kind, name}` or v1beta1 `{apiVersion, kind, name}`; undefined when absent or incomplete. */
function parseInfrastructureRef(v: unknown, field: string, fail: Fail): InfrastructureRef | undefined {
  const r = record(v, field, fail);
  const kind = optString(r.kind, `${field}.kind`, fail);
  const name = optString(r.name, `${field}.name`, fail);
  const apiGroup = optString(r.apiGroup, `${field}.apiGroup`, fail);
  const apiVersion = optString(r.apiVersion, `${field}.apiVersion`, fail);
  const group = apiGroup ?? (apiVersion?.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : undefined);
  if (!kind || !name || !group) return undefined;
  return { group, kind, name };
}

/** Parses and validates a Machine (v1beta1 or v1beta2). Throws ObjectValidationError. */
export function parseMachine(obj: UnstructuredObject): MachineView {
  const { view, fail } = common(obj, 'Machine');
  if (obj.kind !== 'Machine') fail('kind', 'is not a Machine');
  const spec = record(obj.spec, 'spec', fail);
  const status = record(obj.status, 'status', fail);
  const nodeRef = record(status.nodeRef, 'status.nodeRef', fail);
  const out: MachineView = {
    ...view,
    kind: 'Machine',
    markedForDeletion: DELETE_MACHINE_ANNOTATION in view.annotations,
  };
  const providerID = optString(spec.providerID, 'spec.providerID', fail);
  if (providerID) out.providerID = providerID;
  const nodeName = optString(nodeRef.name, 'status.nodeRef.name', fail);
  if (nodeName) out.nodeName = nodeName;
  const fd = optString(spec.failureDomain, 'spec.failureDomain', fail) ?? optString(status.failureDomain, 'status.failureDomain', fail);
  if (fd) out.failureDomain = fd;
  const phase = optString(status.phase, 'status.phase', fail);
  if (phase) out.phase = phase;
  return out;
}
