import { NODEPOOL_HASH_ANNOTATION } from '../api/nodepool-hash.js';
import { NODEPOOL_LABEL } from '../api/nodepool.js';
import type { UnstructuredObject } from '../api/unstructured-object.js';
import type { ClusterSnapshot, PoolTemplate } from '../cluster/snapshot.js';
import type { Plan } from '../packing/plan.js';
import type { DisruptionAllowance, SettingsOf } from './allowance.js';
import { disruptableNodes } from './candidates.js';
import type { SolveSnapshot } from './expiry.js';
import { podsToMove } from './pods.js';
import type { Removal, Skip } from './removal.js';
import { evaluateRemoval } from './what-if.js';

/**
 * Drift (Karpenter's Drifted), for standalone Machines: a Machine Headroom made from a
 * NodePool's machineTemplate carries the hash of that template
 * (NODEPOOL_HASH_ANNOTATION); once the pool's template hashes differently, the Machine's
 * node is replaced. Its pods go to existing nodes when they fit there (a plain delete),
 * else to one new node the solver picks (the pool's new template among the choices),
 * which comes first: the old node goes only once it is Ready. The Drifted budgets, the
 * keep set (every blocker) and the what-if apply as to any other method. A Machine
 * without the annotation (made before Headroom wrote it) is not drifted, as in
 * Karpenter. One action per pass. Pure apart from the solver. The pools' current
 * template hashes come from the snapshot (`templates`), which parsed each NodePool once.
 * See docs/adr/0084-drift.md.
 */

/**
 * `namespace/name` -> why, for the standalone Machines whose pool's template (`templates`,
 * a snapshot's) no longer hashes as theirs.
 */
export function driftedMachines(templates: Readonly<Record<string, PoolTemplate>>, machines: readonly UnstructuredObject[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of machines) {
    const pool = m.metadata?.labels?.[NODEPOOL_LABEL];
    const had = m.metadata?.annotations?.[NODEPOOL_HASH_ANNOTATION];
    const now = pool && Object.hasOwn(templates, pool) ? templates[pool] : undefined;
    if (!now || had === undefined || had === now.hash || m.metadata?.namespace !== now.namespace || m.metadata.deletionTimestamp) continue;
    out.set(`${m.metadata.namespace}/${m.metadata.name}`, `Machine ${m.metadata.namespace}/${m.metadata.name} was made from an older template of NodePool ${pool} (hash ${had}, now ${now.hash})`);
  }
  return out;
}

/** Node name -> why it has drifted, for the existing nodes of driftedMachines. */
export function driftedNodes(snapshot: Pick<ClusterSnapshot, 'nodes' | 'templates'>, machines: readonly UnstructuredObject[]): Map<string, string> {
  const out = new Map<string, string>();
  const drifted = driftedMachines(snapshot.templates, machines);
  if (drifted.size === 0) return out;
  for (const n of snapshot.nodes) {
    const why = n.machine && !n.inFlight ? drifted.get(`${n.machine.namespace}/${n.machine.name}`) : undefined;
    if (why) out.set(n.name, why);
  }
  return out;
}

export interface DriftInput {
  snapshot: ClusterSnapshot;
  /** driftedNodes' answer. */
  drifted: ReadonlyMap<string, string>;
  now: number;
  settingsOf: SettingsOf;
  allowance: DisruptionAllowance;
  solve: SolveSnapshot;
  keep?: ReadonlySet<string>;
}

/**
 * The drifted node to act on now, if any: the first (by name) that the budgets allow and
 * whose pods fit on existing nodes, or with one new node (its `replacement`). Skipped
 * entirely while real pods are pending: that capacity is spoken for.
 */
export async function decideDrift(input: DriftInput): Promise<{ remove: Removal[]; skipped: Skip[] }> {
  const { snapshot, drifted, allowance, solve } = input;
  const skipped: Skip[] = [];
  if (drifted.size === 0 || snapshot.pendingPods.some((p) => !p.predicted)) return { remove: [], skipped };
  const candidates = disruptableNodes(snapshot, input.keep).filter((c) => drifted.has(c.node.name) && !c.byReplicas);
  candidates.sort((a, b) => (a.node.name < b.node.name ? -1 : a.node.name > b.node.name ? 1 : 0));
  let baseline: Plan | undefined;
  for (const { node, group } of candidates) {
    if (node.pods.some((p) => p.owner === undefined)) {
      skipped.push({ node: node.name, why: 'has a pod without a controller', reason: 'Drifted', blockedBy: 'pod-without-controller' });
      continue;
    }
    const moved = podsToMove(node);
    const blocked = allowance.blocked(group, 'Drifted', moved);
    if (blocked) {
      skipped.push({ node: node.name, why: blocked.why, reason: 'Drifted', blockedBy: blocked.by });
      continue;
    }
    if (snapshot.pendingPods.length > 0) baseline ??= await solve(snapshot);
    const what = await evaluateRemoval(snapshot, new Set([node.name]), solve, baseline);
    if (what.kind === 'refused') {
      skipped.push({ node: node.name, why: `drifted, but ${what.why}`, reason: 'Drifted', blockedBy: 'pods-cannot-move' });
      continue;
    }
    allowance.take(group, 'Drifted', moved);
    const removal: Removal = {
      node: node.name, group, reason: 'Drifted', since: input.now, ...(node.machine ? { machine: node.machine } : {}),
      podUids: moved.map((p) => p.uid),
      ...(what.kind === 'replace' ? { replacement: { group: what.group, pricePerHour: what.pricePerHour } } : {}),
    };
    return { remove: [removal], skipped };
  }
  return { remove: [], skipped };
}
