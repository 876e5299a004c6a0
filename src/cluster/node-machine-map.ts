import type { V1Node } from '@kubernetes/client-node';
import {
  DEPLOYMENT_NAME_LABEL, MACHINE_ANNOTATION, MACHINE_NAMESPACE_ANNOTATION, OWNER_KIND_ANNOTATION, OWNER_NAME_ANNOTATION,
  POOL_NAME_LABEL, SET_NAME_LABEL, type MachineView, type NodeGroupView,
} from '../api/capi.js';

/**
 * Node <-> Machine <-> node group, as Cluster Autoscaler's clusterapi provider
 * resolves it, in one pass over each list (maps, no nodes x machines loop).
 *
 * A Node finds its Machine by, in order: the Machine's status.nodeRef, the
 * normalised providerID, and the Node's `cluster.x-k8s.io/machine` annotation.
 * A Machine finds its group by its controller owner reference (MachineSet ->
 * its owning MachineDeployment, or MachinePool), else by the
 * `cluster.x-k8s.io/{deployment,set,pool}-name` labels. MachinePool nodes without
 * Machines are found through spec.providerIDList and status.nodeRefs. Finally a
 * Node's `cluster.x-k8s.io/owner-kind` / `owner-name` annotations (set by CAPI)
 * place it even when the input holds no Machines.
 */

/**
 * The providerID's last path segment, lower-cased, as CA's normalizedProviderString
 * does: `aws:///us-east-1a/i-0abc` and `aws://us-east-1a/i-0ABC` both become `i-0abc`.
 */
export function normalizeProviderID(providerID: string): string {
  const parts = providerID.split('/');
  for (let i = parts.length - 1; i >= 0; i--) if (parts[i]) return parts[i]!.toLowerCase();
  return providerID.toLowerCase();
}

export interface NodeMachineMap {
  /** Node name -> its Machine. */
  machineOfNode: Map<string, MachineView>;
  /** Node name -> group id (`Kind/namespace/name`, MachineSets resolved to their MachineDeployment). */
  groupOfNode: Map<string, string>;
  /** `namespace/name` of a Machine -> group id. */
  groupOfMachine: Map<string, string>;
  /** Group id -> names of its nodes. */
  nodesOfGroup: Map<string, string[]>;
  /** Group id -> its Machines that have no Node yet (not deleting): capacity in flight. */
  pendingMachinesOfGroup: Map<string, MachineView[]>;
}

/*
 * Memos of what depends on one view or Node alone (views are parsed once per object and,
 * like Nodes, immutable: a change is a new object). Why: mapping runs on every snapshot
 * build whose Nodes or Machines changed, and building the same key strings and
 * normalising the same providerIDs again was most of its time. The strings are the same
 * objects from call to call, so the maps below hash them once.
 */
const resolvedSets = new WeakMap<NodeGroupView, string>();

/** How a Machine names its group: a MachineSet to look up first, then a group id or another MachineSet. */
interface MachineRefs {
  /** `namespace/name`. */
  key: string;
  providerID: string | undefined;
  /** Its owning MachineSet's group id (`MachineSet/ns/name`), looked up among the groups. */
  ownerSet?: string;
  /** Else: the group it names by owner or label, or a MachineSet (by label) to look up. */
  group?: string;
  labelSet?: string;
}
const machineRefsMemo = new WeakMap<MachineView, MachineRefs>();
const nodeProviderIDs = new WeakMap<V1Node, string | null>();

function machineRefs(m: MachineView): MachineRefs {
  let r = machineRefsMemo.get(m);
  if (r) return r;
  r = { key: `${m.namespace}/${m.name}`, providerID: m.providerID ? normalizeProviderID(m.providerID) : undefined };
  const owner = m.ownerReferences.find((o) => o.controller === true) ?? m.ownerReferences[0];
  if (owner?.kind === 'MachinePool') r.group = `MachinePool/${m.namespace}/${owner.name}`;
  else if (owner?.kind === 'MachineDeployment') r.group = `MachineDeployment/${m.namespace}/${owner.name}`;
  else {
    if (owner?.kind === 'MachineSet') r.ownerSet = `MachineSet/${m.namespace}/${owner.name}`;
    const md = m.labels[DEPLOYMENT_NAME_LABEL];
    const pool = m.labels[POOL_NAME_LABEL];
    const set = m.labels[SET_NAME_LABEL];
    if (md) r.group = `MachineDeployment/${m.namespace}/${md}`;
    else if (pool) r.group = `MachinePool/${m.namespace}/${pool}`;
    else if (set) r.labelSet = `MachineSet/${m.namespace}/${set}`;
  }
  machineRefsMemo.set(m, r);
  return r;
}

function nodeProviderID(node: V1Node): string | undefined {
  let pid = nodeProviderIDs.get(node);
  if (pid === undefined) nodeProviderIDs.set(node, (pid = node.spec?.providerID ? normalizeProviderID(node.spec.providerID) : null));
  return pid ?? undefined;
}

/**
 * The group id a MachineSet stands for: its controlling MachineDeployment if any
 * (MachineSets of a MachineDeployment are never groups of their own), else itself.
 */
