import * as k8s from '@kubernetes/client-node';
import { CRD_FIELDS } from './crd-fields.js';

/**
 * Unknown fields in hand-written input (`headroom plan -f`, `serve --snapshot`), as
 * `kubectl apply --validate=strict` refuses them: a misspelt `nodeSelecter` or `requets`
 * would otherwise be ignored and the plan made as if it were not there (issue 25, item 4).
 *
 * The fields known for each kind come from the upstream API definitions, not from what
 * Headroom reads, so no real field is refused:
 * - Kubernetes kinds: the API types generated from Kubernetes' OpenAPI in
 *   @kubernetes/client-node (every field of every nested type);
 * - NodePool, CapacityBuffer, ProvisioningRequest: the CRDs' openAPIV3Schema, kept in
 *   crd-fields.ts (scripts/crd-fields.ts writes it; a unit test checks it matches the CRDs);
 * - Cluster API kinds: the fields of v1beta1 and v1beta2 of Cluster API v1.14's CRDs
 *   down to a MachineDeployment's `spec.template.spec` (written out below).
 * `status` is never checked (it is the controllers' and changes most between versions),
 * and objects carrying `metadata.uid` or `metadata.resourceVersion` are not checked at all:
 * they were read from an apiserver, which has already refused or pruned unknown fields,
 * so a dump from a Kubernetes newer than these types is read as it is.
 */

/** What may be under a field: anything, a client-node type name, or a described object, list or map. */
export type KnownFields =
  | true
  | string
  | { fields: Record<string, KnownFields> }
  | { list: KnownFields }
  | { map: KnownFields };

const META = 'V1ObjectMeta';

function kubernetesKind(type: string): { fields: Record<string, KnownFields> } {
  const model = (k8s as unknown as Record<string, { getAttributeTypeMap?: () => Array<{ baseName: string; type: string }> }>)[type];
  const attrs = model?.getAttributeTypeMap?.();
  if (!attrs) throw new Error(`no API type ${type} in @kubernetes/client-node`);
  return { fields: Object.fromEntries(attrs.map((a) => [a.baseName, a.baseName === 'status' ? true : a.type])) };
}

/** Cluster API v1.14, v1beta1 and v1beta2 together; below these, anything. */
const CAPI_MACHINE_SPEC = [
  'bootstrap', 'clusterName', 'deletion', 'failureDomain', 'infrastructureRef', 'minReadySeconds', 'nodeDeletionTimeout',
  'nodeDrainTimeout', 'nodeVolumeDetachTimeout', 'providerID', 'readinessGates', 'taints', 'version',
];
const CAPI_SPEC: Record<string, string[]> = {
  Cluster: ['availabilityGates', 'clusterNetwork', 'controlPlaneEndpoint', 'controlPlaneRef', 'infrastructureRef', 'paused', 'topology'],
  Machine: CAPI_MACHINE_SPEC,
  MachineDeployment: [
    'clusterName', 'deletion', 'machineNaming', 'machineNamingStrategy', 'minReadySeconds', 'paused', 'progressDeadlineSeconds',
    'remediation', 'replicas', 'revisionHistoryLimit', 'rollout', 'rolloutAfter', 'selector', 'strategy', 'template',
  ],
  MachineSet: ['clusterName', 'deletePolicy', 'deletion', 'machineNaming', 'machineNamingStrategy', 'minReadySeconds', 'replicas', 'selector', 'template'],
  MachinePool: ['clusterName', 'failureDomains', 'minReadySeconds', 'providerIDList', 'replicas', 'template'],
};

const open = (names: string[]): Record<string, KnownFields> => Object.fromEntries(names.map((n) => [n, true]));

function capiKind(kind: string): KnownFields {
  const spec = open(CAPI_SPEC[kind]!);
  if ('template' in spec) spec.template = { fields: { metadata: { fields: { labels: true, annotations: true } }, spec: { fields: open(CAPI_MACHINE_SPEC) } } };
  return { fields: { apiVersion: 'string', kind: 'string', metadata: META, spec: { fields: spec }, status: true } };
}

