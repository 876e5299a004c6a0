import type { ClusterSnapshot } from '../src/cluster/snapshot.js';
import { ffd } from '../src/packing/ffd.js';
import type { Plan } from '../src/packing/plan.js';
import { type SolveOptions, solve } from '../src/packing/solve.js';

/** What the main thread posts to a solver worker (structured clone). */
export interface SolveTask {
  snapshot: ClusterSnapshot;
  options?: SolveOptions;
  /** `ffd` runs the first-fit-decreasing baseline (the simulator's reactive policy, the benchmark). */
  solver?: 'headroom' | 'ffd';
}

/** Piscina worker entry: one pure solve per task. */
export default function run(task: SolveTask): Plan {
  return task.solver === 'ffd' ? ffd(task.snapshot, task.options) : solve(task.snapshot, task.options);
}
