import { hasDisruptionTaint } from '../../api/disruption-taint.js';
import type { LogSubject } from '../../api/log.js';
import type { ClusterObjects } from '../../cluster/objects.js';
import type { ClusterSnapshot } from '../../cluster/snapshot.js';
import type { DisruptionNodePort } from './node-port.js';

/**
 * Our disruption taint on nodes no removal of ours is working on (a pass cut short, a
 * previous leader's): found on each pass and taken back, so a node is never left
 * unschedulable by a removal that no longer happens.
 */

/** Nodes carrying our taint for which `working(name)` is false. */
export function orphanTaints(objects: ClusterObjects, working: (node: string) => boolean): string[] {
  const out: string[] = [];
  for (const n of objects.nodes) {
    const name = n.metadata?.name;
    if (name && hasDisruptionTaint(n.spec?.taints) && !working(name)) out.push(name);
  }
  return out;
}

/** Takes our taint back from orphaned nodes, unless their Machine is on its way out already. */
export async function untaintOrphans(
  snapshot: ClusterSnapshot, orphans: readonly string[], nodes: DisruptionNodePort, log: (msg: string, about?: LogSubject) => void,
): Promise<void> {
  const byName = new Map(snapshot.nodes.map((n) => [n.name, n]));
  for (const name of orphans) {
    if (byName.get(name)?.machine?.leaving) continue;
    try {
      await nodes.untaintNode(name);
      log(`untainted node ${name}: no removal of it is under way`, { kind: 'Node', name });
    } catch (err) {
      log(`untainting node ${name} failed: ${(err as Error).message}`, { kind: 'Node', name });
    }
  }
}
