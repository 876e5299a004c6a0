import type { V1Pod } from '@kubernetes/client-node';
import { toSchedulingPod } from '../scheduling/pod-demand.js';
import { CPU, MEMORY, addInto } from '../scheduling/resources.js';
import { hasInterPodConstraints, interPodFilter, type TopologyNode } from './inter-pod.js';
import type { SimDra } from './dra.js';
import type { MetricsRecorder } from './metrics.js';
import type { PodOwner, SimNode, SimPod } from './model.js';
import type { SimObjectStore } from './object-store.js';
import type { SimScheduler } from './scheduler.js';
import type { VirtualClock } from './virtual-clock.js';

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
 * kube-scheduler's side of the simulator: the pending-pod queue, binding and
 * unbinding, and the scheduling cycle that places pods through SimScheduler.
 * A cycle runs once per instant after something that could make a pod fit
 * (a new pod, capacity grew).
 */
export class SimSchedulingQueue {
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

  constructor(
    private readonly store: SimObjectStore,
    private readonly clock: VirtualClock,
    private readonly metrics: MetricsRecorder,
    private readonly scheduler: SimScheduler,
    private readonly dra: SimDra,
  ) {}

  /** Creates a pod (from a workload controller) and queues it for scheduling. */
  createPod(created: V1Pod, owner: PodOwner, ordinal: number): SimPod {
    // The resourceclaim controller makes the pod's claims from its templates first.
    const object = this.dra.podCreated(created);
    const scheduling = toSchedulingPod(object);
    const pod: SimPod = {
      key: scheduling.key, object, scheduling, owner, createdAt: this.clock.now(), unschedulable: false,
      ordinal, seq: this.podSeq++,
    };
    this.store.pods.set(pod.key, pod);
    this.unboundCount++;
    this.metrics.podPending();
    this.metrics.podDemand(scheduling.requests[CPU] ?? 0, scheduling.requests[MEMORY] ?? 0, 1);
    let lane = this.lanes.get(scheduling.equivalenceKey);
    if (!lane) {
      lane = { pods: [], head: 0, priority: scheduling.priority, failedEpoch: 0, marked: 0, dynamic: hasInterPodConstraints(scheduling) };
      this.lanes.set(scheduling.equivalenceKey, lane);
    }
    lane.pods.push(pod);
    this.store.changed('pods', 'ADDED', object);
    this.requestCycle();
    return pod;
  }

  /** Deletes a pod (scale-down, completion or replacement). */
  deletePod(pod: SimPod): void {
    if (this.store.pods.get(pod.key) !== pod) return;
    this.store.pods.delete(pod.key);
    this.metrics.podDemand(pod.scheduling.requests[CPU] ?? 0, pod.scheduling.requests[MEMORY] ?? 0, -1);
    if (pod.node) this.unbind(pod);
    else {
      this.unboundCount--;
      if (pod.unschedulable) this.unschedulableNow--;
      this.metrics.podWaited(this.clock.now() - pod.createdAt);
    }
    this.dra.deleted(pod);
    this.store.changed('pods', 'DELETED', pod.object);
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
        if (!p.node && this.store.pods.get(p.key) === p) yield p;
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
    this.dra.bound(pod, node.name);
    pod.object = {
      ...pod.object,
      spec: { ...pod.object.spec!, nodeName: node.name },
      status: { phase: 'Running', conditions: [{ type: 'PodScheduled', status: 'True' }], ...claimStatuses(pod.object) },
    };
    this.unboundCount--;
    if (pod.unschedulable) this.unschedulableNow--;
    this.metrics.podWaited(now - pod.createdAt);
    this.metrics.podUsage(pod.scheduling.requests[CPU] ?? 0, pod.scheduling.requests[MEMORY] ?? 0, 1);
    this.store.changed('pods', 'MODIFIED', pod.object);
    pod.owner.onBound(pod);
  }

  /** Takes a bound pod off its node (deleted, or its node drained); the pod object itself is the caller's. */
  unbind(pod: SimPod): void {
    const node = pod.node!;
    node.pods.delete(pod);
    this.antiAffinityPods.delete(pod);
    addInto(node.requested, pod.scheduling.requests, -1);
    if (pod.scheduling.hostPorts.length) {
      node.hostPorts = [...node.pods].flatMap((p) => p.scheduling.hostPorts);
    }
    if (node.pods.size === 0) node.emptySince = this.clock.now();
    pod.node = undefined;
    this.dra.released(pod);
    this.metrics.podUsage(pod.scheduling.requests[CPU] ?? 0, pod.scheduling.requests[MEMORY] ?? 0, -1);
    this.capacityGrew();
  }

  /** Room appeared (a node, a freed pod, an untainted node): classes that failed may fit now. */
  capacityGrew(): void {
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
        if (pod.node || this.store.pods.get(pod.key) !== pod) {
          lane.head++;
          continue;
        }
        const node = this.scheduler.select(pod, this.store.nodes.values(), this.extraFilter(pod));
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

  /** The filters beyond SimScheduler's: DRA devices, inter-pod constraints. */
  private extraFilter(pod: SimPod): ((n: SimNode) => boolean) | undefined {
    const topology = this.topologyFilter(pod);
    const dra = this.dra.filter(pod);
    if (!dra) return topology;
    return topology ? (n) => dra(n.name) && topology(n) : (n) => dra(n.name);
  }

  /** The inter-pod filters for a pod, when it or a bound pod has inter-pod constraints. */
  private topologyFilter(pod: SimPod): ((n: SimNode) => boolean) | undefined {
    const own = hasInterPodConstraints(pod.scheduling);
    if (!own && this.antiAffinityPods.size === 0) return undefined;
    const anti = [...this.antiAffinityPods].map((p) => ({ pod: p.scheduling, nodeLabels: p.node!.labels }));
    const view = (n: SimNode): TopologyNode => ({ labels: n.labels, taints: n.object.spec?.taints ?? [], pods: [...n.pods].map((p) => p.scheduling) });
    // Without constraints of its own the pod only needs the symmetric check: no counting.
    const nodes = own ? [...this.store.nodes.values()].map(view) : [];
    const filter = interPodFilter(pod.scheduling, nodes, anti);
    return (n) => filter({ labels: n.labels, taints: n.object.spec?.taints ?? [], pods: [] });
  }

  private markUnschedulable(lane: Lane): void {
    for (let i = Math.max(lane.head, lane.marked); i < lane.pods.length; i++) {
      const p = lane.pods[i]!;
      if (p.unschedulable || p.node || this.store.pods.get(p.key) !== p) continue;
      p.unschedulable = true;
      this.unschedulableNow++;
      this.unschedulableEver++;
      p.object = {
        ...p.object,
        status: {
          phase: 'Pending',
          conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message: '0/N nodes are available' }],
          ...claimStatuses(p.object),
        },
      };
      this.store.changed('pods', 'MODIFIED', p.object);
    }
    lane.marked = lane.pods.length;
  }

  /** Ends the run: pods still pending count as pending until now. */
  finish(): void {
    const now = this.clock.now();
    for (const p of this.store.pods.values()) if (!p.node) this.metrics.podWaited(now - p.createdAt);
  }
}

/** The pod's status.resourceClaimStatuses (the resourceclaim controller's), kept across status writes. */
function claimStatuses(pod: V1Pod): { resourceClaimStatuses?: NonNullable<V1Pod['status']>['resourceClaimStatuses'] } {
  const s = pod.status?.resourceClaimStatuses;
  return s ? { resourceClaimStatuses: s } : {};
}

function headSeq(lane: Lane): number {
  return lane.pods[lane.head]?.seq ?? Infinity;
}
