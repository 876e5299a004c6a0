import type { Plan } from '../../packing/plan.js';
import type { ClusterSnapshot } from '../../cluster/snapshot.js';
import { Disruptor, type DisruptorOptions } from '../../disruption/disruptor.js';
import { Provisioner, type ProvisionerOptions } from '../../provisioning/provisioner.js';
import type { PolicyContext, PolicyFactory } from '../policy.js';

export interface HeadroomOptions {
  /** Headroom's solver (src/packing/solve.ts); a parameter so tests can count or swap it. */
  solve: (snapshot: ClusterSnapshot) => Plan;
  provisioner?: ProvisionerOptions;
  /** The disruption loop's options; false runs without scale-down. */
  disruption?: DisruptorOptions | false;
}

/**
 * Headroom itself: the controller's Provisioner (batcher -> buildSnapshot -> solve
 * -> actuate) and Disruptor (empty-node removal, safe expiry), unchanged, with the
 * simulated cluster as their ClusterStateSource and CapiActuator and the virtual
 * clock as their Clock.
 * Not yet included, because the code does not exist yet: consolidation of
 * underutilised nodes and prediction (src/prediction).
 */
export function headroomPolicy(opts: HeadroomOptions): PolicyFactory {
  return (ctx: PolicyContext) => {
    const deps = { state: ctx.cluster, actuator: ctx.cluster, clock: ctx.clock, solve: opts.solve };
    const provisioner = new Provisioner(deps, opts.provisioner ?? {});
    provisioner.start();
    const disruptor = opts.disruption === false ? undefined : new Disruptor(deps, opts.disruption ?? {});
    disruptor?.start();
    return {
      stop: () => {
        void provisioner.stop();
        void disruptor?.stop();
      },
      notes: [
        disruptor ? 'scale-down: empty nodes only (no consolidation of underutilised nodes yet)' : 'no scale-down: disruption disabled',
        'no prediction: src/prediction does not exist yet',
      ],
    };
  };
}
