import type { V1Node, V1Pod } from '@kubernetes/client-node';
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
  // Nothing is being disrupted (the usual case) or the pod follows its node: every
  // candidate passes, with no per-candidate lookup (this runs for every pod scheduled).
  const passAll = state.disruptingCount === 0 || controllerOf(pod)?.kind === 'DaemonSet';
  const names = candidates.mode === 'names' ? candidates.names : candidates.nodes.map((n) => n.metadata!.name!);
  const keep: number[] = [];
  if (!passAll) {
    for (let i = 0; i < names.length; i++) {
      const reason = state.entry(names[i]!)?.disruption;
      if (reason === undefined) keep.push(i);
      else failed[names[i]!] = `headroom: ${reason}`;
    }
  }
  const kept = passAll || keep.length === names.length;
  const unresolvable = kept ? {} : { ...failed };
  if (candidates.mode === 'names') {
    return { Nodes: null, NodeNames: kept ? names : keep.map((i) => names[i]!), FailedNodes: failed, FailedAndUnresolvableNodes: unresolvable, Error: '' };
  }
  // kube-scheduler builds its NodeInfos from the returned objects, so the survivors go back
  // whole; only the Node fields, in a fresh NodeList (the caller's list-level keys are
  // not echoed). Their size and depth were bounded when the body was parsed.
  const items = kept ? candidates.nodes.map(nodeFields) : keep.map((i) => nodeFields(candidates.nodes[i]!));
  return { Nodes: { apiVersion: 'v1', kind: 'NodeList', metadata: {}, items }, NodeNames: null, FailedNodes: failed, FailedAndUnresolvableNodes: unresolvable, Error: '' };
}

function nodeFields(node: V1Node): V1Node {
  const out: V1Node = {};
  if (node.apiVersion !== undefined) out.apiVersion = node.apiVersion;
  if (node.kind !== undefined) out.kind = node.kind;
  if (node.metadata !== undefined) out.metadata = node.metadata;
  if (node.spec !== undefined) out.spec = node.spec;
  if (node.status !== undefined) out.status = node.status;
  return out;
}

/** How many candidates survived, whichever mode. */
export function survivorCount(result: ExtenderFilterResult): number {
  return result.NodeNames?.length ?? result.Nodes?.items.length ?? 0;
}
