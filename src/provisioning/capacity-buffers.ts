import type { V1Pod, V1PodTemplate } from '@kubernetes/client-node';
import type { ClusterObjects } from '../cluster/objects.js';
import type { SchedulingPod } from '../cluster/snapshot.js';
import { toSchedulingPod } from '../scheduling/pod-demand.js';

/**
 * CapacityBuffers (SIG Autoscaling, autoscaling.x-k8s.io) as predicted pods: a
 * buffer with `podTemplateRef` and `replicas` asks for room for that many pods of
 * the template's shape, so the provisioner keeps that much spare capacity. They
 * are virtual (`predicted: true`): placed by the solver, never bound, no events.
 * Like Cluster Autoscaler, only the default `buffer.x-k8s.io/active-capacity`
 * strategy is honoured. Not yet: `scalableRef` / `percentage` (needs the scaled
 * object's template and replicas) and `limits`. Pure.
 */

export const ACTIVE_CAPACITY = 'buffer.x-k8s.io/active-capacity';
const MAX_BUFFER_PODS = 1000;

export function capacityBufferPods(objects: ClusterObjects): SchedulingPod[] {
  const templates = new Map<string, V1PodTemplate>();
  for (const t of (objects.podTemplates ?? []) as V1PodTemplate[]) {
    templates.set(`${t.metadata?.namespace ?? ''}/${t.metadata?.name ?? ''}`, t);
  }
  const out: SchedulingPod[] = [];
  for (const b of objects.capacityBuffers) {
    const spec = (b.spec ?? {}) as { provisioningStrategy?: unknown; podTemplateRef?: { name?: unknown }; replicas?: unknown };
    if (spec.provisioningStrategy !== undefined && spec.provisioningStrategy !== ACTIVE_CAPACITY) continue;
    const ns = b.metadata?.namespace ?? 'default';
    const ref = typeof spec.podTemplateRef?.name === 'string' ? spec.podTemplateRef.name : undefined;
    const replicas = typeof spec.replicas === 'number' && Number.isInteger(spec.replicas) ? Math.min(spec.replicas, MAX_BUFFER_PODS) : 0;
    const tpl = ref ? templates.get(`${ns}/${ref}`) : undefined;
    if (!tpl?.template?.spec || replicas <= 0) continue;
    for (let i = 0; i < replicas; i++) {
      const name = `capacitybuffer-${b.metadata?.name}-${i}`;
      const pod: V1Pod = {
        apiVersion: 'v1', kind: 'Pod',
        metadata: { ...tpl.template.metadata, name, namespace: ns, uid: `${b.metadata?.uid ?? b.metadata?.name}-${i}` },
        spec: tpl.template.spec,
      };
      let sp: SchedulingPod;
      try {
        sp = toSchedulingPod(pod);
      } catch {
        break; // an invalid template: nothing to provision for this buffer
      }
      out.push({ ...sp, predicted: true, equivalenceKey: `CapacityBuffer/${ns}/${b.metadata?.name}`, owner: `CapacityBuffer/${ns}/${b.metadata?.name}` });
    }
  }
  return out;
}
