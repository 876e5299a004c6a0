import type { V1Pod } from '@kubernetes/client-node';
import { workloadKeyOf } from '../prediction/signals.js';
import { controllerOf } from '../scheduling/pod-demand.js';

/** `Kind/namespace/name` of the pod's controlling owner: the key SchedulingPod.owner uses. */
export function ownerKey(pod: V1Pod): string | undefined {
  const ctl = controllerOf(pod);
  return ctl ? `${ctl.kind}/${pod.metadata?.namespace || 'default'}/${ctl.name}` : undefined;
}

/**
 * The extender cannot see CronJobs: any Job named `<name>-<digits>` may be a CronJob's,
 * and a provisioned-for annotation naming a CronJob that does not exist matches nothing.
 */
const ANY_CRONJOB = { has: () => true } as unknown as ReadonlySet<string>;

/**
 * Keys a node's headroom.dev/provisioned-for may name for this pod: its controlling
 * owner, and the workload behind it (a Deployment through its ReplicaSet, a CronJob
 * through its Job), which is what prediction provisions for.
 */
export function ownerKeys(pod: V1Pod): string[] {
  const own = ownerKey(pod);
  if (!own) return [];
  const workload = workloadKeyOf(pod, ANY_CRONJOB);
  return workload && workload !== own ? [own, workload] : [own];
}
