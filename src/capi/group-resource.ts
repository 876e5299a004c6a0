import { CAPI_GROUP, type CapiVersion, type NodeGroupKind } from '../api/capi.js';
import type { NodeGroupRef } from './actuator.js';

/** REST paths of CAPI objects at the served cluster.x-k8s.io version. */

const PLURAL: Record<NodeGroupKind | 'Machine', string> = {
  MachineDeployment: 'machinedeployments',
  MachineSet: 'machinesets',
  MachinePool: 'machinepools',
  Machine: 'machines',
};

export function capiPath(version: CapiVersion, kind: NodeGroupKind | 'Machine', namespace: string, name?: string): string {
  const base = `/apis/${CAPI_GROUP}/${version}/namespaces/${encodeURIComponent(namespace)}/${PLURAL[kind]}`;
  return name === undefined ? base : `${base}/${encodeURIComponent(name)}`;
}

export function groupPath(version: CapiVersion, group: NodeGroupRef): string {
  return capiPath(version, group.kind, group.namespace, group.name);
}

export function groupId(group: NodeGroupRef): string {
  return `${group.kind}/${group.namespace}/${group.name}`;
}
