import { HOSTNAME_LABEL, ZONE_LABEL } from '../api/capacity-annotations.js';
import type { mapNodesToGroups } from './node-machine-map.js';
import type { NodeGroup, SnapshotNode } from './snapshot.js';

/**
 * Marks each managed group's nodes with its id, and returns a placeholder node for
 * every replica that has no staying node yet (in-flight capacity): named after its
 * pending Machine when there is one, labelled like the group's template (plus the
 * Machine's failure domain), holding the group's DaemonSet pods. Counting these is
 * what keeps a restarted controller from provisioning twice.
 */
export function inFlightNodes(
  groups: readonly NodeGroup[], map: ReturnType<typeof mapNodesToGroups>, nodeByName: ReadonlyMap<string, SnapshotNode>, goingAway: ReadonlySet<string>,
): SnapshotNode[] {
  const inFlight: SnapshotNode[] = [];
  for (const g of groups) {
    const names = map.nodesOfGroup.get(g.id) ?? [];
    for (const n of names) {
      const sn = nodeByName.get(n);
      if (sn) sn.groupId = g.id;
    }
    let staying = 0;
    for (const n of names) if (!goingAway.has(n)) staying++;
    const missing = g.replicas - staying;
    const pendingMachines = map.pendingMachinesOfGroup.get(g.id) ?? [];
    for (let i = 0; i < missing; i++) {
      const m = pendingMachines[i];
      const name = `in-flight:${g.namespace}/${g.name}:${m ? m.name : i - pendingMachines.length}`;
      const labels: Record<string, string> = { ...g.template.labels, [HOSTNAME_LABEL]: name };
      if (m?.failureDomain && labels[ZONE_LABEL] === undefined) labels[ZONE_LABEL] = m.failureDomain;
      inFlight.push({
        name,
        groupId: g.id,
        labels,
        taints: g.template.taints,
        allocatable: g.template.allocatable,
        pods: (g.daemonSetPods ?? []).map((p) => ({ ...p, name: `${p.name}-${name}`, key: `${p.key}-${name}`, nodeName: name })),
        inFlight: true,
        unschedulable: false,
        ...(g.template.deviceBlocked ? { deviceBlocked: g.template.deviceBlocked } : {}),
      });
    }
  }
  return inFlight;
}
