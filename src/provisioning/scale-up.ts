import type { ActionEvents, PodRef } from '../capi/action-events.js';
import type { CapiActuator, NodeGroupRef, ScaleResult } from '../capi/actuator.js';
import type { ClusterSnapshot } from '../cluster/snapshot.js';
import type { ClusterStateSource } from '../cluster/state.js';
import type { Plan } from '../packing/plan.js';
import type { Log } from '../api/log.js';
import type { CycleReport } from './cycle-report.js';
import { enforceLimits } from './limits.js';
import { countPoolMachines, type Observation } from './observe-writes.js';
import { checkTerm } from './solve-deadline.js';
import { standaloneMachineName, type StandaloneGroup } from './standalone.js';

export interface ScaleUpContext {
  state: ClusterStateSource;
  actuator: CapiActuator;
  /** Events on the pods a scale-up was for; none in the simulator. */
  events: ActionEvents | undefined;
  term: AbortSignal | undefined;
  stats: { scaleUps: number; errors: number };
  log: Log;
  /**
   * Called just before a scale-up for pending pods is written (write-ahead: the record is
   * kept, and may be stored, before the nodes it explains can exist); returns what to
   * call if the write then added nothing. Judged in later cycles.
   */
  remember?: (groupId: string, pods: readonly PodRef[]) => Promise<() => void>;
}

/**
 * Carries out a plan's scale-ups, after max sizes and NodePool limits are re-checked
 * on the fresh snapshot (enforceLimits): scale subresource writes for node groups,
 * standalone Machines for NodePools without one. Serial on purpose: one group at a
 * time, each re-read before it is written, the term checked before every write.
 * Fills report.scaleUps; returns the writes the next cycle must see.
 */
export async function executeScaleUps(
  ctx: ScaleUpContext, snapshot: ClusterSnapshot, plan: Plan, standalone: ReadonlyMap<string, StandaloneGroup>, report: CycleReport,
): Promise<Observation[]> {
  const { state, actuator } = ctx;
  const podsByGroup = new Map<string, PodRef[]>();
  const podByKey = new Map(snapshot.pendingPods.map((p) => [p.key, p]));
  for (const pl of plan.placements) {
    if (!('group' in pl)) continue;
    const p = podByKey.get(pl.pod);
    if (!p || p.predicted) continue;
    let list = podsByGroup.get(pl.group);
    if (!list) podsByGroup.set(pl.group, (list = []));
    list.push({ namespace: p.namespace, name: p.name, uid: p.uid });
  }

  const written: Observation[] = [];
  const poolOf = new Map(snapshot.groups.map((g) => [g.id, g.nodePool]));
  for (const up of enforceLimits(snapshot, plan.scaleUps)) {
    const id = `${up.kind}/${up.namespace}/${up.name}`;
    const group: NodeGroupRef = { kind: up.kind, namespace: up.namespace, name: up.name };
    const pods = podsByGroup.get(id) ?? [];
    const reason = `${pods.length} pending pod(s)${up.trimmedBy ? `; trimmed from ${up.requestedTo} by ${up.trimmedBy}` : ''}`;
    const nodePool = poolOf.get(id);
    const entry: CycleReport['scaleUps'][number] = { ...up, ...(nodePool ? { nodePool } : {}), cause: pods.length > 0 ? 'provisioned' : 'predicted' };
    const pool = standalone.get(id);
    try {
      if (pool) {
        // Standalone Machines: create what the pool still lacks, counted on fresh state
        // (like max(current, to) for a scale subresource).
        const current = countPoolMachines(state.objects(), pool.namespace, pool.nodePool);
        const first = Math.max(current, up.from);
        const create = Math.max(0, up.to - first);
        const forget = create > 0 && pods.length > 0 ? await ctx.remember?.(id, pods) : undefined;
        for (let i = 0; i < create; i++) {
          checkTerm(ctx.term);
          const name = standaloneMachineName(pool.nodePool, pool.machines, first + i);
          await actuator.createMachine({ name, nodePool: pool.nodePool, namespace: pool.namespace, clusterName: pool.clusterName, reason });
        }
        entry.result = { replicas: Math.max(current, up.from) + create, written: create > 0 };
        entry.added = create;
        if (create > 0) {
          ctx.stats.scaleUps++;
          written.push({ pool: { namespace: pool.namespace, name: pool.nodePool }, replicas: entry.result.replicas });
        } else {
          forget?.();
        }
        ctx.events?.notifyPods(pods, {
          type: 'Normal', reason: 'TriggeredScaleUp', action: 'CreateMachine',
          note: `pod triggered creation of ${create} Machine(s) for NodePool ${pool.nodePool}`,
        });
        report.scaleUps.push(entry);
        continue;
      }
      checkTerm(ctx.term);
      const forget = up.to > up.from && pods.length > 0 ? await ctx.remember?.(id, pods) : undefined;
      let result: ScaleResult;
      try {
        result = await actuator.scaleTo(group, up.from, up.to, reason);
      } catch (err) {
        forget?.();
        throw err;
      }
      entry.result = result;
      entry.added = result.written ? Math.max(0, result.replicas - up.from) : 0;
      if (result.written) {
        ctx.stats.scaleUps++;
        written.push({ group, replicas: result.replicas });
      }
      if (entry.added === 0) forget?.();
      ctx.events?.notifyPods(pods, {
        type: 'Normal', reason: 'TriggeredScaleUp', action: 'ScaleUp',
        note: `pod triggered scale-up: ${id} ${up.from} -> ${result.replicas}`,
      });
    } catch (err) {
      checkTerm(ctx.term);
      entry.error = (err as Error).message;
      ctx.stats.errors++;
      ctx.log(`scale-up of ${id} failed: ${entry.error}`, group);
    }
    report.scaleUps.push(entry);
  }
  return written;
}
