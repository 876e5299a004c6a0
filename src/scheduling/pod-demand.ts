import { hash } from 'node:crypto';
import type { V1OwnerReference, V1Pod } from '@kubernetes/client-node';
import { podHostPorts } from './host-ports.js';
import { podRequests } from './resources.js';
import type { PodClaimRef, SchedulingPod } from './scheduling-pod.js';

/**
 * Labels that differ between otherwise identical pods of one owner and that no
 * sane spread or affinity selector targets. They are left out of the equivalence
 * key so that StatefulSet / indexed Job pods still group (their claims, if any,
 * keep them apart anyway).
 */
const PER_POD_LABELS = new Set([
  'statefulset.kubernetes.io/pod-name',
  'apps.kubernetes.io/pod-index',
  'batch.kubernetes.io/job-completion-index',
]);

/** The controlling owner reference (or undefined). */
/** The ReplicaSet controller's hint of which pods to delete first (lower first); an int32. */
export const POD_DELETION_COST_ANNOTATION = 'controller.kubernetes.io/pod-deletion-cost';

/** The annotation's value when it is an int32, as the ReplicaSet controller accepts it; otherwise none. */
export function podDeletionCost(raw: string | undefined): number | undefined {
  if (raw === undefined || !/^[+-]?\d{1,10}$/.test(raw.trim())) return undefined;
  const v = Number(raw.trim());
  return v >= -(2 ** 31) && v < 2 ** 31 ? v : undefined;
}

export function controllerOf(pod: V1Pod): V1OwnerReference | undefined {
  return pod.metadata?.ownerReferences?.find((o) => o.controller === true);
}

export function isDaemonSetPod(pod: V1Pod): boolean {
  return controllerOf(pod)?.kind === 'DaemonSet';
}

/**
 * Whether a pod is demand a node autoscaler must satisfy: not bound to a node,
 * not terminal (Succeeded/Failed), not a DaemonSet pod (those follow the nodes),
 * without scheduling gates (the gate holder decides when it may schedule), and
 * not being deleted.
 */
export function isDemand(pod: V1Pod): boolean {
  const spec = pod.spec;
  if (!spec || spec.nodeName) return false;
  const phase = pod.status?.phase;
  if (phase === 'Succeeded' || phase === 'Failed') return false;
  if (pod.metadata?.deletionTimestamp) return false;
  if (spec.schedulingGates && spec.schedulingGates.length > 0) return false;
  return !isDaemonSetPod(pod);
}

/**
 * The scheduling-relevant view of a pod. Requests are computed here once
 * (init containers, sidecars, overhead). Claims are those of persistentVolumeClaim
 * volumes and of generic ephemeral volumes (`<pod>-<volume>`). The equivalence key is the controlling
 * owner plus a SHA-1 of everything the scheduler looks at: requests, nodeSelector,
 * affinity, tolerations, spread, host ports, claims, labels (minus per-pod ones)
 * and priority. It is built from JSON.stringify without sorting keys: pods stamped
 * from one template serialise identically, and a spurious difference only costs a
 * second class, never a wrong merge.
 */
export function toSchedulingPod(pod: V1Pod): SchedulingPod {
  const meta = pod.metadata ?? {};
  const spec = pod.spec;
  const namespace = meta.namespace || 'default';
  const name = meta.name ?? '';
  const labels = meta.labels ?? {};
  const ctl = controllerOf(pod);
  const owner = ctl ? `${ctl.kind}/${namespace}/${ctl.name}` : undefined;
  const requests = podRequests(pod);
  const nodeSelector = spec?.nodeSelector ?? {};
  const affinity = spec?.affinity;
  const tolerations = spec?.tolerations ?? [];
  const topologySpreadConstraints = spec?.topologySpreadConstraints ?? [];
  const hostPorts = podHostPorts(pod);
  const claims: string[] = [];
  for (const v of spec?.volumes ?? []) {
    if (v.persistentVolumeClaim?.claimName) claims.push(v.persistentVolumeClaim.claimName);
    // A generic ephemeral volume's claim is named <pod>-<volume> (created by the ephemeral volume controller).
    else if (v.ephemeral?.volumeClaimTemplate) claims.push(`${name}-${v.name}`);
  }
  const priority = spec?.priority ?? 0;

  let keyLabels: Record<string, string> = labels;
  for (const k in labels) {
    if (PER_POD_LABELS.has(k)) {
      keyLabels = {};
      for (const [lk, lv] of Object.entries(labels)) if (!PER_POD_LABELS.has(lk)) keyLabels[lk] = lv;
      break;
    }
  }
  const canonical = JSON.stringify([
    namespace, requests, nodeSelector, affinity ?? null, tolerations, topologySpreadConstraints, hostPorts, claims,
    keyLabels, priority, spec?.schedulerName ?? '',
  ]);
  // crypto.hash (one shot) is about twice as fast as createHash for short inputs.
  const digest = hash('sha1', canonical, 'base64url');
  const equivalenceKey = `${owner ?? `Pod/${namespace}`}#${digest}`;

  const out: SchedulingPod = {
    key: `${namespace}/${name}`,
    namespace,
    name,
    uid: meta.uid ?? '',
    labels,
    equivalenceKey,
    requests,
    priority,
    nodeSelector,
    tolerations,
    topologySpreadConstraints,
    hostPorts,
    claims,
  };
  if (owner) out.owner = owner;
  if (affinity) out.affinity = affinity;
  if (spec?.nodeName) out.nodeName = spec.nodeName;
  else if (pod.status?.nominatedNodeName) out.nominatedNodeName = pod.status.nominatedNodeName;
  const resourceClaims = podClaimRefs(pod);
  if (resourceClaims) out.resourceClaims = resourceClaims;
  const deletionCost = podDeletionCost(meta.annotations?.[POD_DELETION_COST_ANNOTATION]);
  if (deletionCost !== undefined) out.deletionCost = deletionCost;
  return out;
}

/**
 * spec.resourceClaims resolved as far as the pod says: a named claim, or a template
 * whose generated claim status.resourceClaimStatuses names once the resourceclaim
 * controller made it. Undefined without claims. Equivalence does not read these:
 * the snapshot builder keys pods by the devices their claims need (cluster/dra-snapshot.ts).
 */
export function podClaimRefs(pod: V1Pod): PodClaimRef[] | undefined {
  const refs = pod.spec?.resourceClaims;
  if (!refs?.length) return undefined;
  const generated = new Map<string, string | undefined>();
  for (const s of pod.status?.resourceClaimStatuses ?? []) generated.set(s.name, s.resourceClaimName);
  return refs.map((r) => {
    const ref: PodClaimRef = { name: r.name };
    if (r.resourceClaimName) ref.claim = r.resourceClaimName;
    else if (r.resourceClaimTemplateName) {
      ref.template = r.resourceClaimTemplateName;
      const g = generated.get(r.name);
      if (g) ref.claim = g;
    }
    return ref;
  });
}
