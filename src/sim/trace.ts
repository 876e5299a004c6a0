import type { V1PodTemplateSpec } from '@kubernetes/client-node';
import type { UnstructuredObject } from '../api/unstructured-object.js';

/**
 * A workload trace: the node groups a simulated cluster starts with and the demand
 * that arrives over time. Parsed and validated from YAML by `parseTrace`
 * (src/sim/trace-parse.ts); everything here is already checked. Times are
 * milliseconds of simulated time from the start of the run.
 */
export interface Trace {
  name: string;
  description: string;
  duration: number;
  nodeGroups: TraceNodeGroup[];
  workloads: Workload[];
  /**
   * SIG Autoscaling CapacityBuffers (any served version), kept by Headroom's policy as
   * the controller keeps them; a scalableRef may name a Deployment workload of the trace.
   */
  capacityBuffers: UnstructuredObject[];
  /** PodTemplates the buffers' podTemplateRef name. */
  podTemplates: UnstructuredObject[];
  /**
   * resource.k8s.io/v1 objects the cluster starts with (src/sim/dra.ts): DeviceClasses,
   * ResourceClaimTemplates and ResourceClaims the pods name, and the template
   * ResourceSlices groups name in `headroom.dev/template-resource-slices`.
   */
  dra?: UnstructuredObject[];
}

export interface TraceNodeGroup {
  /** A MachineDeployment, MachineSet or MachinePool carrying the capacity annotation contract. */
  object: UnstructuredObject;
  /** How long a new Machine of this group takes to become a Ready node. */
  bootDelay: Distribution;
}

export type Distribution =
  | { kind: 'constant'; value: number }
  | { kind: 'uniform'; min: number; max: number }
  | { kind: 'normal'; mean: number; stddev: number; min: number; max: number };

interface WorkloadBase {
  name: string;
  namespace: string;
  template: V1PodTemplateSpec;
}

export interface DeploymentWorkload extends WorkloadBase {
  kind: 'Deployment';
  replicas: ReplicaSchedule;
  /** Pods are replaced after this long (rollouts, crashes); absent: they live until scaled down. */
  podLifetime?: Distribution;
}

export interface ReplicaSchedule {
  /** Piecewise schedule; before the first point the first value holds. */
  points: { at: number; replicas: number }[];
  interpolation: 'linear' | 'step';
  /**
   * A daily cycle added to the points: min at peakAt + period/2, max at peakAt.
   * `week` scales the swing above min per day of the week, Monday first (simulated
   * time starts on a Monday): weekday and weekend shapes.
   */
  diurnal?: { min: number; max: number; peakAt: number; period: number; week?: number[] };
  /** Independent normal noise added at every step. */
  noise?: { stddev: number };
  /** How often the replica count is re-evaluated (a HorizontalPodAutoscaler's sync period). */
  every: number;
}

export interface JobSpecShape {
  completions: number;
  parallelism: number;
  /** Run time of each pod once it is Running. */
  duration: Distribution;
}

export interface JobWorkload extends WorkloadBase, JobSpecShape {
  kind: 'Job';
  at: number;
}

export interface CronJobWorkload extends WorkloadBase, JobSpecShape {
  kind: 'CronJob';
  schedule: string;
}

export type Workload = DeploymentWorkload | JobWorkload | CronJobWorkload;

/** Bad trace: the message names the trace and the field. */
export class TraceError extends Error {}
