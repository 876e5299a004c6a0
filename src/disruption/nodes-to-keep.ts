import type { V1Pod } from '@kubernetes/client-node';
import type { ClusterObjects } from '../cluster/objects.js';
import type { ClusterSnapshot } from '../cluster/snapshot.js';
import { pausedGroups } from '../provisioning/provision-failures.js';
import { rollingOutGroups } from './capi-rollout.js';
import type { SolveSnapshot } from './expiry.js';
import { nodeBlocker, podBlocker } from './validation.js';

export interface KeepInput {
  objects: ClusterObjects;
  snapshot: ClusterSnapshot;
  /** Nodes already taken care of: being removed, declined, or part of a replacement. */
  busy: Iterable<string>;
  /** Nodes empty now (the pass's empty-since). */
  empty: Iterable<string>;
  /** Drifted nodes (drift.ts). */
  drifted: ReadonlyMap<string, string>;
  /** Some empty node is due: worth a solve to see where pending pods land. */
  due: boolean;
  /** Expiry may remove any node: every node's pods are looked at, not only the empty and drifted ones'. */
  expiryOn: boolean;
  solve: SolveSnapshot;
  /** Told once per rolling-out group that its nodes are CAPI's to replace (key, message). */
  explain: (key: string, msg: string) => void;
}

/**
 * Nodes that must stay this pass, whatever the method: `busy` ones, do-not-disrupt and a
 * pod that may not move (validation.ts), a paused group or Cluster, a MachineDeployment
 * CAPI is rolling out, and empty nodes where pending pods will land. Pure apart from the
 * solver.
 */
export async function nodesToKeep(input: KeepInput): Promise<Set<string>> {
  const { objects, snapshot } = input;
  const keep = new Set<string>(input.busy);
  for (const n of objects.nodes) if (nodeBlocker(n)) keep.add(n.metadata!.name!);
  const paused = pausedGroups(objects);
  if (paused.size > 0) for (const n of snapshot.nodes) if (n.groupId && paused.has(n.groupId)) keep.add(n.name);
  // A MachineDeployment CAPI is rolling out: its nodes are CAPI's to replace.
  const rolling = rollingOutGroups(objects.nodeGroups);
  if (rolling.size > 0) {
    for (const n of snapshot.nodes) if (n.groupId && rolling.has(n.groupId)) keep.add(n.name);
    for (const [id, why] of rolling) input.explain(`rollout:${id}`, why);
  }
  // Only pods on nodes that could be removed matter: without expiry, those are the empty and the drifted ones.
  const candidates = input.expiryOn ? undefined : new Set([...input.empty, ...input.drifted.keys()]);
  // No candidate at all: no pod can keep one (the common pass, and a walk over every pod).
  if (!candidates || candidates.size > 0) for (const p of objects.pods) {
    const node = p.spec?.nodeName;
    if (node && (!candidates || candidates.has(node)) && podBlocker(p as V1Pod, snapshot.expendablePodsPriorityCutoff)) keep.add(node);
  }
  // A node that is empty now but is where the solver puts pending pods (or CapacityBuffer
  // pods) is capacity in use: removing it would only make the provisioner add it back.
  if (input.due && snapshot.pendingPods.length > 0) {
    const plan = await input.solve(snapshot);
    for (const pl of plan.placements) if ('node' in pl) keep.add(pl.node);
  }
  return keep;
}
