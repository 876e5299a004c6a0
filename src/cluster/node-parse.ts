import type { V1Node, V1Taint } from '@kubernetes/client-node';
import { ObjectValidationError } from '../api/validation-error.js';
import { QuantityError } from '../scheduling/quantity.js';
import { parseResourceList, type Resources } from '../scheduling/resources.js';

/**
 * Taints that only say a node is still starting (or briefly unreachable); they go
 * away on their own, so a starting node is capacity on its way, as Karpenter
 * treats it (KnownEphemeralTaints). Only the NoSchedule forms: a dead node also
 * carries the NoExecute ones, which stay and keep pods off it.
 */
const EPHEMERAL_TAINTS = new Set([
  'node.kubernetes.io/not-ready',
  'node.kubernetes.io/unreachable',
  'node.cloudprovider.kubernetes.io/uninitialized',
  'node.cluster.x-k8s.io/uninitialized',
]);

/** The taints the scheduler will see once the node has started. */
export function schedulingTaints(node: V1Node): V1Taint[] {
  const taints = (node.spec?.taints ?? []) as V1Taint[];
  if (!taints.some((t) => t.effect === 'NoSchedule' && EPHEMERAL_TAINTS.has(t.key))) return taints;
  return taints.filter((t) => !(t.effect === 'NoSchedule' && EPHEMERAL_TAINTS.has(t.key)));
}

/** A node's allocatable (capacity when absent); a bad quantity is an ObjectValidationError naming its field. */
export function nodeAllocatable(node: V1Node): Resources {
  const list = (node.status?.allocatable ?? node.status?.capacity ?? {}) as Record<string, string>;
  try {
    return parseResourceList(list);
  } catch (err) {
    if (!(err instanceof QuantityError)) throw err;
    const field = Object.entries(list).find(([, q]) => q === err.input)?.[0];
    throw new ObjectValidationError('Node', '', node.metadata?.name ?? '', `status.allocatable${field ? `.${field}` : ''}`, err.message);
  }
}

const snapshotKeys = new WeakMap<V1Node, string>();

/**
 * Everything buildSnapshot reads of a Node (and validates), as one string: metadata
 * but its resourceVersion and managedFields, the whole spec, allocatable, capacity and
 * the conditions' type and status. Two Nodes with equal keys give the same snapshot, so
 * a kubelet or kwok heartbeat (condition times, resourceVersion) does not make a loop
 * build again. Memoized per object (objects are immutable).
 */
export function nodeSnapshotKey(node: V1Node): string {
  let key = snapshotKeys.get(node);
  if (key !== undefined) return key;
  const { resourceVersion: _rv, managedFields: _mf, ...meta } = node.metadata ?? {};
  const status = node.status;
  key = JSON.stringify([
    node.apiVersion, node.kind, meta, node.spec, status?.allocatable, status?.capacity,
    status?.conditions?.map((c) => [c.type, c.status]),
  ]);
  snapshotKeys.set(node, key);
  return key;
}
