import type { NodePool, NodePoolClusterRef } from './nodepool.js';

/**
 * Which CAPI Cluster a NodePool is for (spec.clusterRef, ADR 0140). NodePools live in
 * the management cluster, next to the Clusters and node groups, where one management
 * cluster serves many workload clusters: a pool names its Cluster, and applies to that
 * Cluster's node groups only. A pool without clusterRef applies to every cluster the
 * controller serves (the single-cluster installs before clusterRef existed); fleet
 * mode, which serves many, requires clusterRef.
 */

/** The pools that may apply to a node group of the Cluster `namespace/clusterName`. */
export function poolsForCluster(pools: readonly NodePool[], namespace: string, clusterName: string): readonly NodePool[] {
  if (pools.every((p) => !p.clusterRef)) return pools;
  return pools.filter((p) => !p.clusterRef || (p.clusterRef.namespace === namespace && p.clusterRef.name === clusterName));
}

/** spec.clusterRef of a NodePool object as stored, before validation; undefined when absent or malformed. */
export function rawClusterRef(obj: unknown): NodePoolClusterRef | undefined {
  const ref = (obj as { spec?: { clusterRef?: unknown } } | undefined)?.spec?.clusterRef;
  if (typeof ref !== 'object' || ref === null) return undefined;
  const { namespace, name } = ref as { namespace?: unknown; name?: unknown };
  return typeof namespace === 'string' && typeof name === 'string' ? { namespace, name } : undefined;
}

/** True when the object has spec.clusterRef at all (well-formed or not). */
export function hasClusterRef(obj: unknown): boolean {
  return (obj as { spec?: { clusterRef?: unknown } } | undefined)?.spec?.clusterRef !== undefined;
}
