/**
 * The pure parts of `npm run bench:fleet` (test/bench/fleet.ts): its options, a run's
 * figures and the summary over runs (medians per cluster count, and a least-squares line
 * through every run's figure against the cluster count: the slope is what one more
 * cluster costs, the intercept what the replica costs with none). Unit-tested in
 * test/unit/bench/fleet-summary.test.ts.
 */
import { parseArgs } from 'node:util';
import { median } from './peers-metrics.js';

export interface FleetBenchOptions {
  /** The cluster counts N measured, ascending, each a fresh replica (0: the replica alone). */
  clusters: number[];
  /** kwok Nodes in every workload cluster (M). */
  nodes: number;
  /** Bound pods on each of those Nodes. */
  podsPerNode: number;
  /** Pending pods created in every owned cluster at once, for the scale-up latency. */
  burst: number;
  rounds: number;
  /** Seconds from all N clusters owned to the start of the measuring window. */
  settleS: number;
  /** Seconds of the measuring window (RSS every second, heap every 2 s, CPU over the window). */
  windowS: number;
  json: boolean;
}

export const FLEET_BENCH_HELP = `npm run bench:fleet [-- options]

One Headroom replica in fleet mode (\`headroom controller --fleet\`, a real process with
the chart's flags) over N workload clusters of M kwok Nodes each, every one its own
etcd, kube-apiserver and kwok, and a management kube-apiserver with the Clusters, their
kubeconfig Secrets, MachineDeployments and NodePools. For every N (a fresh replica each
time) it measures, once the replica owns all N clusters: RSS, V8 heap in use and CPU
over a quiet window and the heap left after full collections, then a burst of pending pods in every cluster at once and the time
from each cluster's first pod to its MachineDeployment's replicas write. Prints a table
per run, medians per N and the line through the runs (per-cluster cost = its slope).

Options:
  --clusters LIST        cluster counts N, comma-separated, ascending (default 0,1,2,4)
  --nodes M              kwok Nodes per workload cluster (default 20)
  --pods-per-node P      bound pods per Node (default 10)
  --burst B              pending pods per cluster in the burst, one new node each (default 4)
  --rounds R             rounds over the N list, alternating its order (default 1)
  --settle S             seconds between all clusters owned and the window (default 10)
  --window S             seconds of the measuring window (default 20)
  --json                 one JSON object on stdout
  --help                 this text
`;

const WHOLE = /^\d+$/;

/** The options, or the one line to exit 2 with, or the help text. */
export function parseFleetBenchArgs(argv: readonly string[]): { options: FleetBenchOptions } | { error: string } | { help: string } {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: {
        clusters: { type: 'string', default: '0,1,2,4' },
        nodes: { type: 'string', default: '20' },
        'pods-per-node': { type: 'string', default: '10' },
        burst: { type: 'string', default: '4' },
        rounds: { type: 'string', default: '1' },
        settle: { type: 'string', default: '10' },
        window: { type: 'string', default: '20' },
        json: { type: 'boolean', default: false },
        help: { type: 'boolean', default: false },
      },
    }));
  } catch (err) {
    return { error: `bench:fleet: ${(err as Error).message.split('\n')[0]}` };
  }
  if (values.help) return { help: FLEET_BENCH_HELP };
  const whole = (name: string, min: number): number | string => {
    const raw = String(values[name]);
    if (!WHOLE.test(raw) || Number(raw) < min) return `bench:fleet: --${name} takes a whole number of at least ${min}, got "${raw}"`;
    return Number(raw);
  };
  const got: Record<string, number> = {};
  for (const [name, min] of [['nodes', 0], ['pods-per-node', 0], ['burst', 1], ['rounds', 1], ['settle', 0], ['window', 2]] as const) {
    const n = whole(name, min);
    if (typeof n === 'string') return { error: n };
    got[name] = n;
  }
  const parts = String(values.clusters).split(',').map((s) => s.trim());
  if (parts.some((p) => !WHOLE.test(p))) return { error: `bench:fleet: --clusters takes whole numbers separated by commas, got "${String(values.clusters)}"` };
  const clusters = parts.map(Number);
  if (clusters.some((n, i) => i > 0 && n <= clusters[i - 1]!)) return { error: `bench:fleet: --clusters must be ascending without repeats, got "${String(values.clusters)}"` };
  if (clusters.at(-1)! < 1) return { error: 'bench:fleet: --clusters needs at least one count above 0' };
  return {
    options: {
      clusters, nodes: got.nodes!, podsPerNode: got['pods-per-node']!, burst: got.burst!, rounds: got.rounds!,
      settleS: got.settle!, windowS: got.window!, json: values.json === true,
    },
  };
}

