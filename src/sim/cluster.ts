// Over 400 lines: SimCluster is still the simulator's object store, CAPI (scaling,
// Machines, boot delays) and pending-pod queue in one class; splitting it into those
// three is issue 11 step 5, not done yet.
import type { KubernetesObject, V1CronJob, V1Node, V1Pod } from '@kubernetes/client-node';
import type { UnstructuredObject } from '../api/unstructured-object.js';
import type {
  CapiActuator, MachineRef, NodeGroupRef, ScaleResult, StandaloneMachineRequest,
} from '../capi/actuator.js';
import {
  CLUSTER_NAME_ANNOTATION, CLUSTER_NAME_LABEL, DEPLOYMENT_NAME_LABEL, MACHINE_ANNOTATION,
  MACHINE_NAMESPACE_ANNOTATION, OWNER_KIND_ANNOTATION, OWNER_NAME_ANNOTATION, POOL_NAME_LABEL, SET_NAME_LABEL,
} from '../api/capi.js';
import { hasDisruptionTaint, withDisruptionTaint, withoutDisruptionTaint } from '../api/disruption-taint.js';
import { type ClusterObjects, emptyClusterObjects } from '../cluster/objects.js';
import type { DisruptionNodePort, FreshNode } from '../disruption/orchestration/node-port.js';
import type { NodeGroup } from '../cluster/snapshot.js';
import type { ClusterStateSource, StateChange } from '../cluster/state.js';
import { toSchedulingPod } from '../scheduling/pod-demand.js';
import { CPU, MEMORY, addInto } from '../scheduling/resources.js';
import { hasInterPodConstraints, interPodFilter, type TopologyNode } from './inter-pod.js';
import type { MetricsRecorder } from './metrics.js';
import type { PodOwner, SimGroup, SimMachine, SimNode, SimPod } from './model.js';
import { Sampler } from './sampler.js';
import type { SimScheduler } from './scheduler.js';
import type { TraceNodeGroup } from './trace.js';
import type { VirtualClock } from './virtual-clock.js';

export interface SimClusterOptions {
  /** The trace's node groups, and what buildSnapshot made of them (same order). */
  traceGroups: TraceNodeGroup[];
  groups: NodeGroup[];
  clock: VirtualClock;
  metrics: MetricsRecorder;
  scheduler: SimScheduler;
  seed: number;
}

type Kind = keyof ClusterObjects;

/** A write to a group, as the actuator made it (for tests and the report). */
export interface ScaleAction {
  /** Virtual time, ms since the simulation epoch. */
  at: number;
  group: string;
  from: number;
  to: number;
  /** The node removed, for deleteMachine. */
  node?: string;
  reason: string;
}

/** A pending-queue lane: the pods of one equivalence class, oldest first. */
interface Lane {
  pods: SimPod[];
  head: number;
  priority: number;
  /** The capacity epoch at which the class last failed to fit anywhere. */
  failedEpoch: number;
  /** Pods before this index are already marked Unschedulable. */
  marked: number;
  /** The class has inter-pod constraints: other pods' placement can make it fit, so it is always retried. */
  dynamic: boolean;
}

/**
 * The in-process cluster: CAPI node groups whose Machines boot into Nodes after a
 * per-group delay, pods placed by the simulated kube-scheduler, all on a virtual
 * clock. It implements the controller's ClusterStateSource and CapiActuator, so
 * the real provisioning code drives it unchanged.
 *
 * Change notifications are coalesced per instant: listeners hear once per kind
 * after everything at that virtual time has happened (`flush`), as an informer
 * would deliver a burst of watch events.
 */
export class SimCluster implements ClusterStateSource, CapiActuator, DisruptionNodePort {
  readonly groups: SimGroup[] = [];
  private readonly byId = new Map<string, SimGroup>();
  readonly nodes = new Map<string, SimNode>();
  private readonly pods = new Map<string, SimPod>();
  /** CronJob objects of the workload driver, as an informer would list them. */
  private readonly cronJobObjects = new Map<string, V1CronJob>();
  private readonly deploymentObjects = new Map<string, KubernetesObject>();
  private readonly lanes = new Map<string, Lane>();
  /** Bound pods with required anti-affinity: they repel new pods symmetrically. */
  private readonly antiAffinityPods = new Set<SimPod>();
  private unboundCount = 0;
  /** Unbound pods the scheduler has marked Unschedulable, and how many were ever marked. */
  private unschedulableNow = 0;
  private unschedulableEver = 0;
  private podSeq = 0;
  private capacityEpoch = 1;
  private cycleScheduled = false;
  private readonly listeners = new Set<(kind: Kind, change?: StateChange) => void>();
  /** Watch events of the current instant, delivered by `flush`. */
  private events: { kind: Kind; type: StateChange['type']; object: KubernetesObject | SimGroup }[] = [];
  private readonly groupsChanged = new Set<SimGroup>();
  private changeCount = 0;
  private cache: ClusterObjects = emptyClusterObjects();
  private readonly stale = new Set<Kind>(['pods', 'nodes', 'nodeGroups', 'machines']);
  private readonly clock: VirtualClock;
  private readonly metrics: MetricsRecorder;
  private readonly scheduler: SimScheduler;
  private machineSeq = 0;
  readonly actions: ScaleAction[] = [];

