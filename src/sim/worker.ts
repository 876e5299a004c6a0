import type { MessagePort } from 'node:worker_threads';
import { policyFactory, simulationSnapshots } from './policies.js';
import type { PolicyName, PolicyRun } from './result.js';
import { runPolicy } from './run.js';
import type { Trace } from './trace.js';

/** One trace x policy job for a simulation worker (structured clone). */
export interface SimulationTask {
  trace: Trace;
  policy: PolicyName;
  seed: number;
  /** False: headroom runs without prediction. Default true. */
  prediction?: boolean;
  /** Receives `{ fraction }` now and then. */
  progress?: MessagePort;
}

/** Piscina worker entry: runs one policy over one trace, exactly as in-process. */
export default async function run(task: SimulationTask): Promise<PolicyRun> {
  try {
    return await runPolicy(task.trace, policyFactory(task.policy, { prediction: task.prediction ?? true }), { seed: task.seed, policies: [], buildSnapshot: simulationSnapshots() },
      (fraction) => task.progress?.postMessage({ fraction }));
  } finally {
    task.progress?.close();
  }
}
