/**
 * The workloads of `npm run bench:peers` (issue 28), as data: every autoscaler setup
 * plays the same scenario on the same node groups. Nothing here touches a cluster;
 * test/bench/peers.ts plays the steps and test/bench/peers-metrics.ts reads the runs.
 *
 * Times are seconds from the scenario's start (the first step). A scenario's `windowS`
 * is its fixed cost window (the same for every setup and run); `settleS` caps how long
 * the runner waits for all pods to be Running after the last pod-creating step, and
 * `scaleDownS` (scenarios with a `delete` step at the end) caps how long it waits for
 * the node count to come back to the groups' minimum.
 *
 * Node groups are priced per cpu (the same price per cpu in every group): the
 * `headroom.dev/price` annotation carries it for Headroom; Cluster Autoscaler's
 * clusterapi provider has no prices, so its price expander cannot be used.
 */

/** $ per cpu-hour of every group (a 4-cpu node costs 4 x this an hour). */
export const PRICE_PER_CPU_HOUR = 0.048;
/** $ per GPU-hour on top of the cpus (about a cloud's one-GPU node less its cpus). */
export const PRICE_PER_GPU_HOUR = 1.0;
/** The extended resource the GPU group's nodes have and its pods ask for. */
export const GPU_RESOURCE = 'nvidia.com/gpu';

export interface PeerGroup {
  readonly name: string;
  readonly cpu: number;
  readonly memoryGi: number;
  readonly maxSize: number;
  /** A failure domain: the Machines' spec.failureDomain and a zone label on the template. */
  readonly zone?: string;
  /** GPUs a node (GPU_RESOURCE): in its capacity and in the gpu-type/gpu-count annotations both autoscalers read. */
  readonly gpus?: number;
}

/** The price of one node of `g` per hour. */
export const groupPrice = (g: PeerGroup): number => g.cpu * PRICE_PER_CPU_HOUR + (g.gpus ?? 0) * PRICE_PER_GPU_HOUR;

/** Three sizes priced per cpu (the groups of the runs issue 28 describes). */
export const SIZED_GROUPS: readonly PeerGroup[] = [
  { name: 'small', cpu: 4, memoryGi: 16, maxSize: 40 },
  { name: 'medium', cpu: 8, memoryGi: 32, maxSize: 20 },
  { name: 'large', cpu: 16, memoryGi: 64, maxSize: 10 },
];

/** One 8-cpu group per zone. */
export const ZONAL_GROUPS: readonly PeerGroup[] = ['zone-a', 'zone-b', 'zone-c'].map((zone) => ({ name: `z-${zone.slice(-1)}`, cpu: 8, memoryGi: 32, maxSize: 10, zone }));

/** A pod's container resources: its requests, and its GPUs as requests = limits (an extended resource). */
export function podResources(cpu: string, memory: string, gpus = 0): { requests: Record<string, string>; limits?: Record<string, string> } {
  return gpus > 0 ? { requests: { cpu, memory, [GPU_RESOURCE]: String(gpus) }, limits: { [GPU_RESOURCE]: String(gpus) } } : { requests: { cpu, memory } };
}

/** The three sizes and a two-GPU group, every one from zero. */
export const GPU_GROUPS: readonly PeerGroup[] = [...SIZED_GROUPS, { name: 'gpu', cpu: 8, memoryGi: 64, maxSize: 4, gpus: 2 }];

/** A set of bare pods (no owner): `count` x the requests, created together. */
export interface PodsStep {
  readonly at: number;
  readonly kind: 'pods';
  readonly name: string;
  readonly count: number;
  readonly cpu: string;
  readonly memory: string;
  /** GPUs a pod (GPU_RESOURCE, requests = limits). */
  readonly gpus?: number;
  /** A topologySpreadConstraint over zones (maxSkew 1, DoNotSchedule) on the set's pods. */
  readonly spreadZones?: boolean;
}
/** Deletes a pod set, or a Deployment or CronJob by name (demand goes away). */
export interface DeleteStep {
  readonly at: number;
  readonly kind: 'delete';
  readonly name: string;
}
/** Creates a Deployment, or sets its replicas (the HPA-like writer). */
export interface ReplicasStep {
  readonly at: number;
  readonly kind: 'replicas';
  readonly name: string;
  readonly replicas: number;
  readonly cpu: string;
  readonly memory: string;
}
/** A CronJob: `parallelism` pods a Job, on `schedule`; kwok completes Job pods once Running. */
export interface CronJobStep {
  readonly at: number;
  readonly kind: 'cronjob';
  readonly name: string;
  readonly schedule: string;
  readonly parallelism: number;
  readonly cpu: string;
  readonly memory: string;
}
export type Step = PodsStep | DeleteStep | ReplicasStep | CronJobStep;

