import type { Plan } from '../../packing/plan.js';
import type { ClusterSnapshot } from '../../cluster/snapshot.js';
import { Provisioner, type ProvisionerOptions } from '../../provisioning/provisioner.js';
import type { PolicyContext, PolicyFactory } from '../policy.js';

export interface HeadroomOptions {
  /** Headroom's solver (src/packing/solve.ts); a parameter so tests can count or swap it. */
  solve: (snapshot: ClusterSnapshot) => Plan;
  provisioner?: ProvisionerOptions;
}

/**
 * Headroom itself: the controller's Provisioner (batcher -> buildSnapshot -> solve
 * -> actuate), unchanged, with the simulated cluster as its ClusterStateSource and
 * CapiActuator and the virtual clock as its Clock.
 * Not yet included, because the code does not exist yet: disruption (scale-down /
 * consolidation, src/disruption) and prediction (src/prediction).
 */
export function headroomPolicy(opts: HeadroomOptions): PolicyFactory {
  return (ctx: PolicyContext) => {
    const provisioner = new Provisioner(
      { state: ctx.cluster, actuator: ctx.cluster, clock: ctx.clock, solve: opts.solve },
      opts.provisioner ?? {},
    );
    provisioner.start();
    return {
      stop: () => void provisioner.stop(),
      notes: ['no scale-down: src/disruption does not exist yet', 'no prediction: src/prediction does not exist yet'],
    };
  };
}
