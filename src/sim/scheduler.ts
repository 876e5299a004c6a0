import type { V1Node, V1Pod } from '@kubernetes/client-node';
import { hostPortsConflict, type HostPort } from '../scheduling/host-ports.js';
import { nodeSelectorMatches, preferredNodeAffinityScore } from '../scheduling/node-affinity.js';
import { toSchedulingPod } from '../scheduling/pod-demand.js';
import { CPU, MEMORY, type Resources, addInto, parseResourceList } from '../scheduling/resources.js';
import { countIntolerablePreferNoSchedule, untoleratedTaint } from '../scheduling/taints.js';
import { volumeTopologyAllows, type VolumeTopology } from '../scheduling/volume-topology.js';
import type { SimNode, SimPod } from './model.js';

/** What the scheduler reads of a node (a SimNode has more). */
export type SchedulableNode = Pick<SimNode, 'name' | 'labels' | 'allocatable' | 'requested' | 'hostPorts' | 'feasible' | 'object'>;
/** What the scheduler reads of a pod. */
export type SchedulablePod = Pick<SimPod, 'scheduling'>;

/** The scheduler's view of a Node and the pods bound to it (e.g. objects read from a real cluster). */
export function schedulableNode(node: V1Node, boundPods: readonly V1Pod[]): SchedulableNode {
  const requested: Resources = {};
  const hostPorts: HostPort[] = [];
  for (const p of boundPods) {
    const sp = toSchedulingPod(p);
    addInto(requested, sp.requests);
    hostPorts.push(...sp.hostPorts);
  }
  return {
    name: node.metadata?.name ?? '', labels: node.metadata?.labels ?? {},
    allocatable: parseResourceList(node.status?.allocatable), requested, hostPorts, feasible: new Map(), object: node,
  };
}

export function schedulablePod(pod: V1Pod): SchedulablePod {
  return { scheduling: toSchedulingPod(pod) };
}
import type { Random } from './random.js';

const NO_VOLUMES: VolumeTopology = { persistentVolumes: {}, claims: {}, storageClasses: {} };

/**
 * Places pods the way kube-scheduler's default profile does, using the shared
 * predicates of src/scheduling:
 * - Filter: NodeUnschedulable, NodeResourcesFit, NodePorts, NodeAffinity
 *   (nodeSelector + required affinity), TaintToleration (NoSchedule/NoExecute),
 *   VolumeBinding topology.
 * - Score (default weights): NodeResourcesFit LeastAllocated (1),
 *   NodeResourcesBalancedAllocation (1), TaintToleration (3), NodeAffinity (2);
 *   ties broken at random, as selectHost does.
 * - InterPodAffinity and PodTopologySpread (required terms only) come in as
 *   `extraFilter` from the cluster, which knows the bound pods (src/sim/inter-pod.ts).
 * Not modelled: their scores, preemption.
 */
export class SimScheduler {
  constructor(private readonly rng: Random, private readonly volumes: VolumeTopology = NO_VOLUMES) {}

  /** The static part of the filter (labels, taints, volumes), cached per class and node. */
  staticFeasible(pod: SchedulablePod, node: SchedulableNode): boolean {
    const key = pod.scheduling.equivalenceKey;
    let ok = node.feasible.get(key);
    if (ok === undefined) {
      const sp = pod.scheduling;
      ok = nodeSelectorMatches(sp, node.labels, node.name)
        && untoleratedTaint(node.object.spec?.taints ?? [], sp.tolerations) === undefined
        && volumeTopologyAllows(sp, node.labels, this.volumes, node.name);
      node.feasible.set(key, ok);
    }
    return ok;
  }

  /** The full filter against the node's current usage (plus `extra`, reserved during what-ifs). */
  feasible(pod: SchedulablePod, node: SchedulableNode, extra?: Record<string, number>): boolean {
    if (node.object.spec?.unschedulable) return false;
    if (!this.staticFeasible(pod, node)) return false;
    const req = pod.scheduling.requests;
    for (const k in req) {
      const need = req[k]!;
      if (need > 0 && need + (node.requested[k] ?? 0) + (extra?.[k] ?? 0) > (node.allocatable[k] ?? 0)) return false;
    }
    return pod.scheduling.hostPorts.length === 0 || !hostPortsConflict(pod.scheduling.hostPorts, node.hostPorts);
  }

  /** Picks a node for the pod among `nodes`, or undefined when none passes the filter. */
  select<N extends SchedulableNode>(pod: SchedulablePod, nodes: Iterable<N>, extraFilter?: (node: N) => boolean): N | undefined {
    const feasible: N[] = [];
    for (const n of nodes) if (this.feasible(pod, n) && (!extraFilter || extraFilter(n))) feasible.push(n);
    if (feasible.length <= 1) return feasible[0];
    const sp = pod.scheduling;
    const req = sp.requests;
    const n = feasible.length;
    const resourceScore = new Float64Array(n);
    const taintCount = new Float64Array(n);
    const affinity = new Float64Array(n);
    let maxTaint = 0;
    let maxAffinity = 0;
    const hasPreferred = !!sp.affinity?.nodeAffinity?.preferredDuringSchedulingIgnoredDuringExecution?.length;
    for (let i = 0; i < n; i++) {
      const node = feasible[i]!;
      const cpuFrac = frac(node, CPU, req[CPU] ?? 0);
      const memFrac = frac(node, MEMORY, req[MEMORY] ?? 0);
      // LeastAllocated: mean free fraction; BalancedAllocation: 1 - std of used fractions.
      const least = ((1 - cpuFrac) + (1 - memFrac)) / 2 * 100;
      const balanced = (1 - Math.abs(cpuFrac - memFrac) / 2) * 100;
      resourceScore[i] = least + balanced;
      const taints = node.object.spec?.taints;
      if (taints?.length) {
        taintCount[i] = countIntolerablePreferNoSchedule(taints, sp.tolerations);
        if (taintCount[i]! > maxTaint) maxTaint = taintCount[i]!;
      }
      if (hasPreferred) {
        affinity[i] = preferredNodeAffinityScore(sp, node.labels, node.name);
        if (affinity[i]! > maxAffinity) maxAffinity = affinity[i]!;
      }
    }
    let best = -Infinity;
    let chosen: N | undefined;
    let ties = 0;
    for (let i = 0; i < n; i++) {
      const taintScore = maxTaint > 0 ? 100 - (taintCount[i]! * 100) / maxTaint : 100;
      const affinityScore = maxAffinity > 0 ? (affinity[i]! * 100) / maxAffinity : 0;
      // kube-scheduler scores are integers per plugin; round so float noise does not break ties.
      const score = Math.round(resourceScore[i]!) + 3 * Math.round(taintScore) + 2 * Math.round(affinityScore);
      if (score > best) {
        best = score;
        chosen = feasible[i];
        ties = 1;
      } else if (score === best) {
        ties++;
        if (this.rng.int(ties) === 0) chosen = feasible[i];
      }
    }
    return chosen;
  }
}

function frac(node: SchedulableNode, r: string, add: number): number {
  const alloc = node.allocatable[r] ?? 0;
  if (alloc <= 0) return 1;
  return Math.min(1, ((node.requested[r] ?? 0) + add) / alloc);
}