export interface Scenario {
  readonly name: string;
  readonly description: string;
  readonly groups: readonly PeerGroup[];
  readonly steps: readonly Step[];
  /** The fixed cost window, s from the start. */
  readonly windowS: number;
  /** The most the runner waits for all pods Running after the last creating step. */
  readonly settleS: number;
  /** With a final delete step: the most it waits for the nodes to go. */
  readonly scaleDownS?: number;
  /** Runs until this long after the start whatever else (diurnal, CronJob). */
  readonly durationS?: number;
}

/**
 * The replicas an HPA-like writer sets for a diurnal-shaped load compressed into
 * `periodS`: a raised cosine from `min` (at the start and the end) to `max` (midway),
 * written every `everyS`, only when it changes.
 */
export function diurnalSteps(name: string, o: { periodS: number; everyS: number; min: number; max: number; cpu: string; memory: string }): ReplicasStep[] {
  const out: ReplicasStep[] = [];
  let last = -1;
  for (let at = 0; at <= o.periodS; at += o.everyS) {
    const replicas = Math.round(o.min + ((o.max - o.min) * (1 - Math.cos((2 * Math.PI * at) / o.periodS))) / 2);
    if (replicas !== last) out.push({ at, kind: 'replicas', name, replicas, cpu: o.cpu, memory: o.memory });
    last = replicas;
  }
  return out;
}

export const SCENARIOS: readonly Scenario[] = [
  {
    name: 'small-burst',
    description: 'many small pods: 80 x 500m/1Gi at once',
    groups: SIZED_GROUPS,
    steps: [{ at: 0, kind: 'pods', name: 'small', count: 80, cpu: '500m', memory: '1Gi' }],
    windowS: 120, settleS: 300,
  },
  {
    name: 'large-burst',
    description: 'a few large pods: 6 x 6 cpu/12Gi at once (no 4-cpu node fits one)',
    groups: SIZED_GROUPS,
    steps: [{ at: 0, kind: 'pods', name: 'large', count: 6, cpu: '6', memory: '12Gi' }],
    windowS: 120, settleS: 300,
  },
  {
    name: 'mixed-burst',
    description: 'mixed: 40 x 500m/1Gi, 12 x 2 cpu/4Gi, 3 x 6 cpu/12Gi at once',
    groups: SIZED_GROUPS,
    steps: [
      { at: 0, kind: 'pods', name: 'mixed-s', count: 40, cpu: '500m', memory: '1Gi' },
      { at: 0, kind: 'pods', name: 'mixed-m', count: 12, cpu: '2', memory: '4Gi' },
      { at: 0, kind: 'pods', name: 'mixed-l', count: 3, cpu: '6', memory: '12Gi' },
    ],
    windowS: 120, settleS: 300,
  },
  {
    name: 'zone-spread',
    description: '30 x 1 cpu/2Gi spread over 3 zones (maxSkew 1, DoNotSchedule), one 8-cpu group per zone',
    groups: ZONAL_GROUPS,
    steps: [{ at: 0, kind: 'pods', name: 'spread', count: 30, cpu: '1', memory: '2Gi', spreadZones: true }],
    windowS: 120, settleS: 300,
  },
  {
    name: 'gpu-burst',
    description: 'a GPU group scaled from zero: 6 x 1 GPU, 2 cpu/8Gi beside 20 x 500m/1Gi, on the three sizes and an 8-cpu two-GPU group',
    groups: GPU_GROUPS,
    steps: [
      { at: 0, kind: 'pods', name: 'train', count: 6, cpu: '2', memory: '8Gi', gpus: 1 },
      { at: 0, kind: 'pods', name: 'web', count: 20, cpu: '500m', memory: '1Gi' },
    ],
    windowS: 120, settleS: 300,
  },
  {
    name: 'scale-down',
    description: '40 x 1 cpu/2Gi, deleted 60 s later: time until the nodes are gone',
    groups: SIZED_GROUPS,
    steps: [
      { at: 0, kind: 'pods', name: 'gone', count: 40, cpu: '1', memory: '2Gi' },
      { at: 60, kind: 'delete', name: 'gone' },
    ],
    windowS: 300, settleS: 300, scaleDownS: 840,
  },
  {
    name: 'diurnal',
    description: 'a Deployment of 1 cpu/2Gi pods following a day compressed to 15 min (2 -> 30 -> 2 replicas, written every 30 s)',
    groups: SIZED_GROUPS,
    steps: diurnalSteps('web', { periodS: 900, everyS: 30, min: 2, max: 30, cpu: '1', memory: '2Gi' }),
    windowS: 960, settleS: 300, durationS: 960,
  },
  {
    name: 'cronjob',
    description: 'a CronJob every minute, 12 x 1 cpu/2Gi pods a Job, for 6 minutes',
    groups: SIZED_GROUPS,
    steps: [{ at: 0, kind: 'cronjob', name: 'batch', schedule: '*/1 * * * *', parallelism: 12, cpu: '1', memory: '2Gi' }],
    windowS: 360, settleS: 300, durationS: 360,
  },
];

