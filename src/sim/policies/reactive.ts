import type { ClusterSnapshot } from '../../cluster/snapshot.js';
import type { NodePoolDisruption } from '../../api/nodepool.js';
import type { ConsolidationOptions } from '../../disruption/consolidation.js';
import { Disruptor } from '../../disruption/disruptor.js';
import type { Plan } from '../../packing/plan.js';
import { Batcher, DEFAULT_BATCH, type BatcherOptions } from '../../provisioning/batcher.js';
import type { Policy, PolicyContext, PolicyFactory } from '../policy.js';

export interface ReactiveOptions {
  /** The packer: first-fit-decreasing (src/packing/ffd.ts), as Karpenter packs. */
  pack: (snapshot: ClusterSnapshot) => Plan;
  /** Karpenter's batching window (the real Batcher). Default 1 s idle, 10 s max. */
  batch?: BatcherOptions;
  /** consolidateAfter. Default 30 s, the same as headroom's, so the two differ in how they consolidate, not when. */
  consolidateAfterMs?: number;
  /** How often the disruption loop runs. Default 10 s. */
  disruptionEveryMs?: number;
  /** false: empty nodes only (Karpenter's WhenEmpty). */
  consolidation?: ConsolidationOptions | false;
}

/**
 * Karpenter's defaults, for consolidation: WhenEmptyOrUnderutilized with no score
 * (any saving is taken), candidates least disruption first, multi-node actions of up
 * to 100 nodes that may be replaced by one cheaper node, then single-node delete or
 * replace, under a 10% budget.
 */
/** Karpenter's default budget: 10% of a pool's nodes at once, for every reason (empty nodes too). */
export const KARPENTER_BUDGETS: NodePoolDisruption['budgets'] = [{ nodes: '10%' }];

export const KARPENTER_CONSOLIDATION: ConsolidationOptions = {
  minScore: 0, maxMultiNode: 100, multiNodeReplace: true, order: 'disruption', maxSingleNodeChecks: Number.POSITIVE_INFINITY, keepRunToCompletion: false,
};

/**
 * Just-in-time provisioning like Karpenter: new Unschedulable pods open a batch
 * window (the controller's own Batcher: closes 1 s after the last new pod, or 10 s
 * after it opened); the batch is packed first-fit-decreasing onto existing,
 * in-flight and new nodes, and the groups are scaled. Scale-down is the controller's
 * own Disruptor with Karpenter's consolidation settings (KARPENTER_CONSOLIDATION) and
 * the FFD packer as its what-if: the two policies share the machinery, and differ in
 * the packer, the candidate order, the score and multi-node replacement.
 */
export function reactivePolicy(opts: ReactiveOptions): PolicyFactory {
  return (ctx: PolicyContext): Policy => {
    const { cluster, clock } = ctx;
    let seen = cluster.unschedulableMarks;

    const batcher = new Batcher(clock, opts.batch ?? DEFAULT_BATCH, async () => {
      const snapshot = ctx.snapshot();
      if (snapshot.pendingPods.length === 0) return;
      const plan = opts.pack(snapshot);
      for (const s of plan.scaleUps) {
        if (s.to <= s.from) continue;
        await cluster.scaleTo({ kind: s.kind, namespace: s.namespace, name: s.name }, s.from, s.to, 'reactive: pending pods');
      }
    });

    const unsubscribe = cluster.onChange((kind) => {
      if (kind !== 'pods') return;
      const marks = cluster.unschedulableMarks;
      if (marks === seen) return;
      seen = marks;
      batcher.trigger();
    });

    const consolidateAfterMs = opts.consolidateAfterMs ?? 30_000;
    const disruptor = new Disruptor({ state: cluster, actuator: cluster, nodes: cluster, clock, solve: (s) => opts.pack(s) }, {
      intervalMs: opts.disruptionEveryMs ?? 10_000,
      defaultConsolidateAfterMs: consolidateAfterMs,
      defaultConsolidationPolicy: opts.consolidation === false ? 'WhenEmpty' : 'WhenEmptyOrUnderutilized',
      consolidation: opts.consolidation ?? KARPENTER_CONSOLIDATION,
      defaultBudgets: KARPENTER_BUDGETS,
      maxExpiredPerPass: 0,
    });
    disruptor.start();

    return {
      stop() {
        unsubscribe();
        void batcher.stop();
        void disruptor.stop();
      },
      notes: opts.consolidation === false ? ['scale-down: empty nodes only (WhenEmpty)'] : [],
    };
  };
}
