import type { CostFloor } from './cost-floor.js';

/** What one policy's run produced: the `--json` summary entry and the report's series. */
export interface PolicySummary {
  pendingSeconds: { p50: number; p95: number; p99: number; max: number };
  /** Sum over pods of the seconds each was pending: the wait users felt, all of it. */
  pendingPodSeconds: number;
  /** Pods that waited more than WAITED_SECONDS for a node. */
  waitedPods: number;
  nodeHours: number;
  cost: number;
  peakNodes: number;
  utilization: { cpu: number; memory: number };
  scaleActions: number;
  /** Pods evicted from nodes the policy removed (recreated by their owners): the disruption users felt. */
  evictions: number;
  /**
   * The cost floor (cost-floor.ts): what the cheapest capacity covering this run's pods'
   * requests at every instant would have cost, knowing the demand, with no boot time
   * and fractional nodes. No policy can cost less; cost / floor is what was left to save.
   */
  costFloor: number;
  /**
   * The same per simulated day (day 1 is the first 24 h; the last may be partial), so a
   * first day with nothing learnt is seen apart from the days after it: pending
   * pod-seconds (pods pending during the day, for the time they were pending in it) and cost.
   */
  perDay: { pendingPodSeconds: number[]; cost: number[] };
}

export const DAY_MS = 86_400_000;

/** A pod pending longer than this waited for capacity (scheduling itself takes well under it). */
export const WAITED_SECONDS = 5;

/** Per time bucket: the most pods pending and nodes alive in it, and cost so far at its end. */
export interface TimeSeries {
  bucketSeconds: number;
  pending: number[];
  nodes: number[];
  cost: number[];
}

/**
 * Collects a run's metrics incrementally: time-weighted integrals are advanced at
 * every change, so nothing is recomputed from the whole cluster.
 * - pendingSeconds: per pod, creation to binding (or to deletion / the end of the
 *   run if it never bound); nearest-rank percentiles over all pods, their sum
 *   (pendingPodSeconds) and how many pods waited over WAITED_SECONDS.
 * - nodeHours and cost: Machines are paid from creation (boot included) to deletion.
 * - utilization: requested / allocatable on Ready nodes, time-weighted.
 * - costFloor: the cost floor's price of the requests of every pod that exists
 *   (pending or bound), integrated over time.
 */
export class MetricsRecorder {
  private last = 0;
  private machines = 0;
  private costRate = 0;
  private nodeMs = 0;
  private costMsHours = 0;
  private peak = 0;
  private alloc = { cpu: 0, memory: 0 };
  private used = { cpu: 0, memory: 0 };
  private allocInt = { cpu: 0, memory: 0 };
  private usedInt = { cpu: 0, memory: 0 };
  private pendingNow = 0;
  private readonly demand = { cpu: 0, memory: 0 };
  private floorRate: number;
  private floorMsHours = 0;
  private readonly waits: number[] = [];
  /** Per day: pending pod-ms and cost rate x ms. */
  private readonly dayPending: number[] = [];
  private readonly dayCost: number[] = [];
  scaleActions = 0;
  evictions = 0;
  private readonly series: TimeSeries;

  constructor(private readonly now: () => number, private readonly bucketMs: number, buckets: number, private readonly floor?: CostFloor) {
    this.floorRate = floor?.ratePerHour(0, 0) ?? 0;
    this.series = {
      bucketSeconds: bucketMs / 1000,
      pending: new Array<number>(buckets).fill(0),
      nodes: new Array<number>(buckets).fill(0),
      cost: new Array<number>(buckets).fill(0),
    };
  }

