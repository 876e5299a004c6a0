import type { KubernetesObject } from '@kubernetes/client-node';
import { ObjectValidationError } from './validation-error.js';

/**
 * Structural checks of the core objects Headroom reads (Pods, Nodes, DaemonSets,
 * volumes, Namespaces), at the boundary. Objects from the apiserver always pass;
 * hand-written files may not, and a wrong type deep inside a pod spec must become
 * one line naming the object and field, not a TypeError in the solver. Only the
 * fields we read are described; absent (undefined/null) fields are always fine,
 * but list elements must be present.
 */
export type Shape =
  | 'string' | 'number' | 'boolean' | 'object'
  /** A resource.Quantity: a string or a number (parsed later). */
  | 'quantity'
  | { map: Shape }
  | { list: Shape }
  | { fields: Record<string, Shape> };

function describe(v: unknown): string {
  return Array.isArray(v) ? 'a list' : v === null ? 'null' : typeof v === 'object' ? 'an object' : JSON.stringify(v);
}

/** The first problem as [field path, problem], or undefined when the value fits the shape. */
export function checkShape(value: unknown, shape: Shape, path: string): [string, string] | undefined {
  const p = check(value, shape);
  if (!p) return undefined;
  const rel = p[0];
  return [path ? (rel.startsWith('[') ? `${path}${rel}` : `${path}.${rel}`) : rel, p[1]];
}

/** The path of a problem is built on the way out, so the (common) valid case allocates nothing. */
function check(value: unknown, shape: Shape): [string, string] | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof shape === 'string') {
    switch (shape) {
      case 'string':
      case 'number':
      case 'boolean':
        return typeof value === shape ? undefined : ['', `must be a ${shape}, got ${describe(value)}`];
      case 'quantity':
        return typeof value === 'string' || typeof value === 'number' ? undefined : ['', `must be a quantity, got ${describe(value)}`];
      case 'object':
        return typeof value === 'object' && !Array.isArray(value) ? undefined : ['', `must be an object, got ${describe(value)}`];
    }
  }
  if ('list' in shape) {
    if (!Array.isArray(value)) return ['', `must be a list, got ${describe(value)}`];
    for (let i = 0; i < value.length; i++) {
      const item = value[i];
      if (item === undefined || item === null) return [`[${i}]`, 'must not be null'];
      const p = check(item, shape.list);
      if (p) return [join(`[${i}]`, p[0]), p[1]];
    }
    return undefined;
  }
  if (typeof value !== 'object' || Array.isArray(value)) return ['', `must be an object, got ${describe(value)}`];
  const rec = value as Record<string, unknown>;
  if ('map' in shape) {
    for (const k in rec) {
      const p = check(rec[k], shape.map);
      if (p) return [join(k, p[0]), p[1]];
    }
    return undefined;
  }
  for (const k in shape.fields) {
    const v = rec[k];
    if (v === undefined || v === null) continue;
    const p = check(v, shape.fields[k]!);
    if (p) return [join(k, p[0]), p[1]];
  }
  return undefined;
}

function join(head: string, rest: string): string {
  return rest === '' ? head : rest.startsWith('[') ? `${head}${rest}` : `${head}.${rest}`;
}

const S = 'string' as const;
const N = 'number' as const;
const B = 'boolean' as const;
const Q = 'quantity' as const;
const STRINGS: Shape = { list: S };
const STRING_MAP: Shape = { map: S };

