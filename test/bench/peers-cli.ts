/**
 * The command line of `npm run bench:peers` (test/bench/peers.ts), as a pure function:
 * argv in, the options (or the usage, or one line of error) out. Nothing here touches a
 * cluster; the unit test (test/unit/bench/peers-cli.test.ts) covers it.
 */
import { parseArgs } from 'node:util';
import { BOOT_PROFILES, SCENARIOS, type BootProfile, type Scenario } from './peers-scenarios.js';
import { SETUPS, type Setup } from './peers-setups.js';

export const USAGE = `Usage: npm run bench:peers -- [options]

Headroom beside the real Cluster Autoscaler (issue 28; docs/comparison.md).
Not part of npm test. Every run has a control plane of its own lane (see --lanes).

Options:
  --cluster-autoscaler PATH  the Cluster Autoscaler 1.36.1 binary (clusterapi build:
                             test/harness/build-cluster-autoscaler.sh prints it); default
                             $HEADROOM_CA_BINARY, else the one cached build in
                             ~/.cache/headroom/bin; not needed with --setup headroom
  --runs N                   interleaved rounds (default 1: the full table, about 25 min;
                             5 gives medians and ranges)
  --scenario a,b             scenarios (default all: ${SCENARIOS.map((s) => s.name).join(', ')})
  --setup a,b                setups (default all: ${SETUPS.map((s) => s.name).join(', ')})
  --boot short|jittered|both boot delays (default short: 5 s; jittered: 30-180 s)
  --daemonset true|false|both  a 100m kube-proxy-like DaemonSet on every node (default true)
  --lanes N                  scenario lanes per setup and round (default 3): each lane is one
                             control plane playing its scenarios one after another, every
                             setup's lanes side by side; 1 plays every scenario in one lane
  --jobs N                   the most lanes (control planes) at once (default: all of a round)
  --out DIR                  runs.jsonl, tables.md and logs/ (default bench-peers)
  --karpenter PATH           refused: Karpenter has no Cluster API provider to run here
  --help                     this text
`;

export interface PeersOptions {
  readonly clusterAutoscaler?: string;
  readonly runs: number;
  readonly scenarios: readonly Scenario[];
  readonly setups: readonly Setup[];
  readonly boots: readonly BootProfile[];
  readonly daemonsets: readonly boolean[];
  readonly lanes: number;
  /** undefined: every lane of a round at once. */
  readonly jobs?: number;
  readonly out: string;
}

export type PeersArgs = { readonly help: true } | { readonly error: string } | { readonly options: PeersOptions };

class ArgError extends Error {}
const fail = (m: string): never => {
  throw new ArgError(m);
};

const whole = (flag: string, v: string): number => {
  const n = Number(v);
  if (!/^\d+$/.test(v.trim()) || !Number.isInteger(n) || n < 1) fail(`--${flag} takes a whole number from 1, got "${v}"`);
  return n;
};

function pick<T extends { name: string }>(all: readonly T[], list: string | undefined, flag: string): T[] {
  if (list === undefined) return [...all];
  const names = list.split(',').map((s) => s.trim()).filter(Boolean);
  if (names.length === 0) fail(`--${flag}: no names given`);
  for (const n of names) if (!all.some((x) => x.name === n)) fail(`--${flag}: no ${flag} "${n}" (one of ${all.map((x) => x.name).join(', ')})`);
  return all.filter((x) => names.includes(x.name));
}

/**
 * Parses bench:peers' argv (without node and the script). `cachedCa` finds a Cluster
 * Autoscaler binary when --cluster-autoscaler is not given (peers.ts: HEADROOM_CA_BINARY,
 * else the one build of build-cluster-autoscaler.sh in ~/.cache/headroom/bin).
 */
export function parsePeersArgs(argv: readonly string[], cachedCa: () => string | undefined = () => undefined): PeersArgs {
  try {
    let values;
    try {
      ({ values } = parseArgs({
        args: [...argv],
        strict: true,
        allowPositionals: false,
        options: {
          'cluster-autoscaler': { type: 'string' },
          karpenter: { type: 'string' },
          runs: { type: 'string', default: '1' },
          scenario: { type: 'string' },
          setup: { type: 'string' },
          boot: { type: 'string', default: 'short' },
          daemonset: { type: 'string', default: 'true' },
          lanes: { type: 'string', default: '3' },
          jobs: { type: 'string' },
          out: { type: 'string', default: 'bench-peers' },
          help: { type: 'boolean', short: 'h' },
        },
      }));
    } catch (err) {
      // node:util's messages are one line already; keep the first.
      return { error: `${(err as Error).message.split('\n')[0]} (--help lists the options)` };
    }
    if (values.help) return { help: true };
    if (values.karpenter !== undefined) {
      fail('--karpenter: Karpenter has no Cluster API provider to run on this harness (its kwok provider makes Nodes itself, not MachineDeployments); docs/comparison.md says more');
    }
    const runs = whole('runs', values.runs!);
    const lanes = whole('lanes', values.lanes!);
    const jobs = values.jobs === undefined ? undefined : whole('jobs', values.jobs);
    const scenarios = pick(SCENARIOS, values.scenario, 'scenario');
    const setups = pick(SETUPS, values.setup, 'setup');
    const boots = values.boot === 'both' ? [...BOOT_PROFILES] : pick(BOOT_PROFILES, values.boot, 'boot');
    const daemonsets = values.daemonset === 'both' ? [true, false] : values.daemonset === 'true' ? [true] : values.daemonset === 'false' ? [false] : fail(`--daemonset takes true, false or both, got "${values.daemonset}"`);
    const needsCa = setups.some((s) => s.caFlags);
    const clusterAutoscaler = values['cluster-autoscaler'] ?? (needsCa ? cachedCa() : undefined);
    if (needsCa && !clusterAutoscaler) fail('--cluster-autoscaler PATH is required: none given and none built in ~/.cache/headroom/bin (test/harness/build-cluster-autoscaler.sh builds it), or --setup headroom');
    return {
      options: {
        ...(clusterAutoscaler ? { clusterAutoscaler } : {}),
        runs, scenarios, setups, boots, daemonsets, lanes, ...(jobs !== undefined ? { jobs } : {}), out: values.out!,
      },
    };
  } catch (err) {
    if (err instanceof ArgError) return { error: err.message };
    throw err;
  }
}
