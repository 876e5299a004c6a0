import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Trace } from './trace.js';
import { parseTrace } from './trace-parse.js';

/** The built-in suite, in report order. */
export const BUILTIN_TRACES = ['diurnal', 'multi-day', 'ramp', 'flash-burst', 'cron-batch', 'noise'] as const;

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
  if (!(BUILTIN_TRACES as readonly string[]).includes(name)) {
    throw new Error(`unknown built-in trace "${name}" (one of ${BUILTIN_TRACES.join(', ')}, or all)`);
  }
  return parseTrace(readFileSync(`${tracesDir()}${name}.yaml`, 'utf8'), `builtin:${name}`);
}
