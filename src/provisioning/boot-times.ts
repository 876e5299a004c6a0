import type { ClusterObjects } from '../cluster/objects.js';
import type { ClusterSnapshot, NodeGroup } from '../cluster/snapshot.js';
import { type BootModel, MIN_BOOT_SAMPLES, bootSamples, observeBoot } from '../prediction/boot-horizon.js';
import { quantileOf } from '../prediction/forecast.js';

/**
 * How long each node group's Machines take to become Ready nodes, as the cluster has
 * shown it (Machine created -> Node Ready, the last BOOT_SAMPLES per group, the same
 * samples prediction learns its horizon from). The Provisioner writes the median into
 * the snapshot's groups (`NodeGroup.bootMs`) so the solver, between groups that cost
 * the same per unit of the pending demand, orders the one whose nodes arrive sooner:
 * the pods wait less for the same price. A group with fewer than MIN_BOOT_SAMPLES
 * boots seen has no bootMs, and no preference is made for or against it.
 */
export class BootTimes {
  private readonly models = new Map<string, BootModel>();
  /** Group object -> the copy carrying its bootMs, reused while both are unchanged (snapshot transfer ships only changed groups). */
  private readonly annotated = new WeakMap<NodeGroup, NodeGroup>();

  /** Records the boots visible in `objects` (each Machine once). */
  observe(objects: Pick<ClusterObjects, 'machines' | 'nodes'>): void {
    for (const s of bootSamples(objects.machines, objects.nodes)) {
      const model = this.models.get(s.groupId);
      const next = observeBoot(model, s.machine, s.ms);
      if (next !== model) this.models.set(s.groupId, next);
    }
  }

  /** The median observed boot of a group, when enough boots were seen. */
  medianMs(groupId: string): number | undefined {
    const samples = this.models.get(groupId)?.samples ?? [];
    if (samples.length < MIN_BOOT_SAMPLES) return undefined;
    return quantileOf(samples.map((s) => s.ms), 0.5);
  }

  /** `snapshot` with each group's observed median boot (groups without one are left as they are). */
  annotate(snapshot: ClusterSnapshot): ClusterSnapshot {
    let changed = false;
    const groups = snapshot.groups.map((g) => {
      const ms = this.medianMs(g.id);
      if (ms === undefined || ms === g.bootMs) return g;
      changed = true;
      const prev = this.annotated.get(g);
      if (prev?.bootMs === ms) return prev;
      const next = { ...g, bootMs: ms };
      this.annotated.set(g, next);
      return next;
    });
    return changed ? { ...snapshot, groups } : snapshot;
  }
}
