import type { KubernetesObject, V1CronJob, V1Pod } from '@kubernetes/client-node';
import type { UnstructuredObject } from '../api/unstructured-object.js';
import type {
  BatchScaleResult, CapiActuator, MachineRef, MachineRemoval, NodeGroupRef, ScaleResult, StandaloneMachineRequest,
} from '../capi/actuator.js';
import { hasDisruptionTaint, withDisruptionTaint, withoutDisruptionTaint } from '../api/disruption-taint.js';
import type { ClusterObjects } from '../cluster/objects.js';
import type { DisruptionNodePort, FreshNode } from '../disruption/orchestration/node-port.js';
import type { NodeGroup } from '../cluster/snapshot.js';
import type { ClusterStateSource, StateChange } from '../cluster/state.js';
import { SimCapi, type ScaleAction } from './capi.js';
import { SimDra } from './dra.js';
import type { MetricsRecorder } from './metrics.js';
import type { PodOwner, SimGroup, SimNode, SimPod } from './model.js';
import { type Kind, SimObjectStore } from './object-store.js';
import type { SimScheduler } from './scheduler.js';
import { SimSchedulingQueue } from './scheduling-queue.js';
import type { TraceNodeGroup } from './trace.js';
import type { VirtualClock } from './virtual-clock.js';

export type { ScaleAction } from './capi.js';

export interface SimClusterOptions {
  /** The trace's node groups, and what buildSnapshot made of them (same order). */
  traceGroups: TraceNodeGroup[];
  groups: NodeGroup[];
  clock: VirtualClock;
  metrics: MetricsRecorder;
  scheduler: SimScheduler;
  seed: number;
  /** The trace's DRA objects (DeviceClasses, ResourceClaimTemplates, ResourceClaims, template ResourceSlices). */
  dra?: UnstructuredObject[];
}

/**
 * The in-process cluster: an object store (object-store.ts), CAPI node groups whose
 * Machines boot into Nodes (capi.ts), kube-scheduler's queue (scheduling-queue.ts) and
 * DRA's controllers, drivers and allocation (dra.ts),
 * all on a virtual clock. It implements the controller's ClusterStateSource,
 * CapiActuator and DisruptionNodePort, so the real Provisioner and Disruptor drive
 * it unchanged; the workload driver and the report use the rest.
 */
export class SimCluster implements ClusterStateSource, CapiActuator, DisruptionNodePort {
  private readonly store = new SimObjectStore();
  private readonly queue: SimSchedulingQueue;
  private readonly capi: SimCapi;

  constructor(opts: SimClusterOptions) {
    const dra = new SimDra(opts.dra ?? [], this.store);
    this.queue = new SimSchedulingQueue(this.store, opts.clock, opts.metrics, opts.scheduler, dra);
    this.capi = new SimCapi(opts, this.store, this.queue, dra);
  }

  get groups(): readonly SimGroup[] {
    return this.store.groups;
  }

  /** Ready nodes by name. */
  get nodes(): ReadonlyMap<string, SimNode> {
    return this.store.nodes;
  }

  /** Every replica write the actuator made, in order. */
  get actions(): readonly ScaleAction[] {
    return this.capi.actions;
  }

  group(ref: NodeGroupRef): SimGroup {
    return this.capi.group(ref);
  }

  /** Ready nodes. */
  readyNodes(): IterableIterator<SimNode> {
    return this.store.nodes.values();
  }

  // ---- ClusterStateSource -------------------------------------------------

  objects(): ClusterObjects {
    return this.store.objects();
  }

  synced(): boolean {
    return true;
  }

  onChange(fn: (kind: Kind, change?: StateChange) => void): () => void {
    return this.store.onChange(fn);
  }

  /** Delivers the instant's watch events (see SimObjectStore.flush); true when any listener ran. */
  flush(): boolean {
    return this.store.flush();
  }

  /** Bumped on every change: lets a policy skip work when nothing changed since last time. */
  get version(): number {
    return this.store.version;
  }