  constructor(opts: SimClusterOptions) {
    this.clock = opts.clock;
    this.metrics = opts.metrics;
    this.scheduler = opts.scheduler;
    opts.traceGroups.forEach((tg, i) => {
      const g = opts.groups.find((x) => x.kind === tg.object.kind && x.namespace === tg.object.metadata?.namespace && x.name === tg.object.metadata?.name);
      if (!g) throw new Error(`node group ${tg.object.kind}/${tg.object.metadata?.namespace}/${tg.object.metadata?.name} is not managed (nodeGroups[${i}])`);
      const group: SimGroup = {
        id: g.id, ref: { kind: g.kind, namespace: g.namespace, name: g.name }, clusterName: g.clusterName,
        object: tg.object, template: g.template, pricePerHour: g.pricePerHour, minSize: g.minSize, maxSize: g.maxSize,
        replicas: 0, machines: [], bootDelay: new Sampler(tg.bootDelay, opts.seed, `boot/${g.id}`), created: 0,
      };
      this.groups.push(group);
      this.byId.set(group.id, group);
      // Initial replicas exist and are Ready at time zero.
      const initial = (tg.object.spec?.replicas as number | undefined) ?? g.replicas;
      for (let k = 0; k < initial; k++) this.addMachine(group, 0);
      group.replicas = initial;
    });
  }

  // ---- ClusterStateSource -------------------------------------------------

  objects(): ClusterObjects {
    if (this.stale.size > 0) {
      const c = { ...this.cache };
      if (this.stale.has('pods')) c.pods = Array.from(this.pods.values(), (p) => p.object);
      if (this.stale.has('nodes')) c.nodes = Array.from(this.nodes.values(), (n) => n.object);
      if (this.stale.has('machines')) c.machines = this.groups.flatMap((g) => g.machines.map((m) => m.object));
      if (this.stale.has('nodeGroups')) c.nodeGroups = this.groups.map((g) => this.groupObject(g));
      if (this.stale.has('cronJobs')) c.cronJobs = [...this.cronJobObjects.values()];
      if (this.stale.has('deployments')) c.deployments = [...this.deploymentObjects.values()];
      this.cache = c;
      this.stale.clear();
    }
    return this.cache;
  }

  synced(): boolean {
    return true;
  }

  onChange(fn: (kind: Kind, change?: StateChange) => void): () => void {
    this.listeners.add(fn);
    return () => { this.listeners.delete(fn); };
  }

  /**
   * Delivers the instant's watch events, in order, as an informer would; a node
   * group's replica changes arrive as one MODIFIED with its final state. True when
   * any listener ran.
   */
  flush(): boolean {
    if (this.events.length === 0) return false;
    const events = this.events;
    this.events = [];
    this.groupsChanged.clear();
    if (this.listeners.size === 0) return false;
    const listeners = [...this.listeners];
    for (const e of events) {
      const object = e.kind === 'nodeGroups' ? this.groupObject(e.object as SimGroup) : e.object as KubernetesObject;
      const change: StateChange = { type: e.type, object };
      for (const fn of listeners) fn(e.kind, change);
    }
    return true;
  }

  /** Bumped on every change: lets a policy skip work when nothing changed since last time. */
  get version(): number {
    return this.changeCount;
  }

  private changed(kind: Kind, type: StateChange['type'], object: KubernetesObject): void {
    this.changeCount++;
    this.events.push({ kind, type, object });
    this.stale.add(kind);
  }

  private groupChanged(g: SimGroup): void {
    this.changeCount++;
    this.stale.add('nodeGroups');
    if (this.groupsChanged.has(g)) return;
    this.groupsChanged.add(g);
    this.events.push({ kind: 'nodeGroups', type: 'MODIFIED', object: g });
  }