/** The order of the cluster counts in each round: ascending, then descending, and so on (a drift over the run favours neither end). */
export function runOrder(clusters: readonly number[], rounds: number): Array<{ round: number; clusters: number }> {
  const out: Array<{ round: number; clusters: number }> = [];
  for (let r = 0; r < rounds; r++) for (const n of r % 2 === 0 ? clusters : [...clusters].reverse()) out.push({ round: r + 1, clusters: n });
  return out;
}

/** What one replica's run observed (times in ms since the epoch; samples as read). */
export interface FleetRunObservations {
  clusters: number;
  round: number;
  /** Process start -> every cluster owned and its controller running. */
  ownedAfterMs: number;
  rssSamplesMb: number[];
  heapSamplesMb: number[];
  /** The heap in use after two full collections at the window's end (inspector-heap.ts). */
  heapLiveMb: number;
  /** CPU seconds of the process at the window's start and end, and the window's wall time. */
  windowCpuS: [number, number];
  windowMs: number;
  /** Per cluster: when its first burst pod was sent, when its group's replicas were first raised, and when they reached the burst. */
  burst: Array<{ cluster: string; firstPodMs: number; firstWriteMs?: number; allWrittenMs?: number }>;
  burstCpuS: [number, number];
  burstWallMs: number;
  burstRssPeakMb: number;
}

export interface FleetRun {
  clusters: number;
  round: number;
  ownedAfterS: number;
  rssMb: number;
  heapUsedMb: number;
  /** After full collections at the window's end: what the replica keeps. */
  heapLiveMb: number;
  /** Average CPU over the window, millicores. */
  cpuMillicores: number;
  /** Per cluster: first pod sent -> first replicas write, s (NaN if none came). */
  scaleUpFirstS: number[];
  /** Per cluster: first pod sent -> replicas at the burst, s. */
  scaleUpAllS: number[];
  burstCpuMillicores: number;
  burstRssPeakMb: number;
}

const round1 = (x: number) => Math.round(x * 10) / 10;
const round3 = (x: number) => Math.round(x * 1000) / 1000;

export function fleetRun(o: FleetRunObservations): FleetRun {
  const since = (b: { firstPodMs: number }, at: number | undefined) => (at === undefined ? NaN : round3((at - b.firstPodMs) / 1000));
  return {
    clusters: o.clusters,
    round: o.round,
    ownedAfterS: round3(o.ownedAfterMs / 1000),
    rssMb: round1(median(o.rssSamplesMb)),
    heapUsedMb: round1(median(o.heapSamplesMb)),
    heapLiveMb: round1(o.heapLiveMb),
    cpuMillicores: round1(o.windowMs > 0 ? (1000 * (o.windowCpuS[1] - o.windowCpuS[0])) / (o.windowMs / 1000) : NaN),
    scaleUpFirstS: o.burst.map((b) => since(b, b.firstWriteMs)),
    scaleUpAllS: o.burst.map((b) => since(b, b.allWrittenMs)),
    burstCpuMillicores: round1(o.burstWallMs > 0 ? (1000 * (o.burstCpuS[1] - o.burstCpuS[0])) / (o.burstWallMs / 1000) : NaN),
    burstRssPeakMb: round1(o.burstRssPeakMb),
  };
}

