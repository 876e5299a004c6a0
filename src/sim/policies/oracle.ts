import type { ClusterSnapshot } from '../../cluster/snapshot.js';
import { Disruptor } from '../../disruption/disruptor.js';
import type { Plan } from '../../packing/plan.js';
import { Batcher, DEFAULT_BATCH } from '../../provisioning/batcher.js';
import { templatePods } from '../../provisioning/template-pods.js';
import type { SchedulingPod } from '../../scheduling/scheduling-pod.js';
import { FutureDemand, upperBound } from '../future-demand.js';
import type { Policy, PolicyContext, PolicyFactory } from '../policy.js';
import { KARPENTER_BUDGETS, KARPENTER_CONSOLIDATION } from './reactive.js';

export interface OracleOptions {
  /** The packer: reactive's first-fit-decreasing, so the two differ only in what they know. */
  pack: (snapshot: ClusterSnapshot) => Plan;
  /** consolidateAfter, as reactive's. Default 30 s. */
  consolidateAfterMs?: number;
  /** How often the disruption loop runs, as reactive's. Default 10 s. */
  disruptionEveryMs?: number;
}

/**
 * The limit: a policy that reads the trace's future (docs/adr/0136-oracle-policy.md).
 * For every time c at which demand will rise, it looks at c minus the longest boot
 * any group can draw, packs the pods that will exist by c onto the cluster (FFD, as
 * reactive), and asks each scale-up exactly one boot time before c: the boot time
 * the group's next Machines will really draw. So each pod finds a Ready node when it
 * is created. Nodes are removed by reactive's Disruptor (Karpenter's consolidation),
 * which keeps the capacity that pods created within the next boot time will use.
 * Pods left pending anyway (the scheduler placing differently from the packer) are
 * provisioned for as reactive does.
 */
export function oraclePolicy(opts: OracleOptions): PolicyFactory {
  return (ctx: PolicyContext): Policy => {
    const { cluster, clock, trace, seed } = ctx;
    const start = clock.now();
    const future = new FutureDemand(trace, seed);
    const horizonMs = Math.max(...trace.nodeGroups.map((g) => upperBound(g.bootDelay)));
    const pods = futurePodsOf(future);
    let stopped = false;

    const scaleUp = async (plan: Plan, reason: string, deadline?: number) => {
      for (const s of plan.scaleUps) {
        if (s.to <= s.from) continue;
        const ref = { kind: s.kind, namespace: s.namespace, name: s.name };
        if (deadline !== undefined) {
          // Ask one boot time ahead: the longest of the boot delays these Machines will draw.
          const g = cluster.group(ref);
          let bootMs = 0;
          for (let i = 0; i < s.to - s.from; i++) bootMs = Math.max(bootMs, g.bootDelay.get(g.created + i));
          const askAt = Math.floor(deadline - bootMs);
          // Whole milliseconds: a timer for a fraction of one could land a hair early and defer again.
          if (askAt > clock.now() - start) {
            later(askAt, deadline);
            continue;
          }
        }
        await cluster.scaleTo(ref, s.from, s.to, reason);
      }
    };

    // Capacity for the pods that will exist by `deadline` (ms from the start).
    const prepare = async (deadline: number) => {
      if (stopped) return;
      const now = clock.now() - start;
      const extra = pods(now, deadline);
      if (extra.length === 0) return;
      const snapshot = ctx.snapshot();
      await scaleUp(opts.pack({ ...snapshot, pendingPods: [...snapshot.pendingPods, ...extra] }), 'oracle: demand one boot time ahead', deadline);
    };

    const deferred = new Set<string>();
    const later = (at: number, deadline: number) => {
      const key = `${at}/${deadline}`;
      if (deferred.has(key)) return;
      deferred.add(key);
      clock.setTimer(Math.max(0, at - (clock.now() - start)), () => {
        deferred.delete(key);
        void prepare(deadline);
      });
    };

    // One timer at a time walks the rises: each is looked at one longest boot ahead.
    let next = 0;
    let cancelWalk: (() => void) | undefined;
    const walk = () => {
      const now = clock.now() - start;
      while (next < future.rises.length && future.rises[next]! - horizonMs <= now) void prepare(future.rises[next++]!);
      if (next < future.rises.length) cancelWalk = clock.setTimer(future.rises[next]! - horizonMs - now, walk);
    };
    // After the instant's own events (the workloads' first pods), so "now" is what the cluster shows.
    cancelWalk = clock.setTimer(0, walk);

    // Pods pending anyway: as reactive.
    let seen = cluster.unschedulableMarks;
    const batcher = new Batcher(clock, DEFAULT_BATCH, async () => {
      const snapshot = ctx.snapshot();
      if (snapshot.pendingPods.length === 0) return;
      await scaleUp(opts.pack(snapshot), 'oracle: pending pods');
    });
    const unsubscribe = cluster.onChange((kind) => {
      if (kind !== 'pods' || cluster.unschedulableMarks === seen) return;
      seen = cluster.unschedulableMarks;
      batcher.trigger();
    });

    const disruptor = new Disruptor({ state: cluster, actuator: cluster, nodes: cluster, clock, solve: (s) => opts.pack(s) }, {
      intervalMs: opts.disruptionEveryMs ?? 10_000,
      defaultConsolidateAfterMs: opts.consolidateAfterMs ?? 30_000,
      defaultConsolidationPolicy: 'WhenEmptyOrUnderutilized',
      consolidation: KARPENTER_CONSOLIDATION,
      defaultBudgets: KARPENTER_BUDGETS,
      maxExpiredPerPass: 0,
      extraPendingPods: () => {
        const now = clock.now() - start;
        return pods(now, now + horizonMs);
      },
    });
    disruptor.start();

    return {
      stop() {
        stopped = true;
        cancelWalk?.();
        unsubscribe();
        void batcher.stop();
        void disruptor.stop();
      },
      notes: [`reads the trace's future: looks ${Math.round(horizonMs / 1000)} s ahead (the longest boot), asks each node one boot time before its pods`],
    };
  };
}

/** The future pods of (from, to] as virtual pods of each workload's shape, stamped once per workload and count. */
function futurePodsOf(future: FutureDemand): (from: number, to: number) => SchedulingPod[] {
  const stamped = future.workloads.map(() => [] as SchedulingPod[]);
  let memo: { from: number; to: number; pods: SchedulingPod[] } | undefined;
  return (from, to) => {
    if (memo && memo.from === from && memo.to === to) return memo.pods;
    const out: SchedulingPod[] = [];
    future.extraPods(from, to).forEach((n, i) => {
      if (n <= 0) return;
      const have = stamped[i]!;
      const w = future.workloads[i]!;
      if (have.length < n) {
        have.push(...templatePods({
          template: w.template, namespace: w.namespace, baseName: `oracle-${w.name}`, uid: `oracle-${w.namespace}-${w.name}`,
          count: n - have.length, owner: `Oracle/${w.namespace}/${w.name}`, offset: have.length, demand: true,
        }));
      }
      for (let k = 0; k < n; k++) out.push(have[k]!);
    });
    memo = { from, to, pods: out };
    return out;
  };
}