  // ---- CapiActuator -------------------------------------------------------

  async getReplicas(ref: NodeGroupRef): Promise<number> {
    return this.group(ref).replicas;
  }

  async scaleTo(ref: NodeGroupRef, from: number, to: number, reason: string): Promise<ScaleResult> {
    const g = this.group(ref);
    // The KubeActuator's semantics: a scale-up is an idempotent target (never lowers
    // replicas), a scale-down only applies if nobody changed replicas since `from`.
    let target = to >= from ? Math.max(g.replicas, to) : (g.replicas === from ? to : g.replicas);
    target = Math.min(g.maxSize, Math.max(g.minSize, target));
    if (target === g.replicas) return { replicas: g.replicas, written: false };
    this.actions.push({ at: this.clock.now(), group: g.id, from: g.replicas, to: target, reason });
    this.setReplicas(g, target);
    this.metrics.scaleActions++;
    return { replicas: g.replicas, written: true };
  }

  async deleteMachine(ref: NodeGroupRef, machine: MachineRef, reason: string): Promise<ScaleResult> {
    const g = this.group(ref);
    const m = g.machines.find((x) => x.name === machine.name || (machine.nodeName !== undefined && x.node?.name === machine.nodeName));
    if (!m || g.replicas - 1 < g.minSize) return { replicas: g.replicas, written: false };
    this.actions.push({ at: this.clock.now(), group: g.id, from: g.replicas, to: g.replicas - 1, ...(m.node ? { node: m.node.name } : {}), reason });
    this.removeMachine(m);
    g.replicas--;
    this.groupChanged(g);
    this.metrics.scaleActions++;
    return { replicas: g.replicas, written: true };
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
    const n = this.nodes.get(name);
    return n ? { node: n.object, pods: Array.from(n.pods, (p) => p.object) } : undefined;
  }

  private setDisruptionTaint(name: string, on: boolean): void {
    const n = this.nodes.get(name);
    if (!n || hasDisruptionTaint(n.object.spec?.taints) === on) return;
    const taints = on ? withDisruptionTaint(n.object.spec?.taints) : withoutDisruptionTaint(n.object.spec?.taints);
    const { taints: _old, ...spec } = n.object.spec ?? {};
    n.object = { ...n.object, spec: taints.length ? { ...spec, taints } : spec };
    n.feasible.clear();
    this.changed('nodes', 'MODIFIED', n.object);
    if (!on) this.capacityGrew();
  }

  group(ref: NodeGroupRef): SimGroup {
    const g = this.byId.get(`${ref.kind}/${ref.namespace}/${ref.name}`);
    if (!g) throw new Error(`no node group ${ref.kind}/${ref.namespace}/${ref.name}`);
    return g;
  }

  // ---- Machines and nodes -------------------------------------------------

  /** Sets a group's replicas as the MachineSet controller would: create, or delete newest first. */
  private setReplicas(g: SimGroup, target: number): void {
    while (g.machines.length < target) this.addMachine(g, undefined);
    while (g.machines.length > target) {
      // CAPI's "Newest" delete policy, preferring machines that are not nodes yet.
      const booting = [...g.machines].reverse().find((m) => !m.node);
      this.removeMachine(booting ?? g.machines[g.machines.length - 1]!);
    }
    g.replicas = target;
    this.groupChanged(g);
  }

  private addMachine(g: SimGroup, bootDelay: number | undefined): void {
    const now = this.clock.now();
    const delay = bootDelay ?? g.bootDelay.get(g.created);
    g.created++;
    const name = `${g.ref.name}-${(this.machineSeq++).toString(36).padStart(4, '0')}`;
    const labels: Record<string, string> = { [CLUSTER_NAME_LABEL]: g.clusterName };
    const owner = machineOwner(g);
    if (g.ref.kind === 'MachineDeployment') labels[DEPLOYMENT_NAME_LABEL] = g.ref.name;
    if (g.ref.kind === 'MachinePool') labels[POOL_NAME_LABEL] = g.ref.name;
    else labels[SET_NAME_LABEL] = owner.name;
    const m: SimMachine = {
      name, group: g, createdAt: now, readyAt: now + delay,
      object: {
        apiVersion: 'cluster.x-k8s.io/v1beta2', kind: 'Machine',
        metadata: {
          name, namespace: g.ref.namespace, uid: `uid-${name}`, labels, creationTimestamp: new Date(now),
          ownerReferences: [{ apiVersion: 'cluster.x-k8s.io/v1beta2', kind: owner.kind, name: owner.name, uid: `uid-${owner.name}`, controller: true }],
        },
        spec: { clusterName: g.clusterName },
        status: { phase: 'Provisioning' },
      },
    };
    g.machines.push(m);
    this.metrics.machineAdded(g.pricePerHour);
    this.changed('machines', 'ADDED', m.object);
    if (delay <= 0) this.nodeReady(m);
    else m.cancelBoot = this.clock.setTimer(delay, () => this.nodeReady(m));
  }