const OWNER_REFERENCE: Shape = { fields: { apiVersion: S, kind: S, name: S, uid: S, controller: B } };
export const OBJECT_META_SHAPE: Shape = {
  fields: { name: S, namespace: S, uid: S, labels: STRING_MAP, annotations: STRING_MAP, ownerReferences: { list: OWNER_REFERENCE } },
};
const REQUIREMENT: Shape = { fields: { key: S, operator: S, values: STRINGS } };
const NODE_SELECTOR_TERM: Shape = { fields: { matchExpressions: { list: REQUIREMENT }, matchFields: { list: REQUIREMENT } } };
const NODE_SELECTOR: Shape = { fields: { nodeSelectorTerms: { list: NODE_SELECTOR_TERM } } };
const LABEL_SELECTOR: Shape = { fields: { matchLabels: STRING_MAP, matchExpressions: { list: REQUIREMENT } } };
const POD_AFFINITY_TERM: Shape = {
  fields: { labelSelector: LABEL_SELECTOR, namespaceSelector: LABEL_SELECTOR, namespaces: STRINGS, topologyKey: S, matchLabelKeys: STRINGS, mismatchLabelKeys: STRINGS },
};
const POD_AFFINITY: Shape = {
  fields: {
    requiredDuringSchedulingIgnoredDuringExecution: { list: POD_AFFINITY_TERM },
    preferredDuringSchedulingIgnoredDuringExecution: { list: { fields: { weight: N, podAffinityTerm: POD_AFFINITY_TERM } } },
  },
};
const AFFINITY: Shape = {
  fields: {
    nodeAffinity: {
      fields: {
        requiredDuringSchedulingIgnoredDuringExecution: NODE_SELECTOR,
        preferredDuringSchedulingIgnoredDuringExecution: { list: { fields: { weight: N, preference: NODE_SELECTOR_TERM } } },
      },
    },
    podAffinity: POD_AFFINITY,
    podAntiAffinity: POD_AFFINITY,
  },
};
const CONTAINER: Shape = {
  fields: {
    name: S,
    restartPolicy: S,
    resources: { fields: { requests: { map: Q }, limits: { map: Q } } },
    ports: { list: { fields: { containerPort: N, hostPort: N, protocol: S, hostIP: S } } },
  },
};
const TOLERATION: Shape = { fields: { key: S, operator: S, value: S, effect: S, tolerationSeconds: N } };
const SPREAD: Shape = {
  fields: {
    maxSkew: N, topologyKey: S, whenUnsatisfiable: S, labelSelector: LABEL_SELECTOR, minDomains: N,
    nodeAffinityPolicy: S, nodeTaintsPolicy: S, matchLabelKeys: STRINGS,
  },
};
export const POD_SPEC_SHAPE: Shape = {
  fields: {
    nodeName: S, schedulerName: S, priority: N, hostNetwork: B, nodeSelector: STRING_MAP, affinity: AFFINITY,
    containers: { list: CONTAINER }, initContainers: { list: CONTAINER }, overhead: { map: Q },
    tolerations: { list: TOLERATION }, topologySpreadConstraints: { list: SPREAD }, schedulingGates: { list: 'object' },
    volumes: { list: { fields: { name: S, persistentVolumeClaim: { fields: { claimName: S } }, ephemeral: 'object' } } },
  },
};
const TAINT: Shape = { fields: { key: S, value: S, effect: S } };

/** Shapes by `apiVersion/kind`. */
export const CORE_SHAPES: Record<string, Shape> = {
  'v1/Pod': { fields: { metadata: OBJECT_META_SHAPE, spec: POD_SPEC_SHAPE, status: { fields: { phase: S } } } },
  'v1/Node': {
    fields: {
      metadata: OBJECT_META_SHAPE,
      spec: { fields: { providerID: S, unschedulable: B, taints: { list: TAINT } } },
      status: { fields: { allocatable: { map: Q }, capacity: { map: Q }, conditions: { list: { fields: { type: S, status: S } } } } },
    },
  },
  'apps/v1/DaemonSet': { fields: { metadata: OBJECT_META_SHAPE, spec: { fields: { template: { fields: { metadata: OBJECT_META_SHAPE, spec: POD_SPEC_SHAPE } } } } } },
  'v1/PersistentVolume': { fields: { metadata: OBJECT_META_SHAPE, spec: { fields: { nodeAffinity: { fields: { required: NODE_SELECTOR } } } } } },
  'v1/PersistentVolumeClaim': { fields: { metadata: OBJECT_META_SHAPE, spec: { fields: { volumeName: S, storageClassName: S } } } },
  'storage.k8s.io/v1/StorageClass': {
    fields: {
      metadata: OBJECT_META_SHAPE, volumeBindingMode: S,
      allowedTopologies: { list: { fields: { matchLabelExpressions: { list: { fields: { key: S, values: STRINGS } } } } } },
    },
  },
  'v1/Namespace': { fields: { metadata: OBJECT_META_SHAPE } },
};

/**
 * Checks a core object against its shape (kinds without one pass). Throws
 * ObjectValidationError: `Pod shop/web: spec.containers[0].ports: must be a list, got 8080`.
 */
export function validateObjectShape(obj: KubernetesObject): void {
  const shape = CORE_SHAPES[`${obj.apiVersion}/${obj.kind}`];
  if (!shape) return;
  const problem = checkShape(obj, shape, '');
  if (!problem) return;
  const meta = (typeof obj.metadata === 'object' && obj.metadata !== null ? obj.metadata : {}) as { name?: unknown; namespace?: unknown };
  const namespaced = obj.kind !== 'Node' && obj.kind !== 'PersistentVolume' && obj.kind !== 'StorageClass' && obj.kind !== 'Namespace';
  const ns = namespaced ? (typeof meta.namespace === 'string' && meta.namespace ? meta.namespace : 'default') : '';
  throw new ObjectValidationError(obj.kind!, ns, typeof meta.name === 'string' ? meta.name : '<unnamed>', problem[0], problem[1]);
}
