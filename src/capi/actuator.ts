import type { NodeGroupKind } from '../api/capi.js';

/** Identifies a scalable CAPI node group. */
export interface NodeGroupRef {
  kind: NodeGroupKind;
  namespace: string;
  name: string;
}

/** A node Headroom wants gone, with the Machine that backs it. */
export interface MachineRef {
  namespace: string;
  name: string;
  nodeName?: string;
}

/** A request for a standalone Machine (the Karpenter NodeClaim style). */
export interface StandaloneMachineRequest {
  /**
   * The Machine's name, derived from the decision (standaloneMachineName): the same
   * decision retried, or made by two writers on the same view, names the same
   * Machine, and the second create finds it already there instead of adding one.
   */
  name: string;
  nodePool: string;
  namespace: string;
  clusterName: string;
  /** Why it is created: the pods it is for, for events and tracing. */
  reason: string;
}

export interface ScaleResult {
  /** Replicas after the write (or what would have been written, in dry run). */
  replicas: number;
  written: boolean;
}

/** One Machine of a batch removal, and why it goes (for the log and events). */
export interface MachineRemoval {
  machine: MachineRef;
  reason: string;
}

export interface BatchScaleResult extends ScaleResult {
  /**
   * Names of the Machines removed (written) or that would have been (dry run): the first
   * ones of the batch the group's min size allows. The others were declined.
   */
  removed: string[];
}

/**
 * The CAPI actuator: the only code that writes CAPI objects. Like Karpenter's
 * cloud provider it is a narrow interface, so the controller, the simulator and
 * tests can swap the implementation (real apiserver, in-process simulated cluster).
 * Events about what the loops did are a port of their own (ActionEvents).
 */
export interface CapiActuator {
  /** Observed spec.replicas of a group (through the scale subresource). */
  getReplicas(group: NodeGroupRef): Promise<number>;
  /**
   * Sets replicas to `to` if they are still `from` (optimistic concurrency;
   * re-reads and retries on conflict). Never goes outside [min, max].
   */
  scaleTo(group: NodeGroupRef, from: number, to: number, reason: string): Promise<ScaleResult>;
  /**
   * Removes one specific machine from its group: annotates it
   * cluster.x-k8s.io/delete-machine, then decrements replicas; rolls the
   * annotation back if the decrement fails. Refuses to go below min size.
   */
  deleteMachine(group: NodeGroupRef, machine: MachineRef, reason: string): Promise<ScaleResult>;
  /**
   * Removes several Machines of one group with one replicas write (Cluster
   * Autoscaler's bulk delete of empty nodes): annotates each
   * cluster.x-k8s.io/delete-machine, then lowers replicas by their number, so CAPI's
   * MachineSet deletes exactly the marked ones; rolls every mark back if the write
   * fails. Never below min size: only the first (replicas - min) of them go, the
   * others are declined (not in `removed`, left unmarked).
   */
  deleteMachines(group: NodeGroupRef, machines: readonly MachineRemoval[]): Promise<BatchScaleResult>;
  /**
   * Creates a standalone Machine named `request.name` (plus bootstrap and
   * infrastructure objects); returns its name. A Machine of that name that already
   * exists is left as it is (the decision was carried out already).
   */
  createMachine(request: StandaloneMachineRequest): Promise<string>;
  /** Deletes a standalone Machine that Headroom created. */
  deleteStandaloneMachine(machine: MachineRef, reason: string): Promise<void>;
}