  private nodeReady(m: SimMachine): void {
    m.cancelBoot = undefined;
    const g = m.group;
    const name = m.name;
    const providerID = `sim:///${g.ref.namespace}/${name}`;
    const labels = { ...g.template.labels, 'kubernetes.io/hostname': name };
    const allocatable = { ...g.template.allocatable };
    const quantities = toQuantities(allocatable);
    const object: V1Node = {
      apiVersion: 'v1', kind: 'Node',
      metadata: {
        name, uid: `uid-node-${name}`, labels, creationTimestamp: new Date(this.clock.now()),
        annotations: {
          [MACHINE_ANNOTATION]: name, [CLUSTER_NAME_ANNOTATION]: g.clusterName,
          [MACHINE_NAMESPACE_ANNOTATION]: g.ref.namespace,
          [OWNER_KIND_ANNOTATION]: machineOwner(g).kind, [OWNER_NAME_ANNOTATION]: machineOwner(g).name,
        },
      },
      spec: { providerID, ...(g.template.taints.length ? { taints: g.template.taints } : {}) },
      status: { capacity: quantities, allocatable: quantities, conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: new Date(this.clock.now()) }] },
    };
    const node: SimNode = {
      name, group: g, machine: m, labels, allocatable, requested: {}, pods: new Set(), hostPorts: [],
      emptySince: this.clock.now(), feasible: new Map(), object,
    };
    m.node = node;
    m.object = {
      ...m.object,
      spec: { ...m.object.spec, providerID },
      status: { phase: 'Running', nodeRef: { apiVersion: 'v1', kind: 'Node', name } },
    };
    this.nodes.set(name, node);
    this.metrics.nodeReady(allocatable[CPU] ?? 0, allocatable[MEMORY] ?? 0, 1);
    this.changed('nodes', 'ADDED', object);
    this.changed('machines', 'MODIFIED', m.object);
    this.groupChanged(g);
    this.capacityGrew();
  }

  private removeMachine(m: SimMachine): void {
    const g = m.group;
    g.machines.splice(g.machines.indexOf(m), 1);
    m.cancelBoot?.();
    const node = m.node;
    if (node) {
      // The Machine controller drains the node (instantly here) and the owners recreate the pods.
      const evicted = [...node.pods];
      this.metrics.evictions += evicted.length;
      for (const p of evicted) this.unbind(p);
      this.nodes.delete(node.name);
      this.metrics.nodeReady(node.allocatable[CPU] ?? 0, node.allocatable[MEMORY] ?? 0, -1);
      this.changed('nodes', 'DELETED', node.object);
      for (const p of evicted) {
        this.pods.delete(p.key);
        this.changed('pods', 'DELETED', p.object);
        p.owner.onEvicted(p);
      }
    }
    this.metrics.machineRemoved(g.pricePerHour);
    this.changed('machines', 'DELETED', m.object);
    this.groupChanged(g);
  }

  private groupObject(g: SimGroup): UnstructuredObject {
    const ready = g.machines.filter((m) => m.node).length;
    return {
      ...g.object,
      spec: { ...g.object.spec, replicas: g.replicas },
      status: { replicas: g.machines.length, readyReplicas: ready, availableReplicas: ready },
    };
  }

  /** Ready nodes. */
  readyNodes(): IterableIterator<SimNode> {
    return this.nodes.values();
  }

  // ---- Workload objects -----------------------------------------------------

  /** Adds or replaces a CronJob object (the simulated CronJob controller keeps its status). */
  /** The trace's CapacityBuffers and PodTemplates, present from the start and never changed. */
  putCapacityObjects(capacityBuffers: UnstructuredObject[], podTemplates: KubernetesObject[]): void {
    this.cache = { ...this.objects(), capacityBuffers, podTemplates };
    this.changeCount++;
  }

  /** A Deployment object as the Deployment controller would keep it (spec.replicas current), for buffers' scalableRefs. */
  putDeployment(object: KubernetesObject): void {
    const key = `${object.metadata?.namespace}/${object.metadata?.name}`;
    const type = this.deploymentObjects.has(key) ? 'MODIFIED' : 'ADDED';
    this.deploymentObjects.set(key, object);
    this.changed('deployments', type, object);
  }

  putCronJob(object: V1CronJob): void {
    const key = `${object.metadata?.namespace}/${object.metadata?.name}`;
    const type = this.cronJobObjects.has(key) ? 'MODIFIED' : 'ADDED';
    this.cronJobObjects.set(key, object);
    this.changed('cronJobs', type, object);
  }

  // ---- Pods -----------------------------------------------------------------

  /** Creates a pod (from a workload controller) and queues it for scheduling. */
  createPod(object: V1Pod, owner: PodOwner, ordinal: number): SimPod {
    const scheduling = toSchedulingPod(object);
    const pod: SimPod = {
      key: scheduling.key, object, scheduling, owner, createdAt: this.clock.now(), unschedulable: false,
      ordinal, seq: this.podSeq++,
    };
    this.pods.set(pod.key, pod);
    this.unboundCount++;
    this.metrics.podPending();
    let lane = this.lanes.get(scheduling.equivalenceKey);
    if (!lane) {
      lane = { pods: [], head: 0, priority: scheduling.priority, failedEpoch: 0, marked: 0, dynamic: hasInterPodConstraints(scheduling) };
      this.lanes.set(scheduling.equivalenceKey, lane);
    }
    lane.pods.push(pod);
    this.changed('pods', 'ADDED', object);
    this.requestCycle();
    return pod;
  }

  /** Deletes a pod (scale-down, completion or replacement). */
  deletePod(pod: SimPod): void {
    if (this.pods.get(pod.key) !== pod) return;
    this.pods.delete(pod.key);
    if (pod.node) this.unbind(pod);
    else {
      this.unboundCount--;
      if (pod.unschedulable) this.unschedulableNow--;
      this.metrics.podWaited(this.clock.now() - pod.createdAt);
    }
    this.changed('pods', 'DELETED', pod.object);
  }

  get pendingCount(): number {
    return this.unboundCount;
  }

  /** Unbound pods marked Unschedulable right now. */
  get unschedulableCount(): number {
    return this.unschedulableNow;
  }

  /** Pods ever marked Unschedulable: grows when new demand fails to fit. */
  get unschedulableMarks(): number {
    return this.unschedulableEver;
  }

  /** Unbound pods, oldest first per class. */
  *pendingPods(): IterableIterator<SimPod> {
    for (const lane of this.lanes.values()) {
      for (let i = lane.head; i < lane.pods.length; i++) {
        const p = lane.pods[i]!;
        if (!p.node && this.pods.get(p.key) === p) yield p;
      }
    }
  }

  private bind(pod: SimPod, node: SimNode): void {
    const now = this.clock.now();
    pod.node = node;
    pod.boundAt = now;
    node.pods.add(pod);
    addInto(node.requested, pod.scheduling.requests);
    if (pod.scheduling.hostPorts.length) node.hostPorts.push(...pod.scheduling.hostPorts);
    node.emptySince = undefined;
    if (pod.scheduling.affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.length) this.antiAffinityPods.add(pod);
    pod.object = {
      ...pod.object,
      spec: { ...pod.object.spec!, nodeName: node.name },
      status: { phase: 'Running', conditions: [{ type: 'PodScheduled', status: 'True' }] },
    };
    this.unboundCount--;
    if (pod.unschedulable) this.unschedulableNow--;
    this.metrics.podWaited(now - pod.createdAt);
    this.metrics.podUsage(pod.scheduling.requests[CPU] ?? 0, pod.scheduling.requests[MEMORY] ?? 0, 1);
    this.changed('pods', 'MODIFIED', pod.object);
    pod.owner.onBound(pod);
  }

  private unbind(pod: SimPod): void {
    const node = pod.node!;
    node.pods.delete(pod);
    this.antiAffinityPods.delete(pod);
    addInto(node.requested, pod.scheduling.requests, -1);
    if (pod.scheduling.hostPorts.length) {
      node.hostPorts = [...node.pods].flatMap((p) => p.scheduling.hostPorts);
    }
    if (node.pods.size === 0) node.emptySince = this.clock.now();
    pod.node = undefined;
    this.metrics.podUsage(pod.scheduling.requests[CPU] ?? 0, pod.scheduling.requests[MEMORY] ?? 0, -1);
    this.capacityGrew();
  }

  private capacityGrew(): void {
    this.capacityEpoch++;
    if (this.unboundCount > 0) this.requestCycle();
  }

  private requestCycle(): void {
    if (this.cycleScheduled) return;
    this.cycleScheduled = true;
    this.clock.setTimer(0, () => {
      this.cycleScheduled = false;
      this.schedulingCycle();
    });
  }

  /**
   * One pass of the scheduling queue: classes in priority order, pods oldest first.
   * A class that found no node is skipped until capacity grows (identical pods
   * cannot fit where the first one did not), so a pass costs O(classes x nodes)
   * plus O(nodes) per bound pod.
   */
  private schedulingCycle(): void {
    const lanes = [...this.lanes.entries()].sort((a, b) => b[1].priority - a[1].priority || headSeq(a[1]) - headSeq(b[1]));
    for (const [key, lane] of lanes) {
      if (lane.failedEpoch === this.capacityEpoch && !lane.dynamic) continue;
      while (lane.head < lane.pods.length) {
        const pod = lane.pods[lane.head]!;
        if (pod.node || this.pods.get(pod.key) !== pod) {
          lane.head++;
          continue;
        }
        const node = this.scheduler.select(pod, this.nodes.values(), this.topologyFilter(pod));
        if (!node) {
          lane.failedEpoch = this.capacityEpoch;
          this.markUnschedulable(lane);
          break;
        }
        this.bind(pod, node);
        lane.head++;
      }
      if (lane.head === lane.pods.length) this.lanes.delete(key);
      else if (lane.head > 1024 && lane.head * 2 > lane.pods.length) {
        lane.pods = lane.pods.slice(lane.head);
        lane.marked = Math.max(0, lane.marked - lane.head);
        lane.head = 0;
      }
    }
  }

  /** The inter-pod filters for a pod, when it or a bound pod has inter-pod constraints. */
  private topologyFilter(pod: SimPod): ((n: SimNode) => boolean) | undefined {
    const own = hasInterPodConstraints(pod.scheduling);
    if (!own && this.antiAffinityPods.size === 0) return undefined;
    const anti = [...this.antiAffinityPods].map((p) => ({ pod: p.scheduling, nodeLabels: p.node!.labels }));
    const view = (n: SimNode): TopologyNode => ({ labels: n.labels, taints: n.object.spec?.taints ?? [], pods: [...n.pods].map((p) => p.scheduling) });
    // Without constraints of its own the pod only needs the symmetric check: no counting.
    const nodes = own ? [...this.nodes.values()].map(view) : [];
    const filter = interPodFilter(pod.scheduling, nodes, anti);
    return (n) => filter({ labels: n.labels, taints: n.object.spec?.taints ?? [], pods: [] });
  }

  private markUnschedulable(lane: Lane): void {
    for (let i = Math.max(lane.head, lane.marked); i < lane.pods.length; i++) {
      const p = lane.pods[i]!;
      if (p.unschedulable || p.node || this.pods.get(p.key) !== p) continue;
      p.unschedulable = true;
      this.unschedulableNow++;
      this.unschedulableEver++;
      p.object = {
        ...p.object,
        status: {
          phase: 'Pending',
          conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message: '0/N nodes are available' }],
        },
      };
      this.changed('pods', 'MODIFIED', p.object);
    }
    lane.marked = lane.pods.length;
  }

  /** Ends the run: pods still pending count as pending until now. */
  finish(): void {
    const now = this.clock.now();
    for (const p of this.pods.values()) if (!p.node) this.metrics.podWaited(now - p.createdAt);
  }
}

/** The MachineSet (named `<deployment>-sim` for a MachineDeployment) or MachinePool that owns a group's Machines. */
function machineOwner(g: SimGroup): { kind: string; name: string } {
  if (g.ref.kind === 'MachinePool') return { kind: 'MachinePool', name: g.ref.name };
  return { kind: 'MachineSet', name: g.ref.kind === 'MachineSet' ? g.ref.name : `${g.ref.name}-sim` };
}

function headSeq(lane: Lane): number {
  return lane.pods[lane.head]?.seq ?? Infinity;
}

function toQuantities(r: Record<string, number>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(r)) out[k] = k === CPU ? `${v}m` : String(v);
  return out;
}