export interface LinearFit {
  /** Per unit of x (per cluster). */
  slope: number;
  /** At x = 0. */
  intercept: number;
  /** Coefficient of determination (1: every point on the line). */
  r2: number;
  points: number;
}

/** Ordinary least squares through (x, y); NaN slope and intercept with fewer than two distinct x. NaN points are left out. */
export function linearFit(points: ReadonlyArray<readonly [number, number]>): LinearFit {
  const ps = points.filter(([x, y]) => Number.isFinite(x) && Number.isFinite(y));
  const n = ps.length;
  const mx = ps.reduce((s, [x]) => s + x, 0) / n;
  const my = ps.reduce((s, [, y]) => s + y, 0) / n;
  const sxx = ps.reduce((s, [x]) => s + (x - mx) ** 2, 0);
  const sxy = ps.reduce((s, [x, y]) => s + (x - mx) * (y - my), 0);
  const syy = ps.reduce((s, [, y]) => s + (y - my) ** 2, 0);
  if (n < 2 || sxx === 0) return { slope: NaN, intercept: NaN, r2: NaN, points: n };
  const slope = sxy / sxx;
  return { slope, intercept: my - slope * mx, r2: syy === 0 ? 1 : (sxy * sxy) / (sxx * syy), points: n };
}

export interface FleetSummary {
  byClusters: Array<{
    clusters: number; runs: number; rssMb: number; heapUsedMb: number; heapLiveMb: number; cpuMillicores: number;
    scaleUpFirstP50S: number; scaleUpFirstMaxS: number; scaleUpAllP50S: number; scaleUpAllMaxS: number; burstCpuMillicores: number; burstRssPeakMb: number;
  }>;
  /** Every run's figure against its cluster count. */
  perCluster: { rssMb: LinearFit; heapUsedMb: LinearFit; heapLiveMb: LinearFit; cpuMillicores: LinearFit; burstRssPeakMb: LinearFit };
  /** Bursts whose group was never raised to the burst in time. */
  missedScaleUps: number;
}

export function summarizeFleet(runs: readonly FleetRun[]): FleetSummary {
  const counts = [...new Set(runs.map((r) => r.clusters))].sort((a, b) => a - b);
  const fit = (k: 'rssMb' | 'heapUsedMb' | 'heapLiveMb' | 'cpuMillicores' | 'burstRssPeakMb') => linearFit(runs.map((r) => [r.clusters, r[k]] as const));
  return {
    byClusters: counts.map((clusters) => {
      const rs = runs.filter((r) => r.clusters === clusters);
      const first = rs.flatMap((r) => r.scaleUpFirstS);
      const all = rs.flatMap((r) => r.scaleUpAllS);
      const max = (xs: number[]) => (xs.length ? Math.max(...xs.map((x) => (Number.isNaN(x) ? Infinity : x))) : NaN);
      return {
        clusters, runs: rs.length,
        rssMb: median(rs.map((r) => r.rssMb)), heapUsedMb: median(rs.map((r) => r.heapUsedMb)), heapLiveMb: median(rs.map((r) => r.heapLiveMb)),
        cpuMillicores: median(rs.map((r) => r.cpuMillicores)),
        scaleUpFirstP50S: median(first), scaleUpFirstMaxS: max(first), scaleUpAllP50S: median(all), scaleUpAllMaxS: max(all),
        burstCpuMillicores: median(rs.filter((r) => r.clusters > 0).map((r) => r.burstCpuMillicores)),
        burstRssPeakMb: median(rs.map((r) => r.burstRssPeakMb)),
      };
    }),
    perCluster: { rssMb: fit('rssMb'), heapUsedMb: fit('heapUsedMb'), heapLiveMb: fit('heapLiveMb'), cpuMillicores: fit('cpuMillicores'), burstRssPeakMb: fit('burstRssPeakMb') },
    missedScaleUps: runs.reduce((n, r) => n + r.scaleUpAllS.filter((x) => Number.isNaN(x)).length, 0),
  };
}
