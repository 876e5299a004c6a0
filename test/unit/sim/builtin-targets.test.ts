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

/**
 * trace/check -> the bound today's figure sets where the issue's target is not met yet.
 * Empty since 2026-12-07: the noisy traces' cost against the oracle (multi-day-noisy 1.103,
 * diurnal-noisy 1.102 at seed 1) came to 1.044 and 1.075 when the delay after add stopped
 * counting capacity added for spare alone (ADR 0152).
 */
const MISSES: Record<string, number> = {};

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

  it('MISSES names exactly the checks that miss their target (a met target leaves it)', () => {
    const checks = results.flatMap((r) => checksOf(r).map((c) => ({ key: `${r.trace}/${c.name}`, ...c })));
    expect(checks.length).to.be.greaterThan(BUILTIN_TRACES.length);
    for (const key of Object.keys(MISSES)) expect(checks.map((c) => c.key), `MISSES names an unknown check: ${key}`).to.include(key);
    for (const c of checks) {
      expect(c.key in MISSES, `${c.key}: ${c.value.toFixed(3)} against ${c.target}${c.key in MISSES ? ': now met, remove it from MISSES' : ''}`).to.equal(c.value > c.target + 1e-9);
      if (c.key in MISSES) expect(MISSES[c.key]).to.be.greaterThan(c.target);
    }
  });
});
