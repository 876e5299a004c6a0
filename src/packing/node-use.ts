import type { HostPort } from '../scheduling/host-ports.js';
import { type Resources, addInto } from '../scheduling/resources.js';
import type { BoundPod, SolverNode } from './solver-snapshot.js';

/**
 * What a node's bound pods take, as every solve starts from it: the room they leave,
 * the host ports they hold, and those of them with required anti-affinity (which
 * repel pods placed beside them). A function of the node's pod list and allocatable
 * alone, both immutable, so it is kept per pod list while the allocatable is the same
 * object: snapshot builds reuse both for a node whose pods did not change
 * (pod-placement.ts), so it is worked out once per change, not once per solve. Why:
 * consolidation solves many what-ifs over one snapshot, each a few nodes short, and
 * the Provisioner solves each build; walking every bound pod of every node in each
 * was most of their cost.
 */
export interface NodeUse {
  /** allocatable less the bound pods' requests, subtracted pod by pod (read only: copy it to pack into). */
  readonly free: Readonly<Resources>;
  readonly ports: readonly HostPort[];
  readonly antiOwners: readonly BoundPod[];
  /** The topology keys of those pods' required anti-affinity terms. */
  readonly antiTopologyKeys: readonly string[];
}

const uses = new WeakMap<readonly BoundPod[], { allocatable: Readonly<Resources>; use: NodeUse }>();

export function nodeUse(node: SolverNode): NodeUse {
  const known = uses.get(node.pods);
  if (known && known.allocatable === node.allocatable) return known.use;
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
  const use = { free, ports, antiOwners, antiTopologyKeys };
  uses.set(node.pods, { allocatable: node.allocatable, use });
  return use;
}
