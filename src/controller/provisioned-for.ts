import type { V1Node } from '@kubernetes/client-node';
import type { ClusterSnapshot } from '../cluster/snapshot.js';
import { PROVISIONED_FOR_ANNOTATION } from '../extender/state.js';
import type { PredictionDecision } from '../prediction/predictor.js';
import { shareOf } from '../prediction/virtual-pods.js';
import type { SchedulingPod } from '../scheduling/scheduling-pod.js';

/**
 * Which new nodes were brought up for which workload's forecast, written on the
 * Node as headroom.dev/provisioned-for so the extender steers that workload's pods
 * onto them when they arrive (its +2 bonus), on every replica and across restarts.
 * A workload holding predicted pods worth n node-equivalents claims up to ceil(n)
 * empty nodes (no pods but DaemonSet ones) of its NodePool that its pods fit,
 * counting the empty nodes it already holds. Nodes in use are never relabelled. Pure.
 */

export interface ProvisionedForPatch {
  node: string;
  /** The whole new annotation value: the workloads, comma-separated. */
  owners: string[];
}

function ownersOf(node: V1Node | undefined): string[] {
  const v = node?.metadata?.annotations?.[PROVISIONED_FOR_ANNOTATION];
  return v ? v.split(',').map((s) => s.trim()).filter(Boolean) : [];
}

export function provisionedForPatches(
  snapshot: ClusterSnapshot, nodes: readonly V1Node[], decisions: readonly PredictionDecision[], predicted: readonly SchedulingPod[],
): ProvisionedForPatch[] {
  const byName = new Map(nodes.map((n) => [n.metadata?.name ?? '', n]));
  const groups = new Map(snapshot.groups.map((g) => [g.id, g]));
  const templates = new Map<string, SchedulingPod>();
  for (const p of predicted) if (!templates.has(p.equivalenceKey)) templates.set(p.equivalenceKey, p);
  const owners = new Map<string, string[]>();
  const empty = snapshot.nodes.filter((n) => !n.inFlight && !n.unschedulable && n.groupId && n.pods.every((p) => p.owner?.startsWith('DaemonSet/')))
    .sort((a, b) => (a.name < b.name ? -1 : 1));
  for (const n of empty) owners.set(n.name, ownersOf(byName.get(n.name)));
  const changed = new Set<string>();
  for (const d of [...decisions].sort((a, b) => (a.key < b.key ? -1 : 1))) {
    if (d.pods <= 0 || d.pool === undefined) continue;
    const template = templates.get(`Prediction/${d.key}`);
    if (!template) continue;
    const fits = empty.filter((n) => {
      const g = groups.get(n.groupId!);
      if (!g || g.nodePool !== d.pool) return false;
      return shareOf(template, { id: g.id, allocatable: n.allocatable, pricePerHour: g.pricePerHour, labels: n.labels, taints: n.taints }) !== undefined;
    });
    let wanted = Math.ceil(d.nodes - 1e-9) - fits.filter((n) => owners.get(n.name)!.includes(d.key)).length;
    for (const n of fits) {
      if (wanted <= 0) break;
      const list = owners.get(n.name)!;
      if (list.includes(d.key) || list.length > 0) continue;
      list.push(d.key);
      changed.add(n.name);
      wanted--;
    }
  }
  return [...changed].map((node) => ({ node, owners: owners.get(node)! }));
}
