import type { KubernetesObject } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import type { UnstructuredObject } from '../api/unstructured-object.js';
import { strictProblem } from './known-fields.js';
import { emptyClusterObjects, type ClusterObjects } from './objects.js';

/**
 * Reads Kubernetes objects from text, as `headroom plan -f` gets it: multi-document
 * YAML, a JSON object or `List`, or `kubectl get -o yaml|json` output (kind: List,
 * also nested). The CLI reads files, directories and stdin and passes their text.
 * Kinds Headroom does not use are ignored; a later object with the same kind,
 * namespace and name replaces an earlier one (so overlays can be layered). Unknown
 * fields and misspelt kinds are refused, as `kubectl apply --validate=strict` does
 * (known-fields.ts).
 */

/** Unparseable input: names the source and the document (and line when known). */
export class LoadError extends Error {
  constructor(readonly source: string, message: string) {
    super(`${source}: ${message}`);
    this.name = 'LoadError';
  }
}

export interface LoadInput {
  /** A file name or `-` for stdin, used in error messages. */
  source: string;
  text: string;
}

export type Bucket = keyof ClusterObjects;

const CORE: Record<string, Bucket> = {
  'v1/Pod': 'pods',
  'v1/Node': 'nodes',
  'v1/PersistentVolume': 'persistentVolumes',
  'v1/PersistentVolumeClaim': 'persistentVolumeClaims',
  'v1/Namespace': 'namespaces',
  'v1/PodTemplate': 'podTemplates',
  'v1/ResourceQuota': 'resourceQuotas',
  'apps/v1/DaemonSet': 'daemonSets',
  // What a CapacityBuffer's scalableRef names.
  'apps/v1/Deployment': 'deployments',
  'apps/v1/StatefulSet': 'statefulSets',
  'apps/v1/ReplicaSet': 'replicaSets',
  'batch/v1/Job': 'jobs',
  // Prediction's signals (headroom plan lists the pods they announce).
  'batch/v1/CronJob': 'cronJobs',
  'autoscaling/v2/HorizontalPodAutoscaler': 'horizontalPodAutoscalers',
  'policy/v1/PodDisruptionBudget': 'podDisruptionBudgets',
  'storage.k8s.io/v1/StorageClass': 'storageClasses',
  'storage.k8s.io/v1/CSINode': 'csiNodes',
};

/** Kinds of these API groups are accepted in any version; the typed views validate the version. */
const BY_GROUP: Record<string, Record<string, Bucket>> = {
  'cluster.x-k8s.io': { MachineDeployment: 'nodeGroups', MachineSet: 'nodeGroups', MachinePool: 'nodeGroups', Machine: 'machines', Cluster: 'clusters' },
  'headroom.dev': { NodePool: 'nodePools' },
  'autoscaling.x-k8s.io': { CapacityBuffer: 'capacityBuffers', ProvisioningRequest: 'provisioningRequests' },
  // DRA; any served version (v1 is GA since 1.34): the fields read are the same in v1beta2.
  'resource.k8s.io': {
    ResourceClaim: 'resourceClaims', ResourceClaimTemplate: 'resourceClaimTemplates', DeviceClass: 'deviceClasses', ResourceSlice: 'resourceSlices',
  },
};