  /**
   * Integrates up to now. Values that change and change back at one instant (a pod
   * created and bound in the same event burst) held for no time, so they are not
   * charted: each bucket records the largest value that held for a positive time.
   */
  private advance(): void {
    const t = this.now();
    const dt = t - this.last;
    if (dt <= 0) return;
    const n = this.series.pending.length;
    const from = Math.min(Math.floor(this.last / this.bucketMs), n - 1);
    // The bucket t falls in only saw this interval if t is past its start.
    const to = Math.min(Math.ceil(t / this.bucketMs) - 1, n - 1);
    for (let b = from; b <= to; b++) {
      if (this.pendingNow > this.series.pending[b]!) this.series.pending[b] = this.pendingNow;
      if (this.machines > this.series.nodes[b]!) this.series.nodes[b] = this.machines;
      const boundary = (b + 1) * this.bucketMs;
      if (boundary <= t) this.series.cost[b] = (this.costMsHours + this.costRate * (boundary - this.last)) / 3_600_000;
    }
    for (let a = this.last; a < t;) {
      const day = Math.floor(a / DAY_MS);
      const b = Math.min(t, (day + 1) * DAY_MS);
      this.dayPending[day] = (this.dayPending[day] ?? 0) + this.pendingNow * (b - a);
      this.dayCost[day] = (this.dayCost[day] ?? 0) + this.costRate * (b - a);
      a = b;
    }
    this.nodeMs += this.machines * dt;
    this.costMsHours += this.costRate * dt;
    this.floorMsHours += this.floorRate * dt;
    this.allocInt.cpu += this.alloc.cpu * dt;
    this.allocInt.memory += this.alloc.memory * dt;
    this.usedInt.cpu += this.used.cpu * dt;
    this.usedInt.memory += this.used.memory * dt;
    this.last = t;
  }

  machineAdded(pricePerHour: number): void {
    this.advance();
    this.machines++;
    this.costRate += pricePerHour;
    if (this.machines > this.peak) this.peak = this.machines;
  }

  machineRemoved(pricePerHour: number): void {
    this.advance();
    this.machines--;
    this.costRate -= pricePerHour;
  }

  nodeReady(cpu: number, memory: number, sign: 1 | -1): void {
    this.advance();
    this.alloc.cpu += sign * cpu;
    this.alloc.memory += sign * memory;
  }

  podUsage(cpu: number, memory: number, sign: 1 | -1): void {
    this.advance();
    this.used.cpu += sign * cpu;
    this.used.memory += sign * memory;
  }

  /** A pod came into existence (+1) or went away (-1), bound or not: the demand the cost floor prices. */
  podDemand(cpu: number, memory: number, sign: 1 | -1): void {
    this.advance();
    this.demand.cpu += sign * cpu;
    this.demand.memory += sign * memory;
    this.floorRate = this.floor?.ratePerHour(this.demand.cpu, this.demand.memory) ?? 0;
  }

  podPending(): void {
    this.advance();
    this.pendingNow++;
  }

  /** A pending pod bound, or went away unbound; `waited` is how long it was pending. */
  podWaited(waited: number): void {
    this.advance();
    this.pendingNow--;
    this.waits.push(waited);
  }

  get pending(): number {
    return this.pendingNow;
  }

  finish(): { summary: PolicySummary; series: TimeSeries } {
    this.advance();
    this.series.cost[this.series.cost.length - 1] = this.costMsHours / 3_600_000;
    const w = Float64Array.from(this.waits).sort();
    const pct = (p: number) => (w.length === 0 ? 0 : w[Math.min(w.length - 1, Math.ceil((p / 100) * w.length) - 1)]! / 1000);
    const ratio = (a: number, b: number) => (b > 0 ? a / b : 0);
    let pendingMs = 0;
    let waited = 0;
    for (const x of w) {
      pendingMs += x;
      if (x > WAITED_SECONDS * 1000) waited++;
    }
    return {
      summary: {
        pendingSeconds: { p50: round(pct(50), 2), p95: round(pct(95), 2), p99: round(pct(99), 2), max: round(w.length ? w[w.length - 1]! / 1000 : 0, 2) },
        pendingPodSeconds: round(pendingMs / 1000, 1),
        waitedPods: waited,
        nodeHours: round(this.nodeMs / 3_600_000, 2),
        cost: round(this.costMsHours / 3_600_000, 2),
        peakNodes: this.peak,
        utilization: { cpu: round(ratio(this.usedInt.cpu, this.allocInt.cpu), 3), memory: round(ratio(this.usedInt.memory, this.allocInt.memory), 3) },
        scaleActions: this.scaleActions,
        evictions: this.evictions,
        costFloor: round(this.floorMsHours / 3_600_000, 2),
        perDay: {
          pendingPodSeconds: Array.from(this.dayCost, (_, d) => round((this.dayPending[d] ?? 0) / 1000, 1)),
          cost: Array.from(this.dayCost, (c) => round((c ?? 0) / 3_600_000, 2)),
        },
      },
      series: this.series,
    };
  }
}

function round(x: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}
