import type { HostPort } from '../scheduling/host-ports.js';
import { type Resources, addInto } from '../scheduling/resources.js';
import type { BoundPod, SolverNode } from './solver-snapshot.js';

/**
 * What a node's bound pods take, as every solve starts from it: the room they leave,
 * the host ports they hold, and those of them with required anti-affinity (which
 * repel pods placed beside them). A function of the node alone; snapshot nodes are
 * immutable, so it is kept per node object. Why: consolidation solves many what-ifs
 * over one snapshot, each a few nodes short, and walking every bound pod of every
 * node in each of them was most of their cost.
 */
export interface NodeUse {
  /** allocatable less the bound pods' requests, subtracted pod by pod (read only: copy it to pack into). */
  readonly free: Readonly<Resources>;
  readonly ports: readonly HostPort[];
  readonly antiOwners: readonly BoundPod[];
  /** The topology keys of those pods' required anti-affinity terms. */
  readonly antiTopologyKeys: readonly string[];
}

const uses = new WeakMap<SolverNode, NodeUse>();

export function nodeUse(node: SolverNode): NodeUse {
  let use = uses.get(node);
  if (use) return use;
  const free: Resources = { ...node.allocatable };
  const ports: HostPort[] = [];
  const antiOwners: BoundPod[] = [];
  const antiTopologyKeys: string[] = [];
  for (const p of node.pods) {
    addInto(free, p.requests, -1);
    if (p.hostPorts.length) for (const hp of p.hostPorts) ports.push(hp);
    const terms = p.affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution;
    if (!terms?.length) continue;
    antiOwners.push(p);
    for (const t of terms) antiTopologyKeys.push(t.topologyKey);
  }
  use = { free, ports, antiOwners, antiTopologyKeys };
  uses.set(node, use);
  return use;
}
