import type { V1Pod } from '@kubernetes/client-node';
import type { UnstructuredObject } from '../api/unstructured-object.js';
import type { ClusterObjects } from '../cluster/objects.js';
import type { StateChange } from '../cluster/state.js';
import { isDemand } from '../scheduling/pod-demand.js';
import { machineFailure } from './provision-failures.js';

const KIND_TRIGGERS = new Set<keyof ClusterObjects>(['pods', 'nodeGroups', 'nodePools', 'capacityBuffers', 'provisioningRequests']);

/**
 * Does this change open (or extend) a batch window? Like Karpenter, only new
 * demand does: a pod that appears unbound, a new node group, a changed pool / buffer,
 * or a relist. Pod updates (the scheduler marking pods unschedulable, status
 * churn while a burst lands) would otherwise keep extending the idle window to
 * its max; a pod that only becomes schedulable later is caught by the resync.
 * A source that does not say what changed always triggers.
 */
export function isTrigger(kind: keyof ClusterObjects, change?: StateChange): boolean {
  // A Machine CAPI reports failed is replaced at once, not at the next resync.
  if (kind === 'machines') return change?.type === 'ADDED' || change?.type === 'MODIFIED' ? machineFailure(change.object as UnstructuredObject) !== undefined : false;
  if (!KIND_TRIGGERS.has(kind)) return false;
  if (!change || change.type === 'RELIST') return true;
  if (kind === 'pods') {
    const pod = change.object as { spec?: { nodeName?: string } } | undefined;
    return change.type === 'ADDED' && !pod?.spec?.nodeName;
  }
  // Node groups churn status while nodes boot; only new or removed groups are news.
  if (kind === 'nodeGroups') return change.type !== 'MODIFIED';
  return true;
}

/**
 * Whether a pod could be a snapshot's pending pod: isDemand, or a malformed pod
 * isDemand cannot read (buildSnapshot then reports it). False means buildSnapshot
 * would not list it as pending.
 */
export function mayBeDemand(pod: V1Pod): boolean {
  try {
    return isDemand(pod);
  } catch {
    return true;
  }
}
