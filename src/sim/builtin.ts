import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { NOISY_SUFFIX, noisyVariant } from './noisy-variant.js';
import type { Trace } from './trace.js';
import { parseTrace } from './trace-parse.js';

/**
 * The forecastable built-in traces: their demand has a shape a predictor can learn
 * (a daily cycle, a trend). Each also runs in a noisy variant (`<name>-noisy`,
 * src/sim/noisy-variant.ts). `cron-batch` is forecastable too but has no noisy
 * variant: its demand comes in CronJob runs, and its one Deployment (40 pods) would
 * get noise under one pod. `flash-burst` and `noise` are the guards: nothing in them
 * can be forecast.
 */
const NOISY_BASES = ['diurnal', 'multi-day', 'ramp'] as const;

/** The built-in suite, in report order: each noisy variant right after its trace. */
export const BUILTIN_TRACES = [
  'diurnal', 'diurnal-noisy', 'multi-day', 'multi-day-noisy', 'ramp', 'ramp-noisy', 'flash-burst', 'cron-batch', 'noise',
] as const;

/**
 * Demand curves from public datacenter traces (src/sim/traces/datacenter-*.yaml, made
 * by scripts/derive-datacenter-traces.py; sources and licences in each description).
 * Not in `builtin:all`: 21 simulated days each would take the default job far past
 * its time budget. `builtin:datacenter` runs them.
 */
export const DATACENTER_TRACES = ['datacenter-google', 'datacenter-azure', 'datacenter-alibaba'] as const;

/**
 * GPU demand through DRA (src/sim/dra.ts): ResourceClaims from templates and shared, on
 * GPU groups scaled from zero, and a claim no group can satisfy. Not in `builtin:all`:
 * a pod pending for ever is the point, and the suite's targets (issue 24) are about
 * forecasting; `builtin:dra` runs it (about a second of CPU for the four policies).
 */
export const DRA_TRACES = ['gpu-dra'] as const;

/** The suites `--trace builtin:SUITE` names: `all` is the default job. */
export const BUILTIN_SUITES: ReadonlyMap<string, readonly string[]> = new Map<string, readonly string[]>([
  ['all', BUILTIN_TRACES], ['datacenter', DATACENTER_TRACES], ['dra', DRA_TRACES],
]);

/** Every built-in trace, of every suite. */
export const ALL_BUILTIN_TRACES: readonly string[] = [...BUILTIN_TRACES, ...DATACENTER_TRACES, ...DRA_TRACES];

export type BuiltinTraceKind = 'forecastable' | 'guard';

/** Which targets a built-in trace is held to (issue 24): forecastable ones, or the guards. */
export function builtinTraceKind(name: string): BuiltinTraceKind {
  return name === 'flash-burst' || name === 'noise' ? 'guard' : 'forecastable';
}

/**
 * The YAML lives in src/sim/traces/ (data, not compiled): found next to this module
 * when run from source, or from dist/src/sim/ back up to the repo's src/sim/traces/.
 */
function tracesDir(): string {
  for (const rel of ['./traces/', '../../../src/sim/traces/']) {
    const dir = fileURLToPath(new URL(rel, import.meta.url));
    if (existsSync(dir)) return dir;
  }
  throw new Error('built-in traces not found (src/sim/traces/)');
}

export function loadBuiltinTrace(name: string): Trace {
  if (!ALL_BUILTIN_TRACES.includes(name)) {
    throw new Error(`unknown built-in trace "${name}" (one of ${ALL_BUILTIN_TRACES.join(', ')}, or a suite: ${[...BUILTIN_SUITES.keys()].join(', ')})`);
  }
  const base = name.endsWith(NOISY_SUFFIX) ? name.slice(0, -NOISY_SUFFIX.length) : undefined;
  if (base !== undefined && (NOISY_BASES as readonly string[]).includes(base)) return noisyVariant(loadBuiltinTrace(base));
  return parseTrace(readFileSync(`${tracesDir()}${name}.yaml`, 'utf8'), `builtin:${name}`);
}