  // ---- CapiActuator -------------------------------------------------------

  async getReplicas(ref: NodeGroupRef): Promise<number> {
    return this.capi.group(ref).replicas;
  }

  async scaleTo(ref: NodeGroupRef, from: number, to: number, reason: string): Promise<ScaleResult> {
    return this.capi.scaleTo(ref, from, to, reason);
  }

  async deleteMachine(ref: NodeGroupRef, machine: MachineRef, reason: string): Promise<ScaleResult> {
    return this.capi.deleteMachine(ref, machine, reason);
  }

  async deleteMachines(ref: NodeGroupRef, machines: readonly MachineRemoval[]): Promise<BatchScaleResult> {
    return this.capi.deleteMachines(ref, machines);
  }

  async createMachine(_request: StandaloneMachineRequest): Promise<string> {
    throw new Error('the simulator does not model standalone Machines');
  }

  async deleteStandaloneMachine(_machine: MachineRef, _reason: string): Promise<void> {
    throw new Error('the simulator does not model standalone Machines');
  }

  // ---- DisruptionNodePort ---------------------------------------------------

  async taintNode(name: string): Promise<void> {
    this.setDisruptionTaint(name, true);
  }

  async untaintNode(name: string): Promise<void> {
    this.setDisruptionTaint(name, false);
  }

  async readNode(name: string): Promise<FreshNode | undefined> {
    const n = this.store.nodes.get(name);
    return n ? { node: n.object, pods: Array.from(n.pods, (p) => p.object) } : undefined;
  }

  private setDisruptionTaint(name: string, on: boolean): void {
    const n = this.store.nodes.get(name);
    if (!n || hasDisruptionTaint(n.object.spec?.taints) === on) return;
    const taints = on ? withDisruptionTaint(n.object.spec?.taints) : withoutDisruptionTaint(n.object.spec?.taints);
    const { taints: _old, ...spec } = n.object.spec ?? {};
    n.object = { ...n.object, spec: taints.length ? { ...spec, taints } : spec };
    n.feasible.clear();
    this.store.changed('nodes', 'MODIFIED', n.object);
    if (!on) this.queue.capacityGrew();
  }

  // ---- Workload objects -----------------------------------------------------

  /** The trace's CapacityBuffers and PodTemplates, present from the start and never changed. */
  putCapacityObjects(capacityBuffers: UnstructuredObject[], podTemplates: KubernetesObject[]): void {
    this.store.putCapacityObjects(capacityBuffers, podTemplates);
  }

  /** A Deployment object as the Deployment controller would keep it (spec.replicas current), for buffers' scalableRefs. */
  putDeployment(object: KubernetesObject): void {
    this.store.putDeployment(object);
  }

  /** Adds or replaces a CronJob object (the simulated CronJob controller keeps its status). */
  putCronJob(object: V1CronJob): void {
    this.store.putCronJob(object);
  }

  // ---- Pods -----------------------------------------------------------------

  /** Creates a pod (from a workload controller) and queues it for scheduling. */
  createPod(object: V1Pod, owner: PodOwner, ordinal: number): SimPod {
    return this.queue.createPod(object, owner, ordinal);
  }

  /** Deletes a pod (scale-down, completion or replacement). */
  deletePod(pod: SimPod): void {
    this.queue.deletePod(pod);
  }

  get pendingCount(): number {
    return this.queue.pendingCount;
  }

  /** Unbound pods marked Unschedulable right now. */
  get unschedulableCount(): number {
    return this.queue.unschedulableCount;
  }

  /** Pods ever marked Unschedulable: grows when new demand fails to fit. */
  get unschedulableMarks(): number {
    return this.queue.unschedulableMarks;
  }

  /** Unbound pods, oldest first per class. */
  pendingPods(): IterableIterator<SimPod> {
    return this.queue.pendingPods();
  }

  /** Ends the run: pods still pending count as pending until now. */
  finish(): void {
    this.queue.finish();
  }
}
