import type { V2HorizontalPodAutoscaler } from '@kubernetes/client-node';
import type { ClusterObjects } from '../cluster/objects.js';
import type { DecisionReason, PredictionDecision } from '../prediction/predictor.js';
import { PREDICTION_OPT_OUT_ANNOTATION, PREDICTION_OPT_OUT_VALUE } from '../prediction/settings.js';
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

/** The reasons a prediction decision gives, as plan words them for an HPA that is scaling up. */
const HPA_REASON: Partial<Record<DecisionReason, (d: PredictionDecision) => string>> = {
  'opted-out': () => `the workload opts out of prediction (${PREDICTION_OPT_OUT_ANNOTATION}: ${PREDICTION_OPT_OUT_VALUE})`,
  'no-template': () => 'none of its pods in the input carries a pod template to copy',
  'no-pool': () => 'no node group it fits is in a NodePool with prediction on (spec.prediction.enabled: false, or no group fits its pods)',
  'not-rising': (d) => `its ${d.forecast.current} pods in the input are already as many as the HPA wants: they are planned as real pods`,
  'below-one-node': (d) => `the ${d.excess} pod(s) coming are less than one node's worth, and prediction acts on a rise of at least one node (they are left to the HPA and the next scale-up)`,
  capped: (d) => `held to ${d.pods} of ${d.excess} pod(s) by its NodePool's spec.prediction caps: maxSparePercent (a rise under one node's worth is held as spare, within it), maxPredictedNodes, maxExtraCostPerHour`,
};

/**
 * One line per HorizontalPodAutoscaler whose desired replicas are above its current ones
 * but whose workload got fewer predicted pods than the difference, saying why (issue 25,
 * item 8: such an HPA otherwise looks ignored).
 */
export function hpasWithoutPredictedPods(objects: ClusterObjects, decisions: readonly PredictionDecision[]): string[] {
  const byKey = new Map(decisions.map((d) => [d.key, d]));
  const out: string[] = [];
  for (const h of (objects.horizontalPodAutoscalers ?? []) as V2HorizontalPodAutoscaler[]) {
    const ref = h.spec?.scaleTargetRef;
    const ns = h.metadata?.namespace || 'default';
    const current = h.status?.currentReplicas ?? 0;
    const desired = Math.min(h.status?.desiredReplicas ?? 0, h.spec?.maxReplicas ?? Infinity);
    if (!ref?.kind || !ref.name || desired <= current) continue;
    const d = byKey.get(`${ref.kind}/${ns}/${ref.name}`);
    const head = `HorizontalPodAutoscaler ${ns}/${h.metadata?.name}: desired ${desired} above current ${current}, but`;
    if (!d) {
      out.push(`${head} no predicted pods: no pod of its ${ref.kind} ${ns}/${ref.name} is in the input (predicted pods copy a running pod's template)`);
      continue;
    }
    if (d.pods >= d.excess) continue;
    const why = HPA_REASON[d.reason]?.(d) ?? `prediction decided "${d.reason}"`;
    out.push(`${head} ${d.pods === 0 ? 'no predicted pods' : `${d.pods} predicted pod(s)`}: ${why}`);
  }
  return out;
}
