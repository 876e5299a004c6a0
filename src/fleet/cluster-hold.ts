/**
 * What fleet mode reads of a CAPI Cluster before it autoscales it (pure; ADR 0143):
 * whether it is held (paused, deleting, a bad annotation), which Secret holds its
 * kubeconfig, and the condition it reports on the Cluster.
 */

/** Names a Secret in the Cluster's namespace holding the workload kubeconfig (key `value`) instead of `<cluster>-kubeconfig`. */
export const KUBECONFIG_SECRET_ANNOTATION = 'headroom.dev/kubeconfig-secret';
/** The condition type fleet mode keeps on each Cluster it owns. */
export const FLEET_CONDITION = 'HeadroomAutoscaling';
/** CAPI's pause annotation (honoured like spec.paused). */
export const CAPI_PAUSED_ANNOTATION = 'cluster.x-k8s.io/paused';

export type HoldReason = 'Paused' | 'Deleting' | 'InvalidAnnotation' | 'KubeconfigUnavailable' | 'WorkloadAPIUnreachable';

export interface Hold {
  reason: HoldReason;
  message: string;
}

export interface ClusterObject {
  metadata?: { name?: string; namespace?: string; uid?: string; generation?: number; deletionTimestamp?: string | null; annotations?: Record<string, string> | null };
  spec?: { paused?: boolean | null } | null;
}

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** The Secret of the workload kubeconfig, or a hold when the annotation naming it is not a Secret name. */
export function kubeconfigSecretName(cluster: ClusterObject): { name: string } | { hold: Hold } {
  const name = cluster.metadata?.name ?? '';
  const raw = cluster.metadata?.annotations?.[KUBECONFIG_SECRET_ANNOTATION];
  if (raw === undefined) return { name: `${name}-kubeconfig` };
  if (raw.length > 253 || !DNS_SUBDOMAIN.test(raw)) {
    return { hold: { reason: 'InvalidAnnotation', message: `annotation ${KUBECONFIG_SECRET_ANNOTATION} must name a Secret in the Cluster's namespace, got ${JSON.stringify(raw.slice(0, 80))}` } };
  }
  return { name: raw };
}

/** Why the Cluster itself says not to act on it now (before any Secret or API is tried). */
export function clusterHold(cluster: ClusterObject): Hold | undefined {
  if (cluster.metadata?.deletionTimestamp) return { reason: 'Deleting', message: 'the Cluster is being deleted: Headroom does not scale it' };
  if (cluster.spec?.paused === true) return { reason: 'Paused', message: 'spec.paused is true: Headroom does not scale the Cluster until it is unpaused' };
  if (cluster.metadata?.annotations?.[CAPI_PAUSED_ANNOTATION] !== undefined) {
    return { reason: 'Paused', message: `annotation ${CAPI_PAUSED_ANNOTATION} is set: Headroom does not scale the Cluster until it is removed` };
  }
  const secret = kubeconfigSecretName(cluster);
  return 'hold' in secret ? secret.hold : undefined;
}

export interface FleetCondition {
  type: string;
  status: 'True' | 'False';
  reason: string;
  message: string;
  observedGeneration?: number;
  lastTransitionTime?: string;
}

/** The condition for a held Cluster, or the one for a Cluster this replica autoscales. */
export function fleetCondition(hold: Hold | undefined, replica: string, generation?: number): FleetCondition {
  const base = { type: FLEET_CONDITION, ...(generation !== undefined ? { observedGeneration: generation } : {}) };
  return hold
    ? { ...base, status: 'False', reason: hold.reason, message: hold.message }
    : { ...base, status: 'True', reason: 'Autoscaling', message: `autoscaled by Headroom replica ${replica}` };
}

/**
 * The Cluster's conditions with ours set: the same list when nothing but the time
 * would change (no write then), lastTransitionTime kept while the status stays.
 */
export function withCondition<C extends { type?: string; status?: string; reason?: string; message?: string; lastTransitionTime?: string }>(
  conditions: readonly C[] | undefined, next: FleetCondition, nowIso: string,
): { conditions: (C | FleetCondition)[]; changed: boolean } {
  const list = [...(conditions ?? [])];
  const i = list.findIndex((c) => c.type === next.type);
  const old = i >= 0 ? list[i] : undefined;
  if (old && old.status === next.status && old.reason === next.reason && old.message === next.message) return { conditions: list, changed: false };
  const set: FleetCondition = { ...next, lastTransitionTime: old && old.status === next.status && old.lastTransitionTime ? old.lastTransitionTime : nowIso };
  if (i >= 0) list.splice(i, 1, set as C);
  else list.push(set as C);
  return { conditions: list, changed: true };
}
