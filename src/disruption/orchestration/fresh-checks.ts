import { withoutDisruptionTaint } from '../../api/disruption-taint.js';
import type { ClusterObjects } from '../../cluster/objects.js';
import type { SnapshotBuilder } from '../../cluster/snapshot-builder.js';
import type { ClusterSnapshot } from '../../cluster/snapshot.js';
import type { ClusterStateSource } from '../../cluster/state.js';
import type { Clock } from '../../provisioning/clock.js';
import { pausedGroups } from '../../provisioning/provision-failures.js';
import { withStandalonePools } from '../../provisioning/standalone.js';
import type { SchedulingPod } from '../../scheduling/scheduling-pod.js';
import { DisruptionAllowance, type SettingsOf } from '../allowance.js';
import { rollingOutGroups } from '../capi-rollout.js';
import type { SolveSnapshot } from '../expiry.js';
import { PdbAllowance } from '../pdb.js';
import { podsToMove } from '../pods.js';
import type { Removal } from '../removal.js';
import { evaluateRemoval } from '../what-if.js';

/**
 * The re-checks of a removal on the freshest state, between its taint and its removal
 * (Karpenter's validation after the wait): budgets and min sizes, the what-if re-solved,
 * and cancellation when pending pods need the node after all. Each builds its own
 * snapshot from what the state source shows now, not the pass's.
 */

export interface FreshCheckDeps {
  state: ClusterStateSource;
  clock: Clock;
  solve: SolveSnapshot;
  snapshots: SnapshotBuilder;
  /** Predicted demand that the what-if keeps room for, as the pass did. */
  extraPendingPods?: ((objects: ClusterObjects) => readonly SchedulingPod[]) | undefined;
}

export class FreshChecks {
  constructor(private readonly deps: FreshCheckDeps) {}

  private snapshot(objects: ClusterObjects, extraPendingPods?: readonly SchedulingPod[]): ClusterSnapshot {
    const built = this.deps.snapshots.build(objects, { strict: false, ...(extraPendingPods?.length ? { extraPendingPods } : {}) });
    return withStandalonePools(built, objects).snapshot;
  }

  /**
   * Budgets and min sizes on the freshest state, for the re-check after the taint:
   * the pass's own nodes (`batch`) count when taken again, not as already disrupting
   * (`disrupting`: the removals of earlier passes still under way).
   */
  budgets(settingsOf: SettingsOf, disrupting: ReadonlySet<string>, batch: ReadonlySet<string>): (r: Removal) => string | undefined {
    const objects = this.deps.state.objects();
    const snapshot = this.snapshot(objects);
    const groups = new Map(snapshot.groups.map((g) => [g.id, g]));
    const nodes = new Map(snapshot.nodes.map((n) => [n.name, n]));
    const paused = pausedGroups(objects);
    const rolling = rollingOutGroups(objects.nodeGroups);
    const allowance = new DisruptionAllowance(snapshot, settingsOf, disrupting, batch, this.deps.clock.now(), new PdbAllowance(objects.podDisruptionBudgets));
    return (r) => {
      const group = groups.get(r.group.id);
      if (!group) return `${r.group.id} is no longer managed`;
      const pausedWhy = paused.get(group.id) ?? rolling.get(group.id);
      if (pausedWhy) return pausedWhy;
      const uids = new Set(r.podUids);
      const moved = (nodes.get(r.node)?.pods ?? []).filter((p) => uids.has(p.uid));
      const blocked = allowance.blocked(group, r.reason, moved);
      if (!blocked) allowance.take(group, r.reason, moved);
      return blocked?.why;
    };
  }

  /**
   * The delete what-if re-solved on the freshest state, for the nodes that passed the
   * re-check, as one set: pods bound elsewhere since the decision may have taken the room
   * the moved pods were to use. When it refuses, every node with pods to move stays
   * (nodes with none may still go: they move nothing).
   */
  async whatIf(removals: readonly Removal[]): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    const objects = this.deps.state.objects();
    const snapshot = this.snapshot(objects, this.deps.extraPendingPods?.(objects));
    const names = new Set(removals.map((r) => r.node));
    const moving = snapshot.nodes.filter((n) => names.has(n.name) && podsToMove(n).length > 0);
    if (moving.length === 0) return out;
    const baseline = snapshot.pendingPods.length > 0 ? await this.deps.solve(snapshot) : undefined;
    const what = await evaluateRemoval(snapshot, names, this.deps.solve, baseline);
    if (what.kind === 'delete') return out;
    const why = what.kind === 'refused' ? what.why : 'its pods would now need a new node';
    for (const n of moving) out.set(n.name, `the what-if re-solved on the fresh state refuses it: ${why}`);
    return out;
  }

  /**
   * Cancellation: why a node being drained must stay after all, or undefined. It must
   * when pods are pending (real ones, not forecasts) that no other existing or in-flight
   * node can take, and this node, untainted, would. Scale-ups do not count: capacity
   * that exists beats capacity that might come.
   */
  async neededByPending(node: string): Promise<string | undefined> {
    const built = this.snapshot(this.deps.state.objects());
    if (built.pendingPods.length === 0) return undefined;
    const existingOnly = { ...built, groups: built.groups.map((g) => ({ ...g, maxSize: Math.min(g.maxSize, g.replicas) })) };
    const without = await this.deps.solve(existingOnly);
    if (without.unschedulable.length === 0 && without.scaleUps.every((s) => s.to <= s.from)) return undefined;
    const back = {
      ...existingOnly,
      nodes: existingOnly.nodes.map((n) => (n.name === node ? { ...n, unschedulable: false, taints: withoutDisruptionTaint(n.taints) } : n)),
    };
    const withIt = await this.deps.solve(back);
    const onIt = withIt.placements.filter((p) => 'node' in p && p.node === node).length;
    return onIt > 0 ? `cancelled: ${onIt} pending pod(s) have no other place than this node` : undefined;
  }
}