/** Which ClusterObjects list an object belongs to, or undefined for kinds we ignore. */
export function bucketOf(obj: { apiVersion?: string; kind?: string }): Bucket | undefined {
  const apiVersion = obj.apiVersion ?? '';
  const kind = obj.kind ?? '';
  const core = CORE[`${apiVersion}/${kind}`];
  if (core) return core;
  const slash = apiVersion.indexOf('/');
  return slash > 0 ? BY_GROUP[apiVersion.slice(0, slash)]?.[kind] : undefined;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Flattens Lists (any `*List` kind with items, as kubectl prints) into objects, checking each is an object. */
function flatten(value: unknown, where: string, out: KubernetesObject[], fail: (msg: string) => never): void {
  if (value === null || value === undefined) return;
  if (!isRecord(value)) fail(`${where}: not a Kubernetes object (got ${Array.isArray(value) ? 'a list' : typeof value})`);
  const obj = value as Record<string, unknown>;
  if (typeof obj.kind === 'string' && obj.kind.endsWith('List') && Array.isArray(obj.items)) {
    // A typed list straight from the API (PodList, MachineDeploymentList) omits its
    // items' apiVersion and kind; kubectl fills them in, and so do we.
    const itemKind = obj.kind === 'List' ? undefined : obj.kind.slice(0, -'List'.length);
    (obj.items as unknown[]).forEach((item, i) => {
      if (itemKind && isRecord(item) && item.kind === undefined) item = { apiVersion: obj.apiVersion, kind: itemKind, ...item };
      flatten(item, `${where} items[${i}]`, out, fail);
    });
    return;
  }
  if (typeof obj.kind !== 'string' || !obj.kind) fail(`${where}: not a Kubernetes object (no kind)`);
  if (typeof obj.apiVersion !== 'string' || !obj.apiVersion) fail(`${where}: ${obj.kind} has no apiVersion`);
  out.push(obj as KubernetesObject);
}

/** Parses one source into objects (Lists flattened, empty documents skipped). Throws LoadError. */
export function parseObjects(text: string, source = '-'): KubernetesObject[] {
  const out: KubernetesObject[] = [];
  const fail = (msg: string): never => { throw new LoadError(source, msg); };
  const trimmed = text.trimStart();
  // JSON fast path: kubectl -o json output of a big cluster parses ~10x faster than through the YAML parser.
  if (/\.json$/i.test(source) && trimmed !== '' && !trimmed.startsWith('{') && !trimmed.startsWith('[')) fail('invalid JSON: a .json file must hold a JSON object or array');
  if (trimmed.startsWith('{') || trimmed.startsWith('[')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (err) {
      // A .json file is JSON: say so. Otherwise it may be YAML flow style: fall through to YAML, which reports positions.
      if (/\.json$/i.test(source)) fail(`invalid JSON: ${(err as Error).message.split('\n')[0]!}`);
      parsed = undefined;
    }
    if (parsed !== undefined) {
      if (Array.isArray(parsed)) parsed.forEach((v, i) => flatten(v, `item ${i + 1}`, out, fail));
      else flatten(parsed, 'document 1', out, fail);
      return out;
    }
  }
  const docs = parseAllDocuments(text);
  if (!Array.isArray(docs)) return out; // an empty stream
  docs.forEach((doc, i) => {
    const err = doc.errors[0];
    if (err) {
      const pos = err.linePos?.[0];
      const at = pos ? ` (line ${pos.line}, column ${pos.col})` : '';
      fail(`document ${i + 1}${at}: invalid YAML: ${err.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '')}`);
    }
    flatten(doc.toJS({ maxAliasCount: 100 }), `document ${i + 1}`, out, fail);
  });
  return out;
}

function identity(obj: KubernetesObject): string {
  return `${obj.apiVersion?.split('/')[0]}|${obj.kind}|${obj.metadata?.namespace ?? ''}|${obj.metadata?.name ?? ''}`;
}

/**
 * Reads one or more sources into ClusterObjects. Objects of kinds Headroom does not
 * read are ignored; an unknown field or a misspelt kind throws LoadError; duplicates (same group, kind, namespace, name) keep the last one.
 */
export function loadObjects(input: string | LoadInput | readonly LoadInput[]): ClusterObjects {
  const inputs: readonly LoadInput[] = typeof input === 'string' ? [{ source: '-', text: input }] : Array.isArray(input) ? input : [input as LoadInput];
  const seen = new Map<string, { bucket: Bucket; obj: KubernetesObject }>();
  let anonymous = 0;
  for (const { source, text } of inputs) {
    for (const obj of parseObjects(text, source)) {
      const problem = strictProblem(obj);
      if (problem) throw new LoadError(source, problem);
      const bucket = bucketOf(obj);
      if (!bucket) continue;
      const key = obj.metadata?.name ? identity(obj) : `#${anonymous++}`;
      seen.set(key, { bucket, obj });
    }
  }
  const out = emptyClusterObjects();
  for (const { bucket, obj } of seen.values()) ((out[bucket] ??= []) as UnstructuredObject[]).push(obj as UnstructuredObject);
  return out;
}
