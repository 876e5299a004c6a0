import { createHash } from 'node:crypto';

/**
 * Names and labels of fleet mode's objects in the management cluster (ADR 0141): one
 * Lease per workload cluster, one presence Lease per replica, the prediction state
 * of each cluster keyed by the Cluster's uid.
 */

export const FLEET_LABEL = 'headroom.dev/fleet';
/** On a cluster Lease: the Cluster it licenses, `<namespace>/<name>` (names may be hashed). */
export const FLEET_CLUSTER_ANNOTATION = 'headroom.dev/cluster';
/** On a presence Lease: the JSON list of cluster keys the replica runs a warm controller for. */
export const FLEET_CONTENDING_ANNOTATION = 'headroom.dev/contending';
export const CLUSTER_NAME_LABEL = 'cluster.x-k8s.io/cluster-name';
export const CLUSTER_NAMESPACE_LABEL = 'headroom.dev/cluster-namespace';

function hash(s: string, n = 10): string {
  return createHash('sha256').update(s).digest('hex').slice(0, n);
}

/** The Lease licensing one workload cluster: `headroom-<namespace>.<name>`. A namespace has no
 * dot, so the first dot tells the two apart (`a-b`/`c` and `a`/`b-c` get different Leases); past
 * a DNS subdomain's 253 characters, the head and a hash of the whole. */
export function clusterLeaseName(c: { namespace: string; name: string }): string {
  const whole = `headroom-${c.namespace}.${c.name}`;
  if (whole.length <= 253) return whole;
  return `${whole.slice(0, 242).replace(/[-.]+$/, '')}-${hash(whole)}`;
}

export function replicaLeaseName(identity: string): string {
  return `headroom-fleet-${hash(identity)}`;
}

/** Label values are at most 63 characters: a longer name is not a label value (the annotation still names it). */
export function labelValue(v: string): string {
  return v.length <= 63 ? v : hash(v, 16);
}

/** The prediction state's ConfigMap base name for one Cluster, keyed by its uid (a re-created Cluster starts cold). */
export function clusterStateName(base: string, uid: string): string {
  return `${base}-${uid}`;
}
