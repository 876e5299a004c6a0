import { buildSnapshot } from '../cluster/build-snapshot.js';
import type { ClusterObjects } from '../cluster/objects.js';
import type { ClusterSnapshot } from '../cluster/snapshot.js';
import { ffd } from '../packing/ffd.js';
import { solve } from '../packing/solve.js';
import type { PolicyFactory } from './policy.js';
import { SIM_PREDICTION, headroomPolicy } from './policies/headroom.js';
import { periodicPolicy } from './policies/periodic.js';
import { reactivePolicy } from './policies/reactive.js';
import type { PolicyName } from './result.js';

/** The capacity model's snapshot of the simulated cluster (strict: a trace bug should fail loudly). */
export function simulationSnapshot(objects: ClusterObjects): ClusterSnapshot {
  return buildSnapshot(objects);
}

export const POLICY_FACTORIES: Record<PolicyName, PolicyFactory> = {
  headroom: headroomPolicy({ solve: (s) => solve(s), prediction: SIM_PREDICTION }),
  reactive: reactivePolicy({ pack: (s) => ffd(s) }),
  periodic: periodicPolicy({ pack: (s) => ffd(s) }),
};