/** Boot delays of the kwok provider's machines. */
export type BootProfile = { readonly name: 'short'; readonly ms: number } | { readonly name: 'jittered'; readonly minMs: number; readonly maxMs: number };
export const BOOT_PROFILES: readonly BootProfile[] = [
  { name: 'short', ms: 5000 },
  { name: 'jittered', minMs: 30_000, maxMs: 180_000 },
];

/**
 * A machine's boot delay: the profile's, jittered by a hash of the machine's name and
 * the run's seed (uniform in [minMs, maxMs]), so a machine keeps its delay across passes.
 */
export function bootDelayMs(profile: BootProfile, machineName: string, seed: number): number {
  if (profile.name === 'short') return profile.ms;
  let h = 2166136261 ^ seed;
  for (let i = 0; i < machineName.length; i++) h = Math.imul(h ^ machineName.charCodeAt(i), 16777619);
  const u = (h >>> 0) / 2 ** 32;
  return Math.round(profile.minMs + u * (profile.maxMs - profile.minMs));
}

/** The last step that creates demand (pods, replicas, a CronJob), s from the start. */
export const lastCreateAt = (s: Scenario): number => Math.max(0, ...s.steps.filter((x) => x.kind !== 'delete').map((x) => x.at));
/** The final delete step, if the scenario ends with demand going away. */
export const finalDelete = (s: Scenario): DeleteStep | undefined => {
  const last = s.steps.at(-1);
  return last?.kind === 'delete' ? last : undefined;
};

/** The time both autoscalers get after they are up before a scenario's first step, s. */
export const WARM_UP_S = 15;

/**
 * The most a run of `s` takes, s, from its autoscaler's start: the warm-up, then the
 * longest of its cost window, its fixed duration and, with a final delete, that step
 * plus the scale-down cap; with
 * boots of up to `maxBootS` on top. What lanes() balances (a run usually ends sooner:
 * once its pods ran and its window is over).
 */
export function runCapS(s: Scenario, maxBootS = 0): number {
  const del = finalDelete(s);
  const untilDown = del ? del.at + (s.scaleDownS ?? 0) : 0;
  return WARM_UP_S + Math.max(s.windowS, s.durationS ?? 0, untilDown) + maxBootS;
}

/**
 * Splits `items` into at most `n` lanes of about equal total `cost` (longest first, each
 * to the lane with the least so far; a tie goes to the first lane), keeping the given
 * order inside a lane. Every setup plays the same lanes, side by side.
 */
export function lanes<T>(items: readonly T[], n: number, cost: (x: T) => number): T[][] {
  if (!Number.isInteger(n) || n < 1) throw new Error(`lanes: n must be a whole number from 1, got ${n}`);
  const k = Math.min(n, items.length);
  const out: Array<Array<{ x: T; i: number }>> = Array.from({ length: k }, () => []);
  const load = new Array<number>(k).fill(0);
  const order = items.map((x, i) => ({ x, i, c: cost(x) })).sort((a, b) => b.c - a.c || a.i - b.i);
  for (const it of order) {
    let best = 0;
    for (let j = 1; j < k; j++) if (load[j]! < load[best]!) best = j;
    out[best]!.push({ x: it.x, i: it.i });
    load[best]! += it.c;
  }
  return out.map((l) => l.sort((a, b) => a.i - b.i).map((e) => e.x));
}
