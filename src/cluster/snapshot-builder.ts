import type { KubernetesObject, V1Node, V1Pod } from '@kubernetes/client-node';
import type { MachineView, NodeGroupView } from '../api/capi.js';
import { buildSnapshot, type BuildSnapshotOptions, type BuildSteps, type SnapshotIssue } from './build-snapshot.js';
import { learnNodeShape, type LearnedShape } from './node-group.js';
import { mapNodesToGroups } from './node-machine-map.js';
import { nodeSnapshotKey } from './node-parse.js';
import { IncrementalPodPlacement, type ClassifiedPod, type PodPlacement } from './pod-placement.js';
import type { ClusterObjects } from './objects.js';
import type { ClusterSnapshot, SnapshotNode } from './snapshot.js';

/** The lists buildSnapshot reads. */
const SNAPSHOT_INPUTS = [
  'pods', 'nodes', 'daemonSets', 'persistentVolumes', 'persistentVolumeClaims', 'storageClasses', 'nodeGroups', 'machines',
  'nodePools', 'namespaces', 'infrastructureTemplates', 'resourceClaims', 'resourceClaimTemplates', 'deviceClasses', 'resourceSlices', 'csiNodes',
] as const satisfies ReadonlyArray<keyof ClusterObjects>;
const NONE: readonly KubernetesObject[] = [];
const sameElements = <T>(a: readonly T[], b: readonly T[]) => a.length === b.length && a.every((x, i) => x === b[i]);
/** Same nodes for buildSnapshot: each the same object, or one it reads the same (a heartbeat). */
const sameNodes = (a: readonly V1Node[], b: readonly V1Node[]) => a.length === b.length
  && a.every((x, i) => x === b[i] || nodeSnapshotKey(x) === nodeSnapshotKey(b[i]!));
const NODES = SNAPSHOT_INPUTS.indexOf('nodes');

/**
 * buildSnapshot for a loop that builds again and again (the provisioner, the
 * disruptor, the simulator's policies), remembering between its builds what
 * depends on whole inputs. Each memo is sound because ClusterStateSource objects and
 * lists are immutable by contract (a change is a new object), and each is checked
 * element by element, since a caller may push into an array it passed before.
 * - the last build: the very same objects give the same snapshot (its issues replayed),
 *   with or without extra pending pods, which are appended to it;
 *   a Node counts as the same when everything buildSnapshot reads of it is
 *   (nodeSnapshotKey), so node heartbeats alone never cause a build;
 * - the node → group mapping, while every node (as above), Machine and group is the same object;
 * - each group's learned node shape, while its Ready nodes' allocatable, labels and
 *   taints are the same objects (groups not in the last build are forgotten);
 * - the pods by node and the demand (non-strict builds): only pods changed since the
 *   last build are classified, only the nodes they left or joined get a new pod list
 *   (pod-placement.ts, ADR 0130).
 * The state lives as long as its owner: one per controller (every loop and the
 * metrics share it, so one change costs one build) or per simulated policy, never
 * module-global (ADR 0022).
 */
export class SnapshotBuilder implements BuildSteps {
  constructor(private readonly model: Pick<BuildSnapshotOptions, 'expendablePodsPriorityCutoff'> = {}) {}

  private lastBuild: { strict: boolean; cutoff: number | undefined; inputs: ReadonlyArray<readonly KubernetesObject[]>; issues: SnapshotIssue[]; snapshot: ClusterSnapshot } | undefined;
  private lastMap: { nodes: V1Node[]; machines: MachineView[]; views: NodeGroupView[]; map: ReturnType<typeof mapNodesToGroups> } | undefined;
  private lastShape = new Map<string, { ready: readonly SnapshotNode[]; learned: LearnedShape | undefined }>();
  /** The pods step, kept from the changes between the pod lists of successive builds. */
  private readonly pods = new IncrementalPodPlacement();
  /** Shapes learned during the current build; they replace lastShape when it ends. */
  private shapes = new Map<string, { ready: readonly SnapshotNode[]; learned: LearnedShape | undefined }>();

  /**
   * The snapshot of these objects. Extra pending pods (forecasts, CapacityBuffers) are
   * appended to the build of the objects alone, which buildSnapshot does last and
   * nothing else reads, so loops with and without them share that build.
   */
  build(objects: ClusterObjects, options: BuildSnapshotOptions = {}): ClusterSnapshot {
    const { extraPendingPods, ...rest } = options;
    const built = this.buildObjects(objects, { ...this.model, ...rest });
    return extraPendingPods?.length ? { ...built, pendingPods: [...built.pendingPods, ...extraPendingPods] } : built;
  }

  private buildObjects(objects: ClusterObjects, options: Omit<BuildSnapshotOptions, 'extraPendingPods'>): ClusterSnapshot {
    const strict = options.strict ?? true;
    const inputs = SNAPSHOT_INPUTS.map((k) => objects[k] ?? NONE);
    const last = this.lastBuild;
    const cutoff = options.expendablePodsPriorityCutoff;
    if (last && last.strict === strict && last.cutoff === cutoff
      && inputs.every((list, i) => (i === NODES ? sameNodes(last.inputs[i]! as V1Node[], list as V1Node[]) : sameElements(last.inputs[i]!, list)))) {
      for (const issue of last.issues) options.onIssue?.(issue);
      // The newest objects, so the next comparison is by identity again.
      if (last.inputs[NODES] !== inputs[NODES]) this.lastBuild = { ...last, inputs: last.inputs.with(NODES, inputs[NODES]!.slice()) };
      return last.snapshot;
    }
    const issues: SnapshotIssue[] = [];
    this.shapes = new Map();
    const snapshot = buildSnapshot(objects, { ...options, strict, onIssue: (i) => { issues.push(i); options.onIssue?.(i); } }, this);
    this.lastShape = this.shapes;
    // Copies: a caller may push into its arrays later (a stale hit otherwise).
    this.lastBuild = { strict, cutoff, inputs: inputs.map((list) => list.slice()), issues, snapshot };
    return snapshot;
  }

  mapNodes(nodes: V1Node[], machines: MachineView[], views: NodeGroupView[]): ReturnType<typeof mapNodesToGroups> {
    const last = this.lastMap;
    if (last && sameNodes(last.nodes, nodes) && sameElements(last.machines, machines) && sameElements(last.views, views)) return last.map;
    const map = mapNodesToGroups(nodes, machines, views);
    this.lastMap = { nodes, machines, views, map };
    return map;
  }

  placePods(pods: readonly V1Pod[], classify: (pod: V1Pod) => ClassifiedPod, report: (issue: SnapshotIssue) => void): PodPlacement {
    return this.pods.update(pods, classify, report);
  }

  learnShape(groupId: string, ready: readonly SnapshotNode[]): LearnedShape | undefined {
    const last = this.lastShape.get(groupId);
    let entry = last;
    if (!last || last.ready.length !== ready.length || !ready.every((n, i) => {
      const l = last.ready[i]!;
      return l.allocatable === n.allocatable && l.labels === n.labels && l.taints === n.taints;
    })) entry = { ready, learned: learnNodeShape(ready) };
    this.shapes.set(groupId, entry!);
    return entry!.learned;
  }
}
