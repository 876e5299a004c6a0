import { createHash } from 'node:crypto';
import { nodeSyncedLabels } from '../api/capi-node-labels.js';
import { NODEPOOL_LABEL, CAPACITY_TYPE_LABEL, NodePoolError, parseNodePoolOnce, type NodePool } from '../api/nodepool.js';
import { derivedPricePerHour } from '../api/price.js';
import { HOSTNAME_LABEL, ZONE_LABEL } from '../api/capacity-annotations.js';
import type { UnstructuredObject } from '../api/unstructured-object.js';
import { daemonSetPodsFor, daemonSetTemplatePod } from '../cluster/node-group.js';
import type { ClusterObjects } from '../cluster/objects.js';
import type { ClusterSnapshot, NodeGroup, PoolLimits, SnapshotNode } from '../cluster/snapshot.js';
import { addInto, CPU, MEMORY, PODS, type Resources } from '../scheduling/resources.js';
import type { SchedulingPod } from '../scheduling/scheduling-pod.js';

/**
 * Standalone Machines (the Karpenter NodeClaim style) in the solver's terms: a
 * NodePool with a `machineTemplate` becomes one more node group of the snapshot,
 * whose "replicas" are the Machines Headroom created for it (label
 * headroom.dev/nodepool), whose in-flight capacity are those Machines without a
 * Node yet, and whose scale-up means "create N Machines". The solver and the
 * limit checks then treat it like any other group. Pure.
 *
 * The group is presented as kind MachineSet named `headroom-nodepool-<pool>`
 * (the plan format only knows CAPI kinds); `standaloneGroups` maps its id back.
 */

export interface StandaloneGroup {
  nodePool: string;
  namespace: string;
  clusterName: string;
  /** Names of the pool's live Machines. */
  machines: string[];
}

export const STANDALONE_GROUP_PREFIX = 'headroom-nodepool-';
const DEFAULT_MAX_STANDALONE = 1000;

function isDeleting(o: UnstructuredObject): boolean {
  return !!o.metadata?.deletionTimestamp;
}

function nodeRefName(m: UnstructuredObject): string | undefined {
  const ref = (m.status as { nodeRef?: { name?: unknown } } | undefined)?.nodeRef;
  return typeof ref?.name === 'string' ? ref.name : undefined;
}

