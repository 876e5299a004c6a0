import { buildSnapshot } from '../cluster/build-snapshot.js';
import type { ClusterObjects } from '../cluster/objects.js';
import { SnapshotBuilder } from '../cluster/snapshot-builder.js';
import type { ClusterSnapshot } from '../cluster/snapshot.js';
import { ffd } from '../packing/ffd.js';
import { solve } from '../packing/solve.js';
import type { PolicyFactory } from './policy.js';
import { SIM_DISRUPTION, SIM_PREDICTION, headroomPolicy } from './policies/headroom.js';
import { oraclePolicy } from './policies/oracle.js';
import { periodicPolicy } from './policies/periodic.js';
import { reactivePolicy } from './policies/reactive.js';
import { POLICY_NAMES, type PolicyName } from './result.js';

/** The capacity model's snapshot of the simulated cluster (strict: a trace bug should fail loudly). */
export function simulationSnapshot(objects: ClusterObjects): ClusterSnapshot {
  return buildSnapshot(objects);
}

/**
 * simulationSnapshot for one run (a fresh one per run: it remembers the last build):
 * the controller's SnapshotBuilder, so a baseline policy's build after a few pods
 * changed classifies only those, as Headroom's own loops do. Why: the baselines built
 * every snapshot from scratch, a seventh of their CPU. Its builds are non-strict, so
 * pods are placed incrementally, but an invalid object still fails the run.
 */
export function simulationSnapshots(): (objects: ClusterObjects) => ClusterSnapshot {
  const builder = new SnapshotBuilder();
  return (objects) => builder.build(objects, {
    strict: false,
    onIssue: (issue) => {
      if (issue.severity === 'error') throw new Error(`simulation snapshot: ${issue.message}`);
    },
  });
}

export interface PolicySettings {
  /** False runs headroom without prediction (`simulate --no-prediction`), to measure consolidation on its own. */
  prediction: boolean;
}

/** The policies as the simulator runs them. */
export function policyFactory(name: PolicyName, settings: PolicySettings = { prediction: true }): PolicyFactory {
  switch (name) {
    case 'headroom':
      return headroomPolicy({ solve: (s) => solve(s), disruption: SIM_DISRUPTION, prediction: settings.prediction ? SIM_PREDICTION : false });
    case 'reactive':
      return reactivePolicy({ pack: (s) => ffd(s) });
    case 'periodic':
      return periodicPolicy({ pack: (s) => ffd(s) });
    case 'oracle':
      return oraclePolicy({ pack: (s) => ffd(s) });
  }
}

/** Every policy with the default settings. */
export const POLICY_FACTORIES = Object.fromEntries(POLICY_NAMES.map((n) => [n, policyFactory(n)])) as Record<PolicyName, PolicyFactory>;
