import type { V1Node, V1Pod } from '@kubernetes/client-node';
import type { UnstructuredObject } from '../api/unstructured-object.js';
import type { NodeGroupRef } from '../capi/actuator.js';
import type { NodeTemplate } from '../cluster/snapshot.js';
import type { HostPort } from '../scheduling/host-ports.js';
import type { Resources } from '../scheduling/resources.js';
import type { SchedulingPod } from '../scheduling/scheduling-pod.js';
import type { Sampler } from './sampler.js';

/** The in-process cluster's mutable state. Only src/sim/cluster.ts changes it. */

export interface SimGroup {
  /** `${kind}/${namespace}/${name}`, as in snapshots and plans. */
  id: string;
  ref: NodeGroupRef;
  clusterName: string;
  /** The trace's CAPI object; its spec.replicas is kept current. */
  object: UnstructuredObject;
  template: NodeTemplate;
  pricePerHour: number;
  minSize: number;
  maxSize: number;
  replicas: number;
  /** Live machines, oldest first. */
  machines: SimMachine[];
  bootDelay: Sampler;
  /** Machines ever created, for names and boot-delay draws. */
  created: number;
}

export interface SimMachine {
  name: string;
  group: SimGroup;
  createdAt: number;
  readyAt: number;
  node?: SimNode;
  cancelBoot?: () => void;
  object: UnstructuredObject;
}

export interface SimNode {
  name: string;
  group: SimGroup;
  machine: SimMachine;
  labels: Record<string, string>;
  allocatable: Resources;
  /** Sum of the requests of the pods bound here. */
  requested: Resources;
  pods: Set<SimPod>;
  hostPorts: HostPort[];
  /** When the node last became empty (no pods), or undefined while it has pods. */
  emptySince: number | undefined;
  /** Static feasibility (selector, affinity, taints, volumes) per pod equivalence class. */
  feasible: Map<string, boolean>;
  object: V1Node;
}

/** Who made a pod and wants to hear about it (a workload controller of the driver). */
export interface PodOwner {
  onBound(pod: SimPod): void;
  /** The pod was removed without completing (its node went away). */
  onEvicted(pod: SimPod): void;
}

export interface SimPod {
  key: string;
  object: V1Pod;
  scheduling: SchedulingPod;
  owner: PodOwner;
  createdAt: number;
  boundAt?: number;
  node?: SimNode;
  /** Set once the scheduler tried and found no node. */
  unschedulable: boolean;
  /** Ordinal within its workload, for per-pod random draws. */
  ordinal: number;
  /** Pending-queue order: priority first, then this sequence. */
  seq: number;
}