/** client-node's type for each `apiVersion/kind` read from files (resource.k8s.io in each version it has). */
const KUBERNETES_TYPES: Record<string, string> = {
  'v1/Pod': 'V1Pod',
  'v1/Node': 'V1Node',
  'v1/PersistentVolume': 'V1PersistentVolume',
  'v1/PersistentVolumeClaim': 'V1PersistentVolumeClaim',
  'v1/Namespace': 'V1Namespace',
  'v1/PodTemplate': 'V1PodTemplate',
  'v1/ResourceQuota': 'V1ResourceQuota',
  'apps/v1/DaemonSet': 'V1DaemonSet',
  'apps/v1/Deployment': 'V1Deployment',
  'apps/v1/StatefulSet': 'V1StatefulSet',
  'apps/v1/ReplicaSet': 'V1ReplicaSet',
  'batch/v1/Job': 'V1Job',
  'batch/v1/CronJob': 'V1CronJob',
  'autoscaling/v2/HorizontalPodAutoscaler': 'V2HorizontalPodAutoscaler',
  'policy/v1/PodDisruptionBudget': 'V1PodDisruptionBudget',
  'storage.k8s.io/v1/StorageClass': 'V1StorageClass',
  'storage.k8s.io/v1/CSINode': 'V1CSINode',
  'resource.k8s.io/v1/ResourceClaim': 'ResourceV1ResourceClaim',
  'resource.k8s.io/v1/ResourceClaimTemplate': 'V1ResourceClaimTemplate',
  'resource.k8s.io/v1/DeviceClass': 'V1DeviceClass',
  'resource.k8s.io/v1/ResourceSlice': 'V1ResourceSlice',
  ...Object.fromEntries(['v1beta1', 'v1beta2'].flatMap((v) => ['ResourceClaim', 'ResourceClaimTemplate', 'DeviceClass', 'ResourceSlice']
    .map((k) => [`resource.k8s.io/${v}/${k}`, `V${v.slice(1)}${k}`]))),
};

/**
 * Every kind of the API groups whose kinds Headroom reads, so a misspelt kind
 * (`MachineDeployement`) is refused rather than ignored as a kind Headroom does not use.
 * Groups that gain kinds often (storage, resource) are left out.
 */
const GROUP_KINDS: Record<string, string[]> = {
  '': [
    'Binding', 'ComponentStatus', 'ConfigMap', 'Endpoints', 'Event', 'LimitRange', 'Namespace', 'Node', 'PersistentVolume',
    'PersistentVolumeClaim', 'Pod', 'PodTemplate', 'ReplicationController', 'ResourceQuota', 'Secret', 'Service', 'ServiceAccount',
  ],
  apps: ['ControllerRevision', 'DaemonSet', 'Deployment', 'ReplicaSet', 'StatefulSet'],
  batch: ['CronJob', 'Job'],
  policy: ['Eviction', 'PodDisruptionBudget'],
  'cluster.x-k8s.io': ['Cluster', 'ClusterClass', 'Machine', 'MachineDeployment', 'MachineDrainRule', 'MachineHealthCheck', 'MachinePool', 'MachineSet'],
  'headroom.dev': ['NodePool'],
  'autoscaling.x-k8s.io': ['CapacityBuffer', 'ProvisioningRequest'],
};

const trees = new Map<string, KnownFields | undefined>();

/** The fields known for an object's `apiVersion/kind`, or undefined when its kind is not checked. */
export function knownFieldsOf(apiVersion: string, kind: string): KnownFields | undefined {
  const key = `${apiVersion}/${kind}`;
  if (!trees.has(key)) {
    const group = apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '';
    const type = KUBERNETES_TYPES[key];
    const crd = CRD_FIELDS[key];
    trees.set(key, type ? kubernetesKind(type)
      : crd ? { fields: { apiVersion: 'string', kind: 'string', metadata: META, ...crd.fields, status: true } }
      : group === 'cluster.x-k8s.io' && CAPI_SPEC[kind] ? capiKind(kind) : undefined);
  }
  return trees.get(key);
}

/** Why a kind is refused (`unknown kind ... (did you mean MachineDeployment?)`), or undefined when it is real or its group is not checked. */
export function unknownKind(apiVersion: string, kind: string): string | undefined {
  const group = apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '';
  const kinds = GROUP_KINDS[group];
  if (!kinds || kinds.includes(kind) || kind.endsWith('List')) return undefined;
  return `unknown kind ${kind} in ${apiVersion}${suggest(kind, kinds)}`;
}

const resolved = new Map<string, Exclude<KnownFields, string>>();
const SCALARS = new Set(['string', 'number', 'boolean', 'Date', 'any', 'object', 'IntOrString']);

