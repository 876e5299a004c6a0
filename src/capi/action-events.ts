import type { NodeGroupRef } from './actuator.js';

/** A pod an action is taken for (events go on it). */
export interface PodRef {
  namespace: string;
  name: string;
  uid?: string;
}

/** An event about an action (e.g. reason TriggeredScaleUp on a pod, NotScaledUp on a group). */
export interface PodEvent {
  type: 'Normal' | 'Warning';
  reason: string;
  action: string;
  note: string;
}

/**
 * Events about what the loops did or did not do, on the pods they acted for and the
 * groups they would not grow: a port of its own, apart from the CapiActuator, because
 * they write to the workload cluster, never decide anything, and a loop runs the same
 * without them (the simulator has none). Fire and forget: an implementation never
 * fails an action and may cap how many pods get one, to bound writes.
 */
export interface ActionEvents {
  notifyPods(pods: readonly PodRef[], event: PodEvent): void;
  notifyGroup(group: NodeGroupRef, event: PodEvent): void;
}
