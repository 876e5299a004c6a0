import type { V1Node, V1NodeList, V1Pod } from '@kubernetes/client-node';

/**
 * The scheduler extender wire format, k8s.io/kube-scheduler/extender/v1 (types.go,
 * checked against v0.36.3). The Go structs have no json tags, so the JSON keys are the
 * Go field names; a nil pointer is `null`. The NodeList inside keeps its own lowercase
 * JSON names (`items`).
 */
export interface ExtenderArgs {
  Pod: V1Pod;
  /** Candidate nodes, sent when the extender is configured `nodeCacheCapable: false`. */
  Nodes?: V1NodeList | null;
  /** Candidate node names, sent when `nodeCacheCapable: true`. */
  NodeNames?: string[] | null;
}

/** Node name -> why the pod cannot go there. */
export type FailedNodesMap = Record<string, string>;

export interface ExtenderFilterResult {
  /** Surviving nodes, when the request carried Nodes. */
  Nodes: V1NodeList | null;
  /** Surviving node names, when the request carried NodeNames. */
  NodeNames: string[] | null;
  FailedNodes: FailedNodesMap;
  /** Failed nodes on which preemption would not help either; takes precedence over FailedNodes. */
  FailedAndUnresolvableNodes: FailedNodesMap;
  /** Non-empty fails the scheduling attempt (ignored when the extender is ignorable). */
  Error: string;
}

export interface HostPriority {
  Host: string;
  /** MinExtenderPriority (0) .. MaxExtenderPriority (10). */
  Score: number;
}

/** The prioritize reply is a bare JSON array. */
export type HostPriorityList = HostPriority[];

export const MIN_EXTENDER_PRIORITY = 0;
export const MAX_EXTENDER_PRIORITY = 10;

/** The candidate set of one call, in whichever of the two modes the scheduler used. */
export type Candidates =
  | { mode: 'names'; names: string[] }
  | { mode: 'nodes'; list: V1NodeList; nodes: V1Node[] };
