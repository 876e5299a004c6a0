import { type ClusterObjects, emptyClusterObjects } from '../cluster/objects.js';
import type { ClusterSnapshot, NodeGroup } from '../cluster/snapshot.js';
import { CPU, MEMORY } from '../scheduling/resources.js';
import type { Clock } from '../provisioning/clock.js';
import { SimCluster } from './cluster.js';
import { CostFloor } from './cost-floor.js';
import { MetricsRecorder } from './metrics.js';
import type { ForecastSample, PolicyFactory } from './policy.js';
import { Random } from './random.js';
import type { ForecastSeries, PolicyName, PolicyRun, TraceResult } from './result.js';
import { SimScheduler } from './scheduler.js';
import type { Trace } from './trace.js';
import { SIM_EPOCH, VirtualClock } from './virtual-clock.js';
import { WorkloadDriver } from './workloads.js';

/** The capacity model's snapshot builder (src/cluster/build-snapshot.ts), passed in. */
export type SnapshotBuilder = (objects: ClusterObjects) => ClusterSnapshot;

export interface RunOptions {
  seed: number;
  policies: { name: PolicyName; factory: PolicyFactory }[];
  buildSnapshot: SnapshotBuilder;
  /** Called now and then with the fraction of simulated time done for the current policy. */
  onProgress?: (policy: PolicyName, fraction: number) => void;
  /** Chart resolution: the number of time buckets (default 480). */
  buckets?: number;
}

/** Runs one trace through each policy, each on a fresh cluster with the same demand. */
export async function runTrace(trace: Trace, opts: RunOptions): Promise<TraceResult> {
  const result: TraceResult = { trace: trace.name, description: trace.description, seed: opts.seed, durationSeconds: trace.duration / 1000, policies: {} };
  for (const p of opts.policies) {
    result.policies[p.name] = await runPolicy(trace, p.factory, opts, (f) => opts.onProgress?.(p.name, f));
  }
  return result;
}

const macrotask = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * One policy over one trace. Events run in virtual-time order; when an instant is
 * done, coalesced change notifications go out, and if the policy was called
 * (listener or timer) the loop yields one macrotask so its promise chains (the
 * controller's async actuator calls) finish before time moves on.
 */
export async function runPolicy(trace: Trace, factory: PolicyFactory, opts: RunOptions, onProgress?: (fraction: number) => void): Promise<PolicyRun> {
  const wallStart = performance.now();
  const clock = new VirtualClock(SIM_EPOCH);
  const buckets = opts.buckets ?? 480;
  const groups = opts.buildSnapshot({ ...emptyClusterObjects(), nodeGroups: trace.nodeGroups.map((g) => g.object) }).groups;
  const metrics = new MetricsRecorder(() => clock.now() - SIM_EPOCH, Math.max(1000, trace.duration / buckets), buckets, costFloorOf(groups));
  const scheduler = new SimScheduler(Random.stream(opts.seed, 'kube-scheduler'));
  const cluster = new SimCluster({ traceGroups: trace.nodeGroups, groups, clock, metrics, scheduler, seed: opts.seed, ...(trace.dra ? { dra: trace.dra } : {}) });
  if (trace.capacityBuffers.length) cluster.putCapacityObjects(trace.capacityBuffers, trace.podTemplates);
  new WorkloadDriver(trace, cluster, clock, opts.seed).start();

  let touched = false;
  const policyClock: Clock = {
    now: () => clock.now(),
    setTimer: (ms, fn) => clock.setTimer(ms, () => {
      touched = true;
      fn();
    }),
  };
  const policy = await factory({ cluster, clock: policyClock, scheduler, snapshot: () => opts.buildSnapshot(cluster.objects()), trace, seed: opts.seed });
  cluster.flush();
  await macrotask();

  const end = SIM_EPOCH + trace.duration;
  let events = 0;
  while (clock.runNext(end)) {
    events++;
    const next = clock.peek();
    if (next === undefined || next > clock.now()) {
      if (cluster.flush() || touched) {
        touched = false;
        await macrotask();
      }
    }
    if ((events & 255) === 0) onProgress?.((clock.now() - SIM_EPOCH) / trace.duration);
  }
  clock.advanceTo(end);
  policy.stop();
  cluster.finish();
  onProgress?.(1);
  const { summary, series } = metrics.finish();
  const actions = cluster.actions.map((a) => ({ ...a, at: (a.at - SIM_EPOCH) / 1000 }));
  const samples = policy.forecasts?.();
  return {
    summary, series, actions, notes: policy.notes ?? [], wallMs: performance.now() - wallStart, events,
    ...(samples?.length ? { forecast: forecastSeries(samples, series.bucketSeconds * 1000, series.pending.length) } : {}),
  };
}

/** The cost floor of a trace's groups: their node shapes less DaemonSet overhead, prices and min sizes. */
export function costFloorOf(groups: readonly NodeGroup[]): CostFloor {
  return new CostFloor(groups.map((g) => ({
    cpu: Math.max(0, (g.template.allocatable[CPU] ?? 0) - (g.daemonSetOverhead[CPU] ?? 0)),
    memory: Math.max(0, (g.template.allocatable[MEMORY] ?? 0) - (g.daemonSetOverhead[MEMORY] ?? 0)),
    pricePerHour: g.pricePerHour, minSize: g.minSize,
  })));
}

/** Buckets forecast samples: actual at the sample time, forecast at the time it was for (one horizon later); null before the first. */
export function forecastSeries(samples: readonly ForecastSample[], bucketMs: number, buckets: number): ForecastSeries {
  const actual = new Array<number | null>(buckets).fill(null);
  const forecast = new Array<number | null>(buckets).fill(null);
  for (const s of samples) {
    const a = Math.floor((s.at - SIM_EPOCH) / bucketMs);
    if (a >= 0 && a < buckets) actual[a] = s.actual;
    const f = Math.floor((s.at + s.horizonMs - SIM_EPOCH) / bucketMs);
    if (f >= 0 && f < buckets) forecast[f] = s.forecast;
  }
  // Buckets shorter than the sampling interval hold the last value (the forecast stands until the next).
  for (const series of [actual, forecast]) for (let i = 1; i < buckets; i++) series[i] ??= series[i - 1]!;
  return { bucketSeconds: bucketMs / 1000, actual, forecast };
}
