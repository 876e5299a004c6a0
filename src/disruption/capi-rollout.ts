import { parseNodeGroupObject, type NodeGroupView } from '../api/capi.js';
import type { UnstructuredObject } from '../api/unstructured-object.js';
import { resolveMachineSetGroup } from '../cluster/node-machine-map.js';

/**
 * MachineDeployments that Cluster API is rolling out: their nodes are CAPI's to replace,
 * so no disruption decision (emptiness, consolidation, expiry, drift) takes them until
 * the rollout is over, as Cluster Autoscaler leaves them alone. A MachineDeployment is
 * rolling out when more than one of its MachineSets has (or wants) Machines, when it
 * reports fewer up-to-date replicas than replicas, or when its RollingOut condition is
 * True. Pure.
 */

interface DeploymentStatus {
  replicas?: unknown;
  upToDateReplicas?: unknown;
  updatedReplicas?: unknown;
  conditions?: Array<{ type?: unknown; status?: unknown }>;
  deprecated?: { v1beta1?: { updatedReplicas?: unknown } };
}

const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

/** Why a MachineDeployment's own status says it is rolling out, or undefined. */
function statusRollout(md: UnstructuredObject): string | undefined {
  const s = md.status as DeploymentStatus | undefined;
  if (!s) return undefined;
  if (s.conditions?.some((c) => c.type === 'RollingOut' && c.status === 'True')) return 'its RollingOut condition is True';
  const replicas = num(s.replicas);
  // v1beta2 upToDateReplicas; v1beta1 updatedReplicas (kept under deprecated.v1beta1 in v1beta2).
  const upToDate = num(s.upToDateReplicas) ?? num(s.updatedReplicas) ?? num(s.deprecated?.v1beta1?.updatedReplicas);
  if (replicas !== undefined && upToDate !== undefined && upToDate < replicas) return `${upToDate} of its ${replicas} Machines are up to date`;
  return undefined;
}

/** Group id -> why CAPI is rolling it out. */
export function rollingOutGroups(nodeGroups: readonly UnstructuredObject[]): Map<string, string> {
  const out = new Map<string, string>();
  const activeSets = new Map<string, number>();
  for (const o of nodeGroups) {
    let view: NodeGroupView;
    try {
      view = parseNodeGroupObject(o);
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