export function resolveMachineSetGroup(ms: NodeGroupView): string {
  let id = resolvedSets.get(ms);
  if (id === undefined) {
    const md = ms.ownerReferences.find((o) => o.kind === 'MachineDeployment' && o.controller !== false);
    const label = ms.labels[DEPLOYMENT_NAME_LABEL];
    id = md ? `MachineDeployment/${ms.namespace}/${md.name}` : label ? `MachineDeployment/${ms.namespace}/${label}` : ms.id;
    resolvedSets.set(ms, id);
  }
  return id;
}

export function mapNodesToGroups(nodes: readonly V1Node[], machines: readonly MachineView[], groups: readonly NodeGroupView[]): NodeMachineMap {
  const byId = new Map<string, NodeGroupView>();
  for (const g of groups) byId.set(g.id, g);
  const setGroupById = (id: string): string | undefined => {
    const ms = byId.get(id);
    return ms ? resolveMachineSetGroup(ms) : undefined;
  };
  const setGroup = (ns: string, name: string): string | undefined => setGroupById(`MachineSet/${ns}/${name}`);
  const known = (id: string) => (byId.has(id) ? id : undefined);

  const groupOfMachine = new Map<string, string>();
  /** The same by Machine object: the per-node lookups below build no key strings. */
  const groupOfView = new Map<MachineView, string>();
  const machineByKey = new Map<string, MachineView>();
  const machineByProviderID = new Map<string, MachineView>();
  const machineByNodeName = new Map<string, MachineView>();
  const machineByName = new Map<string, MachineView | null>(); // null: the name is ambiguous across namespaces
  for (const m of machines) {
    const refs = machineRefs(m);
    const key = refs.key;
    machineByKey.set(key, m);
    machineByName.set(m.name, machineByName.has(m.name) ? null : m);
    if (refs.providerID) machineByProviderID.set(refs.providerID, m);
    if (m.nodeName) machineByNodeName.set(m.nodeName, m);
    const g = (refs.ownerSet ? setGroupById(refs.ownerSet) : undefined) ?? refs.group ?? (refs.labelSet ? setGroupById(refs.labelSet) : undefined);
    if (g) {
      groupOfMachine.set(key, g);
      groupOfView.set(m, g);
    }
  }

  const poolByProviderID = new Map<string, string>();
  const poolByNodeName = new Map<string, string>();
  for (const g of groups) {
    if (g.kind !== 'MachinePool') continue;
    for (const id of g.providerIDList) poolByProviderID.set(normalizeProviderID(id), g.id);
    for (const n of g.nodeRefNames) poolByNodeName.set(n, g.id);
  }

  const machineOfNode = new Map<string, MachineView>();
  const groupOfNode = new Map<string, string>();
  const nodesOfGroup = new Map<string, string[]>();
  for (const node of nodes) {
    const name = node.metadata?.name;
    if (!name) continue;
    const pid = nodeProviderID(node);
    const ann = node.metadata?.annotations ?? {};
    let machine = machineByNodeName.get(name) ?? (pid ? machineByProviderID.get(pid) : undefined);
    if (!machine && ann[MACHINE_ANNOTATION]) {
      const ns = ann[MACHINE_NAMESPACE_ANNOTATION];
      machine = ns ? machineByKey.get(`${ns}/${ann[MACHINE_ANNOTATION]}`) : undefined;
      // Without the namespace annotation, accept a unique match by name.
      if (!machine && !ns) machine = machineByName.get(ann[MACHINE_ANNOTATION]) ?? undefined;
    }
    let group: string | undefined;
    if (machine) {
      machineOfNode.set(name, machine);
      group = groupOfView.get(machine);
    }
    group ??= (pid ? poolByProviderID.get(pid) : undefined) ?? poolByNodeName.get(name) ?? groupFromNodeAnnotations(ann, setGroup, known);
    if (!group) continue;
    groupOfNode.set(name, group);
    let list = nodesOfGroup.get(group);
    if (!list) nodesOfGroup.set(group, (list = []));
    list.push(name);
  }

  const pendingMachinesOfGroup = new Map<string, MachineView[]>();
  const nodeNames = new Set<string>();
  for (const n of nodes) if (n.metadata?.name) nodeNames.add(n.metadata.name);
  const claimed = new Set<MachineView>(machineOfNode.values());
  for (const m of machines) {
    if (m.deleting || claimed.has(m) || (m.nodeName && nodeNames.has(m.nodeName))) continue;
    const g = groupOfView.get(m);
    if (!g) continue;
    let list = pendingMachinesOfGroup.get(g);
    if (!list) pendingMachinesOfGroup.set(g, (list = []));
    list.push(m);
  }
  return { machineOfNode, groupOfNode, groupOfMachine, nodesOfGroup, pendingMachinesOfGroup };
}

function groupFromNodeAnnotations(
  ann: Record<string, string>, setGroup: (ns: string, name: string) => string | undefined, known: (id: string) => string | undefined,
): string | undefined {
  const kind = ann[OWNER_KIND_ANNOTATION];
  const name = ann[OWNER_NAME_ANNOTATION];
  const ns = ann[MACHINE_NAMESPACE_ANNOTATION];
  if (!kind || !name || !ns) return undefined;
  if (kind === 'MachineSet') return setGroup(ns, name);
  if (kind === 'MachinePool' || kind === 'MachineDeployment') return known(`${kind}/${ns}/${name}`);
  return undefined;
}
