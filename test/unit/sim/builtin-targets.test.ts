import { expect } from 'chai';
import { BUILTIN_TRACES, DATACENTER_TRACES, builtinTraceKind, loadBuiltinTrace } from '../../../src/sim/builtin.js';
import { runParallel } from '../../../src/sim/parallel.js';
import type { TraceResult } from '../../../src/sim/result.js';

/**
 * The regression gate (issue 24): the simulator is deterministic for a seed, so the
 * built-in suite's targets are asserted here, in `npm test`, at seeds 1-5 (the seeds the
 * issue's targets name), and the forecastable targets on the three datacenter traces
 * (real demand curves, 45 days) at seed 1. A change that loses one fails CI instead of
 * going unnoticed (multi-day went from 10.7% of reactive's pending to 68.5% once, and
 * nothing said so; seed 1 alone would not have seen a loss at another seed).
 *
 * Targets, Headroom at its defaults against the other policies of the same run:
 * - forecastable traces (noisy variants included): pending <= 20% of reactive's, cost
 *   <= 1.15x reactive's and <= 1.10x the oracle's;
 * - guards (noise, flash-burst): pending <= reactive's, cost <= 1.05x reactive's;
 * - no baseline (reactive, periodic) waits less at <= 1.05x Headroom's cost.
 * Where a target is not met yet, MISSES names it with today's figure as its bound, so
 * it cannot get worse either; the closing note of the issue lists them.
 */

const SEEDS = [1, 2, 3, 4, 5] as const;
const DATACENTER_SEED = 1;

/**
 * `trace/check@seed` -> the bound today's figure sets where the target is not met
 * yet. At seeds 3 and 4 `periodic` waits less than Headroom on `noise` at a similar price
 * (510 against 570 pod-s, and 720 against 750): a few pods of the tail that Headroom's
 * default quantile accepts, where `periodic` happens to hold a node more (docs/simulation.md).
 */
const MISSES: Record<string, number> = {
  'noise/periodic beats headroom@3': 1,
  'noise/periodic beats headroom@4': 1,
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

/** Runs the traces at `seed` with every policy, printing the figures behind every check (a closing note quotes them). */
async function runSuite(traces: readonly string[], seed: number): Promise<TraceResult[]> {
  const results = await runParallel(traces.map((t) => loadBuiltinTrace(t)), { seed, policies: ['headroom', 'reactive', 'periodic', 'oracle'] });
  for (const r of results) {
    const cell = (p: string) => {
      const s = r.policies[p as keyof typeof r.policies]!.summary;
      return `${p} ${Math.round(s.pendingPodSeconds)} / ${s.cost.toFixed(2)}`;
    };
    console.log(`      [measure] seed ${seed} ${r.trace}: pending pod-s / cost: ${['headroom', 'reactive', 'periodic', 'oracle'].map(cell).join(', ')}`);
  }
  return results;
}

const missKey = (trace: string, check: string, seed: number) => `${trace}/${check}@${seed}`;

/** One test per trace: every check within its target, or within its MISSES bound. */
function assertTargets(traces: readonly string[], seed: number, results: () => TraceResult[]): void {
  for (const trace of traces) {
    it(`${trace} (${builtinTraceKind(trace)})`, () => {
      const r = results().find((x) => x.trace === trace)!;
      expect(r, trace).to.not.equal(undefined);
      const failures: string[] = [];
      for (const c of checksOf(r)) {
        const key = missKey(trace, c.name, seed);
        const bound = MISSES[key] ?? c.target;
        if (!(c.value <= bound + 1e-9)) failures.push(`${key}: ${c.value.toFixed(3)} > ${bound}${key in MISSES ? ' (known miss, bound at its figure)' : ''}`);
      }
      expect(failures, failures.join('; ')).to.deep.equal([]);
    });
  }
}

describe(`sim: the datacenter traces (real demand curves) meet the forecastable targets at seed ${DATACENTER_SEED} (regression gate)`, function () {
  this.timeout(900_000);
  let results: TraceResult[];

  before(async function () {
    this.timeout(900_000);
    results = await runSuite(DATACENTER_TRACES, DATACENTER_SEED);
  });

  assertTargets(DATACENTER_TRACES, DATACENTER_SEED, () => results);
});

describe('sim: the built-in suite meets its targets at seeds 1-5 (regression gate)', function () {
  this.timeout(900_000);
  const bySeed = new Map<number, TraceResult[]>();

  for (const seed of SEEDS) {
    describe(`seed ${seed}`, () => {
      before(async function () {
        this.timeout(900_000);
        bySeed.set(seed, await runSuite(BUILTIN_TRACES, seed));
      });

      assertTargets(BUILTIN_TRACES, seed, () => bySeed.get(seed)!);
    });
  }

  describe('the known misses', () => {
    it('MISSES names exactly the checks that miss their target (a met target leaves it)', () => {
      expect([...bySeed.keys()], 'every seed ran').to.deep.equal([...SEEDS]);
      const checks = [...bySeed].flatMap(([seed, results]) => results.flatMap((r) => checksOf(r).map((c) => ({ key: missKey(r.trace, c.name, seed), ...c }))));
      expect(checks.length).to.be.greaterThan(BUILTIN_TRACES.length * SEEDS.length);
      for (const key of Object.keys(MISSES)) expect(checks.map((c) => c.key), `MISSES names an unknown check: ${key}`).to.include(key);
      for (const c of checks) {
        expect(c.key in MISSES, `${c.key}: ${c.value.toFixed(3)} against ${c.target}${c.key in MISSES ? ': now met, remove it from MISSES' : ''}`).to.equal(c.value > c.target + 1e-9);
        if (c.key in MISSES) expect(MISSES[c.key]).to.be.greaterThan(c.target);
      }
    });
  });
});