export function withStandalonePools(
  snapshot: ClusterSnapshot, objects: ClusterObjects,
): { snapshot: ClusterSnapshot; standalone: Map<string, StandaloneGroup> } {
  const standalone = new Map<string, StandaloneGroup>();
  const pools: NodePool[] = [];
  for (const o of objects.nodePools) {
    try {
      const p = parseNodePoolOnce(o);
      if (p.machineTemplate) pools.push(p);
    } catch (err) {
      if (!(err instanceof NodePoolError)) throw err;
    }
  }
  if (pools.length === 0) return { snapshot, standalone };

  const dsPods: SchedulingPod[] = [];
  for (const ds of objects.daemonSets) {
    try {
      dsPods.push(daemonSetTemplatePod(ds));
    } catch {
      // an invalid DaemonSet is reported by buildSnapshot already
    }
  }
  const groups: NodeGroup[] = [...snapshot.groups];
  // The snapshot's nodes are shared: a node that joins a pool's group is copied, the rest kept as they are.
  const nodes: SnapshotNode[] = [...snapshot.nodes];
  /** Registered nodes (not in-flight placeholders) by name -> their index in `nodes`. */
  const registered = new Map<string, number>();
  nodes.forEach((n, i) => { if (!n.inFlight) registered.set(n.name, i); });
  const limits: Record<string, PoolLimits> = { ...snapshot.limits };
  const ids = new Map<string, string>();

  for (const pool of pools) {
    const tpl = pool.machineTemplate!;
    if (!(tpl.capacity[CPU] && tpl.capacity[MEMORY])) continue; // shape unknown: nothing to plan on
    const allocatable: Resources = { [PODS]: 110, ...tpl.capacity };
    // The Machine's labels (headroom.dev/nodepool among them) reach the Node only where CAPI copies them.
    const labels: Record<string, string> = { ...nodeSyncedLabels(tpl.labels), ...(tpl.failureDomain ? { [ZONE_LABEL]: tpl.failureDomain } : {}) };
    const template = { allocatable, labels, taints: tpl.taints };
    const capacityType = tpl.labels[CAPACITY_TYPE_LABEL] === 'spot' ? 'spot' as const : 'on-demand' as const;
    const id = `MachineSet/${tpl.namespace}/${STANDALONE_GROUP_PREFIX}${pool.name}`;
    const machines = objects.machines.filter((m) => m.metadata?.namespace === tpl.namespace
      && m.metadata?.labels?.[NODEPOOL_LABEL] === pool.name && !isDeleting(m));
    const dsForTemplate = daemonSetPodsFor(template, dsPods);
    const daemonSetOverhead: Resources = {};
    for (const p of dsForTemplate) addInto(daemonSetOverhead, p.requests);
    groups.push({
      id, kind: 'MachineSet', namespace: tpl.namespace, name: `${STANDALONE_GROUP_PREFIX}${pool.name}`,
      clusterName: tpl.clusterName, minSize: 0,
      maxSize: Math.max(machines.length, pool.limits.nodes ?? DEFAULT_MAX_STANDALONE),
      replicas: machines.length, template,
      pricePerHour: tpl.pricePerHour ?? derivedPricePerHour(allocatable, capacityType),
      capacityType, daemonSetOverhead, daemonSetPods: dsForTemplate, nodePool: pool.name, weight: pool.weight,
    });
    standalone.set(id, { nodePool: pool.name, namespace: tpl.namespace, clusterName: tpl.clusterName, machines: machines.map((m) => m.metadata!.name!) });
    ids.set(pool.name, id);

    for (const m of machines) {
      const nodeName = nodeRefName(m);
      const at = nodeName !== undefined ? registered.get(nodeName) : undefined;
      if (at !== undefined) {
        nodes[at] = { ...nodes[at]!, groupId: id };
        continue;
      }
      const name = `in-flight:${tpl.namespace}/${m.metadata?.name}`;
      nodes.push({
        name, groupId: id, labels: { ...labels, [HOSTNAME_LABEL]: name }, taints: tpl.taints, allocatable,
        pods: dsForTemplate.map((p) => ({ ...p, name: `${p.name}-${name}`, key: `${p.key}-${name}`, nodeName: name })),
        inFlight: true, unschedulable: false,
      });
    }
  }
  // Usage: each pool's nodes, existing (by group or label) and in flight; one walk for all pools.
  const used = new Map<string, { cpu: number; memory: number; nodes: number }>();
  for (const pool of ids.keys()) used.set(pool, { cpu: 0, memory: 0, nodes: 0 });
  for (const n of nodes) {
    for (const [pool, id] of ids) {
      if (n.groupId !== id && n.labels[NODEPOOL_LABEL] !== pool) continue;
      const u = used.get(pool)!;
      u.cpu += n.allocatable[CPU] ?? 0;
      u.memory += n.allocatable[MEMORY] ?? 0;
      u.nodes += 1;
    }
  }
  for (const pool of pools) if (ids.has(pool.name)) limits[pool.name] = { ...pool.limits, used: used.get(pool.name)! };
  return { snapshot: { ...snapshot, groups, nodes, limits }, standalone };
}

/**
 * The name of the `ordinal`-th Machine of `pool` (counting from 0), decided on a view
 * where the pool had the live Machines `machines`. Deterministic, so a decision that
 * is retried, or made twice on the same view, names the same Machines and the repeat
 * create fails with AlreadyExists instead of overshooting the pool; a view with other
 * Machines gives other names. At most 61 characters, a valid object name.
 */
export function standaloneMachineName(pool: string, machines: readonly string[], ordinal: number): string {
  const digest = createHash('sha256').update(JSON.stringify([pool, [...machines].sort(), ordinal])).digest('hex').slice(0, 10);
  return `${pool.slice(0, 50).replace(/[-.]+$/, '')}-${digest}`;
}
