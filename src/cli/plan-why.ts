import type { ClusterObjects } from '../cluster/objects.js';
import type { PlanResult } from './plan.js';

/**
 * `headroom plan --why NAMESPACE/POD`: why the pod is pending (or that it is not) and
 * what Headroom would provision for it, from the same plan the command prints.
 */
export function explainPod(result: PlanResult, objects: ClusterObjects, key: string): string {
  const [namespace, name] = key.split('/') as [string, string | undefined];
  const pod = objects.pods.find((p) => p.metadata?.namespace === namespace && p.metadata?.name === name);
  if (!pod) return `pod ${key}: not found`;
  if (pod.spec?.nodeName) return `pod ${key}: not pending: bound to node ${pod.spec.nodeName} (phase ${pod.status?.phase ?? 'unknown'})`;
  if (pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed') return `pod ${key}: not pending: ${pod.status.phase}`;
  const lines: string[] = [];
  const alone = result.leftAlone.find((p) => p.key === key);
  const unschedulable = pod.status?.conditions?.find((c) => c.type === 'PodScheduled' && c.status === 'False');
  lines.push(`pod ${key}: pending${unschedulable?.message ? `; kube-scheduler says: ${unschedulable.message}` : ''}`);
  const placement = result.plan.placements.find((p) => p.pod === key);
  const refused = result.plan.unschedulable.find((u) => u.pod === key);
  if (alone) {
    lines.push(`Headroom leaves it alone: ${alone.reason}`);
  } else if (placement && 'node' in placement) {
    lines.push(`fits on existing node ${placement.node}: no new capacity needed (kube-scheduler should bind it; if it stays pending, check the scheduler and the node's readiness)`);
  } else if (placement) {
    const up = result.plan.scaleUps.find((s) => `${s.kind}/${s.namespace}/${s.name}` === placement.group || `${s.namespace}/${s.name}` === placement.group);
    lines.push(`Headroom would provision new node ${placement.newNode} of ${placement.group}${up ? ` (${up.kind} ${up.namespace}/${up.name}: ${up.from} -> ${up.to} replicas)` : ''}`);
  } else if (refused) {
    lines.push(`Headroom cannot provision for it: ${refused.reason}`);
  } else {
    lines.push('Headroom does not plan for it (not a pod it provisions for: e.g. a DaemonSet pod, scheduling gated, another scheduler, or outside the watched scope)');
  }
  return lines.join('\n');
}
