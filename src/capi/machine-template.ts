import { NODEPOOL_HASH_ANNOTATION, nodePoolTemplateHash } from '../api/nodepool-hash.js';
import { CAPI_GROUP, CLUSTER_NAME_LABEL, type CapiVersion } from '../api/capi.js';
import { CAPACITY_ANNOTATION_PREFIX, MAX_PODS_ANNOTATION } from '../api/capacity-annotations.js';
import { NODEPOOL_API_VERSION, NODEPOOL_KIND, NODEPOOL_LABEL, type MachineTemplateSpec } from '../api/nodepool.js';
import type { UnstructuredObject } from '../api/unstructured-object.js';

/**
 * Standalone Machines, built the way CAPI's MachineSet builds its Machines
 * (internal/controllers/external GenerateTemplate): the bootstrap config and the
 * infrastructure machine are clones of their templates' `spec.template`, with the
 * template's kind minus "Template", its labels and annotations plus the
 * cloned-from annotations and the cluster-name label. Pure functions; the
 * actuator does the I/O.
 */

export const CLONED_FROM_NAME_ANNOTATION = 'cluster.x-k8s.io/cloned-from-name';
export const CLONED_FROM_GROUPKIND_ANNOTATION = 'cluster.x-k8s.io/cloned-from-groupkind';

export interface OwnerRef {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
}

function groupOf(apiVersion: string): string {
  return apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '';
}

function asRecord(v: unknown): Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

/** The object a template stamps out, named `name`, owned by `owner` (controller reference). */
export function cloneFromTemplate(
  template: UnstructuredObject, name: string, namespace: string, clusterName: string,
  labels: Record<string, string>, owner?: OwnerRef,
): UnstructuredObject {
  const kind = template.kind ?? '';
  if (!kind.endsWith('Template')) throw new Error(`${kind} ${template.metadata?.name}: a template's kind must end in "Template"`);
  const inner = asRecord(asRecord(template.spec).template);
  const meta = asRecord(inner.metadata);
  return {
    apiVersion: template.apiVersion,
    kind: kind.slice(0, -'Template'.length),
    metadata: {
      name,
      namespace,
      labels: { ...(meta.labels as Record<string, string> | undefined), ...labels, [CLUSTER_NAME_LABEL]: clusterName },
      annotations: {
        ...(meta.annotations as Record<string, string> | undefined),
        [CLONED_FROM_NAME_ANNOTATION]: template.metadata?.name ?? '',
        [CLONED_FROM_GROUPKIND_ANNOTATION]: `${kind}.${groupOf(template.apiVersion ?? '')}`,
      },
      ...(owner ? { ownerReferences: [{ ...owner, controller: true }] } : {}),
    },
    spec: structuredClone(asRecord(inner.spec)),
  };
}

/**
 * The node shape, in Cluster Autoscaler's capacity annotations on the Machine, so
 * tools that know that contract (and our own snapshot) can size it before it has a Node.
 */
function capacityAnnotations(capacity: Record<string, number>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [resource, n] of Object.entries(capacity)) {
    if (resource === 'cpu') out[`${CAPACITY_ANNOTATION_PREFIX}cpu`] = `${n}m`;
    else if (resource === 'memory') out[`${CAPACITY_ANNOTATION_PREFIX}memory`] = String(n);
    else if (resource === 'ephemeral-storage') out[`${CAPACITY_ANNOTATION_PREFIX}ephemeral-disk`] = String(n);
    else if (resource === 'pods') out[MAX_PODS_ANNOTATION] = String(n);
  }
  return out;
}

/** A reference to `obj` from a Machine, in the shape of the CAPI version in use. */
function contractRef(version: CapiVersion, apiVersion: string, kind: string, name: string, namespace: string): Record<string, string> {
  return version === 'v1beta2'
    ? { apiGroup: groupOf(apiVersion), kind, name }
    : { apiVersion, kind, name, namespace };
}

/**
 * The Machine for a NodePool's template. It references its bootstrap config and
 * infrastructure machine by name (both named like the Machine, created right after
 * it with the Machine as controller owner) and is owned by the NodePool, so
 * deleting the pool garbage-collects everything it created. No blockOwnerDeletion:
 * it would need update on the owners' finalizers subresource under the
 * OwnerReferencesPermissionEnforcement admission plugin, for no gain here.
 */
export function standaloneMachine(
  version: CapiVersion, name: string, nodePool: { name: string; uid: string }, tpl: MachineTemplateSpec,
): UnstructuredObject {
  const bootstrapKind = tpl.bootstrapConfigTemplateRef.kind.replace(/Template$/, '');
  const infraKind = tpl.infrastructureTemplateRef.kind.replace(/Template$/, '');
  return {
    apiVersion: `${CAPI_GROUP}/${version}`,
    kind: 'Machine',
    metadata: {
      name,
      namespace: tpl.namespace,
      labels: { ...tpl.labels, [CLUSTER_NAME_LABEL]: tpl.clusterName, [NODEPOOL_LABEL]: nodePool.name },
      // The template's hash: a Machine whose hash is no longer its pool's has drifted (docs/adr/0084-drift.md).
      annotations: { ...capacityAnnotations(tpl.capacity), [NODEPOOL_HASH_ANNOTATION]: nodePoolTemplateHash(tpl) },
      ownerReferences: [{
        apiVersion: NODEPOOL_API_VERSION, kind: NODEPOOL_KIND, name: nodePool.name, uid: nodePool.uid,
        controller: true,
      }],
    },
    spec: {
      clusterName: tpl.clusterName,
      ...(tpl.version ? { version: tpl.version } : {}),
      ...(tpl.failureDomain ? { failureDomain: tpl.failureDomain } : {}),
      bootstrap: { configRef: contractRef(version, tpl.bootstrapConfigTemplateRef.apiVersion, bootstrapKind, name, tpl.namespace) },
      infrastructureRef: contractRef(version, tpl.infrastructureTemplateRef.apiVersion, infraKind, name, tpl.namespace),
    },
  };
}
