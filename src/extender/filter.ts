import type { V1Pod } from '@kubernetes/client-node';
import { controllerOf } from '../scheduling/pod-demand.js';
import type { ExtenderState } from './state.js';
import type { Candidates, ExtenderFilterResult, FailedNodesMap } from './types.js';

/**
 * Keeps the pod off nodes Headroom is about to drain or consolidate. Everything else
 * passes: kube-scheduler has already checked fit, taints and affinity against its own
 * (fresher) cache, so re-checking here could only disagree with it.
 *
 * A rejected node is reported in FailedNodes with the reason and, as well, in
 * FailedAndUnresolvableNodes: preempting pods on a node that is about to be drained
 * would evict victims for a node that is going away (see docs/adr/0040).
 * DaemonSet pods are never filtered: they follow their node, whatever its fate.
 */
export function filterNodes(state: ExtenderState, pod: V1Pod, candidates: Candidates): ExtenderFilterResult {
  const failed: FailedNodesMap = {};
  const daemon = controllerOf(pod)?.kind === 'DaemonSet';
  const keep = (name: string): boolean => {
    if (daemon) return true;
    const reason = state.disruptionReason(name);
    if (reason === undefined) return true;
    failed[name] = `headroom: ${reason}`;
    return false;
  };
  if (candidates.mode === 'names') {
    return { Nodes: null, NodeNames: candidates.names.filter(keep), FailedNodes: failed, FailedAndUnresolvableNodes: { ...failed }, Error: '' };
  }
  const items = candidates.nodes.filter((n) => keep(n.metadata!.name!));
  return { Nodes: { ...candidates.list, items }, NodeNames: null, FailedNodes: failed, FailedAndUnresolvableNodes: { ...failed }, Error: '' };
}

/** How many candidates survived, whichever mode. */
export function survivorCount(result: ExtenderFilterResult): number {
  return result.NodeNames?.length ?? result.Nodes?.items.length ?? 0;
}
