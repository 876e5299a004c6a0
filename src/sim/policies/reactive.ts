import type { ClusterSnapshot } from '../../cluster/snapshot.js';
import type { Plan } from '../../packing/plan.js';
import type { Policy, PolicyContext, PolicyFactory } from '../policy.js';

export interface ReactiveOptions {
  /** The packer: first-fit-decreasing (src/packing/ffd.ts), as Karpenter packs. */
  pack: (snapshot: ClusterSnapshot) => Plan;
  batchIdleMs?: number;
  batchMaxMs?: number;
  /** How long a node must be empty before it is removed (Karpenter's consolidateAfter with WhenEmpty). */
  emptyAfterMs?: number;
  /** How often the disruption loop looks for empty nodes. */
  disruptionEveryMs?: number;
}

/**
 * Just-in-time provisioning like Karpenter: new Unschedulable pods open a batch
 * window that closes after 1 s without new pods or 10 s in total; the batch is
 * packed first-fit-decreasing onto existing, in-flight and new nodes, and the
 * groups are scaled. A node that has been empty for `emptyAfterMs` is removed.
 */
export function reactivePolicy(opts: ReactiveOptions): PolicyFactory {
  const idleMs = opts.batchIdleMs ?? 1000;
  const maxMs = opts.batchMaxMs ?? 10_000;
  const emptyAfter = opts.emptyAfterMs ?? 30_000;
  const every = opts.disruptionEveryMs ?? 10_000;
  return (ctx: PolicyContext): Policy => {
    const { cluster, clock } = ctx;
    let idle: (() => void) | undefined;
    let max: (() => void) | undefined;
    let seen = cluster.unschedulableMarks;
    let stopped = false;

    const closeBatch = async () => {
      idle?.();
      max?.();
      idle = max = undefined;
      if (stopped) return;
      const snapshot = ctx.snapshot();
      if (snapshot.pendingPods.length === 0) return;
      const plan = opts.pack(snapshot);
      for (const s of plan.scaleUps) {
        if (s.to <= s.from) continue;
        await cluster.scaleTo({ kind: s.kind, namespace: s.namespace, name: s.name }, s.from, s.to, 'reactive: pending pods');
      }
    };

    const unsubscribe = cluster.onChange((kind) => {
      if (kind !== 'pods' || stopped) return;
      const marks = cluster.unschedulableMarks;
      if (marks === seen) return;
      seen = marks;
      idle?.();
      idle = clock.setTimer(idleMs, () => void closeBatch());
      max ??= clock.setTimer(maxMs, () => void closeBatch());
    });

    let loop: () => void = () => {};
    const disrupt = async () => {
      const now = clock.now();
      for (const node of [...cluster.readyNodes()]) {
        if (node.emptySince === undefined || now - node.emptySince < emptyAfter) continue;
        await cluster.deleteMachine(node.group.ref, { namespace: node.group.ref.namespace, name: node.machine.name, nodeName: node.name }, 'reactive: empty');
      }
      loop = clock.setTimer(every, () => void disrupt());
    };
    loop = clock.setTimer(every, () => void disrupt());

    return {
      stop() {
        stopped = true;
        unsubscribe();
        idle?.();
        max?.();
        loop();
      },
    };
  };
}
