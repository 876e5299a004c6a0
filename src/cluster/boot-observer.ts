import type { V1Node } from '@kubernetes/client-node';
import { isNodeGroupObject, parseMachineOnce, parseNodeGroupObjectOnce, type MachineView, type NodeGroupView } from '../api/capi.js';
import { mapNodesToGroups } from './node-machine-map.js';
import type { ClusterObjects } from './objects.js';

/**
 * Observed node boot times per node group: from a Machine's creation to its Node's
 * Ready transition, the horizon prediction must look ahead (issue 13). A Machine
 * is timed only if it was once seen without a Ready node, so nodes that were Ready
 * before the controller started (or whose Ready condition flapped since) are never
 * mistaken for boots. Remembers only the Machines still booting: bounded by them.
 */

export interface BootObservation {
  /** `Kind/namespace/name` of the node group. */
  groupId: string;
  /** The Machine's `namespace/name`. */
  machine: string;
  ms: number;
}

function readySince(node: V1Node): number | undefined {
  const c = node.status?.conditions?.find((x) => x.type === 'Ready');
  if (c?.status !== 'True') return undefined;
  return c.lastTransitionTime ? new Date(c.lastTransitionTime).getTime() : undefined;
}

export class BootObserver {
  /** Machine `namespace/name` -> its group and creation time, while it has no Ready node. */
  private readonly booting = new Map<string, { groupId: string; createdAt: number }>();

  get tracking(): number {
    return this.booting.size;
  }

  /** Boots completed since the last call. O(nodes + Machines + groups). */
  observe(objects: Pick<ClusterObjects, 'nodes' | 'machines' | 'nodeGroups'>): BootObservation[] {
    const machines: MachineView[] = [];
    const createdAt = new Map<string, number>();
    for (const m of objects.machines) {
      const ts = m.metadata?.creationTimestamp;
      if (ts) createdAt.set(`${m.metadata?.namespace ?? ''}/${m.metadata?.name ?? ''}`, new Date(ts).getTime());
      try {
        machines.push(parseMachineOnce(m));
      } catch {
        // an invalid Machine is reported by buildSnapshot; it is not timed here
      }
    }
    const groups: NodeGroupView[] = [];
    for (const g of objects.nodeGroups) {
      if (!isNodeGroupObject(g)) continue;
      try {
        groups.push(parseNodeGroupObjectOnce(g));
      } catch {
        // idem
      }
    }
    const map = mapNodesToGroups(objects.nodes, machines, groups);
    const nodeOfMachine = new Map<string, V1Node>();
    const nodesByName = new Map<string, V1Node>();
    for (const n of objects.nodes) if (n.metadata?.name) nodesByName.set(n.metadata.name, n);
    for (const [nodeName, m] of map.machineOfNode) {
      const n = nodesByName.get(nodeName);
      if (n) nodeOfMachine.set(`${m.namespace}/${m.name}`, n);
    }
    const out: BootObservation[] = [];
    const live = new Set<string>();
    for (const m of machines) {
      const key = `${m.namespace}/${m.name}`;
      if (m.deleting) continue;
      live.add(key);
      const node = nodeOfMachine.get(key);
      const ready = node ? readySince(node) : undefined;
      const tracked = this.booting.get(key);
      if (ready === undefined) {
        const groupId = map.groupOfMachine.get(key);
        const created = createdAt.get(key);
        if (!tracked && groupId && created !== undefined) this.booting.set(key, { groupId, createdAt: created });
        continue;
      }
      if (tracked) {
        this.booting.delete(key);
        if (ready >= tracked.createdAt) out.push({ groupId: tracked.groupId, machine: key, ms: ready - tracked.createdAt });
      }
    }
    for (const key of this.booting.keys()) if (!live.has(key)) this.booting.delete(key);
    return out;
  }
}
