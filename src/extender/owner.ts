import type { V1Pod } from '@kubernetes/client-node';
import { controllerOf } from '../scheduling/pod-demand.js';

/** `Kind/namespace/name` of the pod's controlling owner: the key SchedulingPod.owner uses. */
export function ownerKey(pod: V1Pod): string | undefined {
  const ctl = controllerOf(pod);
  return ctl ? `${ctl.kind}/${pod.metadata?.namespace || 'default'}/${ctl.name}` : undefined;
}
