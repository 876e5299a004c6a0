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
}

export interface FreshNode {
  node: V1Node;
  pods: V1Pod[];
}
