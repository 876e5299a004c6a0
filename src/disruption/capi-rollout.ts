import { parseNodeGroupObjectOnce, type NodeGroupView } from '../api/capi.js';
import type { UnstructuredObject } from '../api/unstructured-object.js';
import { resolveMachineSetGroup } from '../cluster/node-machine-map.js';

/**
 * MachineDeployments that Cluster API is rolling out: their nodes are CAPI's to replace,
 * so no disruption decision (emptiness, consolidation, expiry, drift) takes them until
 * the rollout is over, as Cluster Autoscaler leaves them alone. A MachineDeployment is
 * rolling out while more than one of its MachineSets has (or wants) Machines, or while
 * its v1beta1 `updatedReplicas` (the newest MachineSet's Machines) is below its
 * replicas. Not used: v1beta2's `upToDateReplicas` and `RollingOut` condition. Real CAPI
 * v1.14 keeps them at 0 and True for good when a Machine differs from the template in
 * a way no new MachineSet will fix (e.g. the Node's kubelet version against an unset
 * spec.version), which would hold the nodes for ever (docs/adr/0084-drift.md). Pure.
 */

interface DeploymentStatus {
  replicas?: unknown;
  updatedReplicas?: unknown;
  deprecated?: { v1beta1?: { updatedReplicas?: unknown } };
}

const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

/** Why a MachineDeployment's own status says it is rolling out, or undefined. */
function statusRollout(md: UnstructuredObject): string | undefined {
  const s = md.status as DeploymentStatus | undefined;
  if (!s) return undefined;
  const replicas = num(s.replicas);
  // v1beta1 updatedReplicas, kept under deprecated.v1beta1 in v1beta2.
  const updated = num(s.updatedReplicas) ?? num(s.deprecated?.v1beta1?.updatedReplicas);
  if (replicas !== undefined && updated !== undefined && updated < replicas) return `${updated} of its ${replicas} Machines are from its newest MachineSet`;
  return undefined;
}

/** Group id -> why CAPI is rolling it out. */
export function rollingOutGroups(nodeGroups: readonly UnstructuredObject[]): Map<string, string> {
  const out = new Map<string, string>();
  const activeSets = new Map<string, number>();
  for (const o of nodeGroups) {
    let view: NodeGroupView;
    try {
      view = parseNodeGroupObjectOnce(o);
    } catch {
      continue; // reported by buildSnapshot
    }
    if (view.kind === 'MachineDeployment') {
      const why = statusRollout(o);
      if (why) out.set(view.id, `MachineDeployment ${view.namespace}/${view.name} is rolling out (${why}): its nodes are left to Cluster API`);
    } else if (view.kind === 'MachineSet') {
      const md = resolveMachineSetGroup(view);
      if (md !== view.id && ((view.replicas ?? 0) > 0 || (view.statusReplicas ?? 0) > 0)) activeSets.set(md, (activeSets.get(md) ?? 0) + 1);
    }
  }
  for (const [id, sets] of activeSets) {
    if (sets > 1 && !out.has(id)) out.set(id, `MachineDeployment ${id.slice(id.indexOf('/') + 1)} is rolling out (${sets} MachineSets have Machines): its nodes are left to Cluster API`);
  }
  return out;
}
