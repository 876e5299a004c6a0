import { expect } from 'chai';
import { BUILTIN_TRACES, DATACENTER_TRACES, builtinTraceKind, loadBuiltinTrace } from '../../../src/sim/builtin.js';
import { runParallel } from '../../../src/sim/parallel.js';
import type { TraceResult } from '../../../src/sim/result.js';

/**
 * The regression gate (issue 24): the simulator is deterministic for a seed, so the
 * built-in suite's targets are asserted here, in `npm test`, for seed 1, and the
 * forecastable targets on the three datacenter traces (real demand curves, 45 days). A change that
 * loses one fails CI instead of going unnoticed (multi-day went from 10.7% of reactive's
 * pending to 68.5% once, and nothing said so).
 *
 * Targets, Headroom at its defaults against the other policies of the same run:
 * - forecastable traces (noisy variants included): pending <= 20% of reactive's, cost
 *   <= 1.15x reactive's and <= 1.10x the oracle's;
 * - guards (noise, flash-burst): pending <= reactive's, cost <= 1.05x reactive's;
 * - no baseline (reactive, periodic) waits less at <= 1.05x Headroom's cost.
 * Where a target is not met yet, MISSES names it with today's figure as its bound, so
 * it cannot get worse either; the closing note of the issue lists them.
 */

const SEED = 1;

/** trace/check -> the bound today's figure sets where the target is not met yet. */
const MISSES: Record<string, number> = {
  // 1.172 and 1.161 when the gate landed, 1.162 and 1.152 on 2026-12-03; 1.107 of the oracle
  // with multi-node replace on by default (ADR 0150), which brought the reactive ratio under its target;
  // 1.103 since consolidation looks again when the forecast's spare falls (consolidation-due.ts).
  'multi-day-noisy/cost/oracle': 1.11,
  // 1.106 (was 1.089) since empty nodes go in bulk (issue 28), 1.102 with multi-node replace.
  // Measured 2026-12-07: Headroom without prediction is already 1.04-1.07x the oracle from
  // the third hour on, and the spare adds 5-6%; a 2 min consolidation delay after add (5 min
  // by default) brings this trace to 1.067 but `diurnal`'s pending over its 20% (docs/simulation.md).
  'diurnal-noisy/cost/oracle': 1.11,
};

interface Check {
  name: string;
  value: number;
  target: number;
}

function checksOf(r: TraceResult): Check[] {
  const s = (p: string) => r.policies[p as keyof typeof r.policies]!.summary;
  const h = s('headroom');
  const reactive = s('reactive');
  const oracle = s('oracle');
  const ratio = (a: number, b: number) => (b === 0 ? (a === 0 ? 0 : Infinity) : a / b);
  const out: Check[] = [];
  if (builtinTraceKind(r.trace) === 'forecastable') {
    out.push({ name: 'pending/reactive', value: ratio(h.pendingPodSeconds, reactive.pendingPodSeconds), target: 0.2 });
    out.push({ name: 'cost/reactive', value: ratio(h.cost, reactive.cost), target: 1.15 });
    out.push({ name: 'cost/oracle', value: ratio(h.cost, oracle.cost), target: 1.1 });
  } else {
    out.push({ name: 'pending/reactive', value: ratio(h.pendingPodSeconds, reactive.pendingPodSeconds), target: 1 });
    out.push({ name: 'cost/reactive', value: ratio(h.cost, reactive.cost), target: 1.05 });
  }
  for (const b of ['reactive', 'periodic']) {
    const p = s(b);
    // A baseline that waits less at a similar price beats Headroom: 0 if none does, else its cost ratio (target: above 1.05).
    const beats = p.pendingPodSeconds < h.pendingPodSeconds && p.cost <= 1.05 * h.cost;
    out.push({ name: `${b} beats headroom`, value: beats ? 1 : 0, target: 0 });
  }
  return out;
}

/** Runs the traces at SEED with every policy, printing the figures behind every check (a closing note quotes them). */
async function runSuite(traces: readonly string[]): Promise<TraceResult[]> {
  const results = await runParallel(traces.map((t) => loadBuiltinTrace(t)), { seed: SEED, policies: ['headroom', 'reactive', 'periodic', 'oracle'] });
  for (const r of results) {
    const cell = (p: string) => {
      const s = r.policies[p as keyof typeof r.policies]!.summary;
      return `${p} ${Math.round(s.pendingPodSeconds)} / ${s.cost.toFixed(2)}`;
    };
    console.log(`      [measure] seed ${SEED} ${r.trace}: pending pod-s / cost: ${['headroom', 'reactive', 'periodic', 'oracle'].map(cell).join(', ')}`);
  }
  return results;
}

/** One test per trace: every check within its target, or within its MISSES bound. */
function assertTargets(traces: readonly string[], results: () => TraceResult[]): void {
  for (const trace of traces) {
    it(`${trace} (${builtinTraceKind(trace)})`, () => {
      const r = results().find((x) => x.trace === trace)!;
      expect(r, trace).to.not.equal(undefined);
      const failures: string[] = [];
      for (const c of checksOf(r)) {
        const key = `${trace}/${c.name}`;
        const bound = MISSES[key] ?? c.target;
        if (!(c.value <= bound + 1e-9)) failures.push(`${key}: ${c.value.toFixed(3)} > ${bound}${key in MISSES ? ' (known miss, bound at its figure)' : ''}`);
      }
      expect(failures, failures.join('; ')).to.deep.equal([]);
    });
  }
}

describe('sim: the datacenter traces (real demand curves) meet the forecastable targets at seed 1 (regression gate)', function () {
  this.timeout(900_000);
  let results: TraceResult[];

  before(async function () {
    this.timeout(900_000);
    results = await runSuite(DATACENTER_TRACES);
  });

  assertTargets(DATACENTER_TRACES, () => results);
});

describe('sim: the built-in suite meets its targets at seed 1 (regression gate)', function () {
  this.timeout(900_000);
  let results: TraceResult[];

  before(async function () {
    this.timeout(900_000);
    results = await runSuite(BUILTIN_TRACES);
  });

  assertTargets(BUILTIN_TRACES, () => results);

  it('every known miss is still a miss (a met target leaves MISSES)', () => {
    for (const [key, bound] of Object.entries(MISSES)) {
      const [trace, ...rest] = key.split('/');
      const name = rest.join('/');
      const c = checksOf(results.find((x) => x.trace === trace)!).find((x) => x.name === name);
      expect(c, key).to.not.equal(undefined);
      expect(c!.value, `${key} now meets ${c!.target}: remove it from MISSES`).to.be.greaterThan(c!.target);
      expect(bound).to.be.greaterThan(c!.target);
    }
  });
});
