import type { KubernetesObject, V1Deployment, V1StatefulSet } from '@kubernetes/client-node';

/**
 * Pods a workload is about to create, read from its own object before the pods
 * exist: a Deployment scaled up (spec.replicas above status.replicas) or rolling
 * out (up to maxSurge extra pods), a StatefulSet scaled up. Shaped like an HPA's
 * desired-above-current (`{ key, current, desired }`), which prediction already
 * treats as pods that are coming. Pure.
 */

export interface RolloutSignal {
  /** `Deployment/namespace/name` or `StatefulSet/namespace/name`. */
  key: string;
  current: number;
  desired: number;
}

/** maxSurge of a rolling update (an int, or a percentage rounded up as the Deployment controller does). */
function maxSurge(d: V1Deployment, replicas: number): number {
  if (d.spec?.strategy?.type === 'Recreate') return 0;
  const raw = d.spec?.strategy?.rollingUpdate?.maxSurge ?? '25%';
  if (typeof raw === 'number') return Math.max(0, raw);
  const pct = /^([0-9]+)%$/.exec(raw);
  if (pct) return Math.ceil((Number(pct[1]) * replicas) / 100);
  return /^[0-9]+$/.test(raw) ? Number(raw) : 0;
}

/** The most pods a Deployment will run soon: spec.replicas, plus surge while a rollout is under way. */
export function deploymentDesired(d: V1Deployment): number {
  const want = d.spec?.replicas ?? 1;
  const rolling = (d.metadata?.generation ?? 0) > (d.status?.observedGeneration ?? 0) || (d.status?.updatedReplicas ?? 0) < want;
  return want + (rolling && !d.spec?.paused && want > 0 ? maxSurge(d, want) : 0);
}

export function rolloutSignals(deployments: readonly KubernetesObject[] = [], statefulSets: readonly KubernetesObject[] = []): RolloutSignal[] {
  const out: RolloutSignal[] = [];
  for (const d of deployments as V1Deployment[]) {
    const current = d.status?.replicas ?? 0;
    const desired = deploymentDesired(d);
    if (desired > current) out.push({ key: `Deployment/${d.metadata?.namespace || 'default'}/${d.metadata?.name}`, current, desired });
  }
  for (const s of statefulSets as V1StatefulSet[]) {
    const current = s.status?.replicas ?? 0;
    const desired = s.spec?.replicas ?? 1;
    if (desired > current) out.push({ key: `StatefulSet/${s.metadata?.namespace || 'default'}/${s.metadata?.name}`, current, desired });
  }
  return out;
}
