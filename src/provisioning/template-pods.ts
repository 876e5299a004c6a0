import type { V1Pod, V1PodTemplateSpec } from '@kubernetes/client-node';
import { toSchedulingPod } from '../scheduling/pod-demand.js';
import type { SchedulingPod } from '../scheduling/scheduling-pod.js';

/**
 * Virtual pods stamped from a pod template (CapacityBuffer chunks, ProvisioningRequest
 * bookings): converted once, copied `count` times with their own names. They are
 * `predicted` (never created, never bound, no events) and one equivalence class per
 * owner. Throws what toSchedulingPod throws for an invalid template.
 */
export interface TemplatePodsSpec {
  template: V1PodTemplateSpec;
  namespace: string;
  /** Pod names are `${baseName}-${i}`. */
  baseName: string;
  uid: string;
  count: number;
  /** `Kind/namespace/name` of what asked for them. */
  owner: string;
  /** Overrides the template's priority. */
  priority?: number;
  /** First index (to name a podSet's pods after the previous ones). */
  offset?: number;
  /** They stand for pods on their way (a ProvisioningRequest's), not spare (a CapacityBuffer's): SchedulingPod.predictedDemand. */
  demand?: boolean;
}

export function templatePods(s: TemplatePodsSpec): SchedulingPod[] {
  if (s.count <= 0 || !s.template.spec) return [];
  const meta = s.template.metadata ?? {};
  const proto = toSchedulingPod({
    apiVersion: 'v1', kind: 'Pod',
    metadata: { labels: meta.labels ?? {}, ...(meta.annotations ? { annotations: meta.annotations } : {}), name: `${s.baseName}-0`, namespace: s.namespace, uid: s.uid },
    spec: { ...s.template.spec, nodeName: undefined } as V1Pod['spec'],
  });
  const out: SchedulingPod[] = [];
  const first = s.offset ?? 0;
  for (let i = first; i < first + s.count; i++) {
    const name = `${s.baseName}-${i}`;
    out.push({
      ...proto, key: `${s.namespace}/${name}`, name, uid: `${s.uid}-${i}`, predicted: true, equivalenceKey: s.owner, owner: s.owner,
      ...(s.priority !== undefined ? { priority: s.priority } : {}),
      ...(s.demand ? { predictedDemand: true } : {}),
    });
  }
  return out;
}