/** The fields a client-node type string describes (`Array<V1Container>`, `{ [key: string]: string; }`, `V1PodSpec`). */
function resolve(type: string): Exclude<KnownFields, string> {
  if (SCALARS.has(type)) return true;
  const list = /^Array<(.+)>$/.exec(type);
  if (list) return { list: list[1]! };
  const map = /^\{ \[key: string\]: (.+); \}$/.exec(type);
  if (map) return { map: map[1]! };
  const cached = resolved.get(type);
  if (cached !== undefined) return cached;
  let tree: Exclude<KnownFields, string>;
  try {
    tree = kubernetesKind(type);
  } catch {
    tree = true; // a type this client-node does not describe: not checked
  }
  resolved.set(type, tree);
  return tree;
}

/**
 * The first unknown field under `value`, as [path, problem], or undefined. Paths read as
 * in kubectl's messages: `spec.containers[0].resources.requets`.
 */
export function findUnknownField(value: unknown, known: KnownFields, path = ''): [string, string] | undefined {
  if (known === true || value === null || typeof value !== 'object') return undefined;
  const k = typeof known === 'string' ? resolve(known) : known;
  if (k === true) return undefined;
  if ('list' in k) {
    if (!Array.isArray(value)) return undefined; // a wrong type is object-shape.ts's to report
    for (let i = 0; i < value.length; i++) {
      const p = findUnknownField(value[i], k.list, `${path}[${i}]`);
      if (p) return p;
    }
    return undefined;
  }
  if (Array.isArray(value)) return undefined;
  const rec = value as Record<string, unknown>;
  for (const name of Object.keys(rec)) {
    const sub = 'map' in k ? k.map : k.fields[name];
    const at = path ? `${path}.${name}` : name;
    if (sub === undefined) return [at, `unknown field${suggest(name, Object.keys('fields' in k ? k.fields : {}))}`];
    const p = findUnknownField(rec[name], sub, at);
    if (p) return p;
  }
  return undefined;
}

/**
 * The fields an OpenAPI v3 schema (a CRD's) describes: objects with `properties`, maps
 * (`additionalProperties`), lists; anything where it preserves unknown fields or says no more.
 */
export function fieldsFromOpenApi(schema: unknown): KnownFields {
  if (typeof schema !== 'object' || schema === null) return true;
  const s = schema as Record<string, unknown>;
  if (s['x-kubernetes-preserve-unknown-fields'] === true) return true;
  if (s.type === 'array') return s.items === undefined ? true : { list: fieldsFromOpenApi(s.items) };
  if (typeof s.properties === 'object' && s.properties !== null) {
    return { fields: Object.fromEntries(Object.entries(s.properties).map(([k, v]) => [k, fieldsFromOpenApi(v)])) };
  }
  if (typeof s.additionalProperties === 'object' && s.additionalProperties !== null) return { map: fieldsFromOpenApi(s.additionalProperties) };
  return true;
}

/** ` (did you mean X?)` for the nearest name within two edits, else empty. */
function suggest(name: string, names: readonly string[]): string {
  let best: string | undefined;
  let bestDistance = 3;
  for (const n of names) {
    const d = editDistance(name.toLowerCase(), n.toLowerCase());
    if (d < bestDistance) { best = n; bestDistance = d; }
  }
  return best === undefined ? '' : ` (did you mean ${best}?)`;
}

/** Levenshtein distance, with adjacent transpositions counted as one edit. */
function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...new Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, d[i - 2]![j - 2]! + 1);
      d[i]![j] = v;
    }
  }
  return d[a.length]![b.length]!;
}

/**
 * The unknown-field or unknown-kind problem of one object read from a file, as
 * `Pod default/web: spec.nodeSelecter: unknown field (did you mean nodeSelector?)`, or undefined.
 */
export function strictProblem(obj: { apiVersion?: unknown; kind?: unknown; metadata?: unknown }): string | undefined {
  const apiVersion = String(obj.apiVersion);
  const kind = String(obj.kind);
  const meta = (typeof obj.metadata === 'object' && obj.metadata !== null ? obj.metadata : {}) as Record<string, unknown>;
  const name = `${kind} ${typeof meta.namespace === 'string' && meta.namespace ? `${meta.namespace}/` : ''}${typeof meta.name === 'string' ? meta.name : '<unnamed>'}`;
  const badKind = unknownKind(apiVersion, kind);
  if (badKind) return `${name}: kind: ${badKind}`;
  if (meta.uid !== undefined || (meta.resourceVersion !== undefined && meta.resourceVersion !== '')) return undefined;
  const known = knownFieldsOf(apiVersion, kind);
  const problem = known && findUnknownField(obj, known);
  return problem ? `${name}: ${problem[0]}: ${problem[1]}` : undefined;
}
