import type { V1Node, V1Pod } from '@kubernetes/client-node';

/**
 * The workload-cluster side of removing a node (the CAPI side is CapiActuator):
 * taint it, read it back fresh, untaint it. A port, so the controller (API server),
 * the simulator and tests each bring their own.
 */
export interface DisruptionNodePort {
  /** Adds the headroom.dev/disrupted:NoSchedule taint (no-op when present). */
  taintNode(name: string): Promise<void>;
  /** Removes that taint (no-op when absent or when the node is gone). */
  untaintNode(name: string): Promise<void>;
  /**
   * The node and the pods bound to it, read fresh from the source of truth (the API
   * server, not an informer cache); undefined when the node is gone.
   */
  readNode(name: string): Promise<FreshNode | undefined>;
  /**
   * Evicts a pod through the Eviction API (PDBs enforced by the API server, the pod's
   * grace period honoured). Optional: without it the node is not drained by Headroom
   * and CAPI's own drain evicts what is left (docs/adr/0082-eviction-and-capi-drain.md).
   */
  evictPod?(pod: PodRef): Promise<EvictionResult>;
}

export interface PodRef {
  namespace: string;
  name: string;
  /** The pod evicted must still be this one (a precondition on the eviction). */
  uid: string;
}

/**
 * evicted: the API server accepted it (the pod is terminating); gone: the pod (that
 * uid) no longer exists; refused: 429, a PodDisruptionBudget allows no disruption now.
 */
export type EvictionResult = { kind: 'evicted' } | { kind: 'gone' } | { kind: 'refused'; why: string; retryAfterMs?: number };

export interface FreshNode {
  node: V1Node;
  pods: V1Pod[];
}
