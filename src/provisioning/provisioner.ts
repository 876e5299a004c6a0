import type { ActionEvents } from '../capi/action-events.js';
import type { CapiActuator } from '../capi/actuator.js';
import type { GroupMemoryStore } from '../capi/group-memory.js';
import type { SnapshotIssue } from '../cluster/build-snapshot.js';
import type { ClusterObjects } from '../cluster/objects.js';
import { SnapshotBuilder } from '../cluster/snapshot-builder.js';
import type { ClusterSnapshot } from '../cluster/snapshot.js';
import type { ClusterStateSource } from '../cluster/state.js';
import type { Plan } from '../packing/plan.js';
import type { SchedulingPod } from '../scheduling/scheduling-pod.js';
import { Batcher, DEFAULT_BATCH, type BatcherOptions } from './batcher.js';
import { BootTimes } from './boot-times.js';
import type { Clock } from './clock.js';
import { predictedOutcome, type CycleReport } from './cycle-report.js';
import { GroupMemoryKeeper } from './group-memory-keeper.js';
import { HeldGroups } from './held-groups.js';
import { showsWrites, waitUntil } from './observe-writes.js';
import {
  DEFAULT_MAX_NODE_PROVISION_MS, DEFAULT_UNHEALTHY_NODE_MS, GroupBackoff, ProvisionFailureFinder, holdCapacity,
} from './provision-failures.js';
import { removeFailedProvisions } from './remove-failed-provisions.js';
import { DEFAULT_SCALE_UP_EFFECT, type ScaleUpEffectOptions } from './scale-up-effect.js';
import { ScaleUpJudge } from './scale-up-judge.js';
import type { Log, LogSubject } from '../api/log.js';
import { executeScaleUps } from './scale-up.js';
import { DEFAULT_SOLVE_DEADLINE_MS, TermEndedError, checkTerm, solveWithin, type SolveFn } from './solve-deadline.js';
import { withStandalonePools } from './standalone.js';
import { isTrigger, mayBeDemand } from './triggers.js';
import { UnschedulableEvents } from './unschedulable-events.js';

/**
 * The provisioning loop: batch triggers -> snapshot -> solve -> actuate.
 *
 * Depends only on a ClusterStateSource, a CapiActuator, a Clock and a solve
 * function, so the simulator runs it unchanged on a virtual cluster. Safety
 * comes from observed state, never from memory of past actions:
 * - in-flight capacity (replicas without Ready nodes) is counted by
 *   buildSnapshot, so a restarted controller does not provision twice;
 * - cycles never overlap, and a cycle that wrote replicas waits until the state
 *   source shows them before the next cycle plans (no decisions on a snapshot
 *   that misses our own writes);
 * - max sizes and NodePool limits are re-checked on the fresh snapshot
 *   (enforceLimits), and the actuator re-reads each group before it writes.
 *
 * The cycle is orchestrated here; its pieces are one file each: removing failed
 * provisions (remove-failed-provisions.ts), held groups (held-groups.ts), judging past
 * scale-ups (scale-up-judge.ts), the solve deadline (solve-deadline.ts), the writes
 * (scale-up.ts), waiting to see them (observe-writes.ts), the events on pods no
 * group can take (unschedulable-events.ts) and the memory kept on the groups for the
 * next leader (group-memory-keeper.ts).
 */

export interface ProvisionerOptions {
  batch?: BatcherOptions;
  /** How long a cycle waits for the state source to show its writes. Default 10 s. */
  observeTimeoutMs?: number;
  /** Re-run a cycle this often while pods are pending (0 = never). Default 30 s. */
  resyncMs?: number;
  /** Predicted demand (forecasts, CapacityBuffers) to provision for as well. */
  extraPendingPods?: (objects: ClusterObjects) => readonly SchedulingPod[];
  /**
   * How long a solve may take before the cycle gives up on it and runs the fallback
   * solve (if any) under the same deadline. Default 60 s.
   */
  solveDeadlineMs?: number;
  /**
   * A Machine not a Ready node this long after it was created is removed and its group
   * backs off (per group: cluster.x-k8s.io/autoscaling-options-maxnodeprovisiontime).
   * Default 15 min.
   */
  maxNodeProvisionMs?: number;
  /** Back-off of a group after a failed provision: first, and at most. Default 5 min / 30 min. */
  backoff?: { initialMs: number; maxMs: number };
  /** A Node NotReady this long stops counting as capacity. Default 5 min. */
  unhealthyNodeMs?: number;
  /** When a scale-up whose new nodes take none of its pods counts as not helping (the group backs off). */
  scaleUpEffect?: ScaleUpEffectOptions;
}

export interface ProvisionerDeps {
  state: ClusterStateSource;
  actuator: CapiActuator;
  /** Events on the pods and groups the loop acted on or would not grow. Default: none (the simulator). */
  events?: ActionEvents;
  /**
   * Keeps each group's back-off and its scale-ups awaiting judgement on the group, for
   * the next leader (ADR 0120). Default: none (the memory lasts this provisioner).
   */
  memory?: GroupMemoryStore;
  clock: Clock;
  solve: SolveFn;
  /** Used when `solve` outlives the solve deadline (the FFD baseline, say). */
  fallbackSolve?: SolveFn;
  /**
   * The leadership term this provisioner acts in (aborts when it ends): checked
   * before every write, and it cancels the running solve and observation wait.
   */
  term?: AbortSignal;
  log?: Log;
  /** Called after every cycle (metrics, tests). */
  onCycle?: (report: CycleReport) => void;
  onIssue?: (issue: SnapshotIssue) => void;
  /** Extra readiness gate, e.g. "every informer is fresh" (ClusterCache.healthy). */
  ready?: () => boolean;
  /** Builds this loop's snapshots; share one with the disruptor on the same state. Default: its own. */
  snapshots?: SnapshotBuilder;
}

export class Provisioner {
  private readonly batcher: Batcher;
  private readonly opts: Required<Omit<ProvisionerOptions, 'extraPendingPods'>> & Pick<ProvisionerOptions, 'extraPendingPods'>;
  private readonly backoff: GroupBackoff;
  private readonly provisionFailures = new ProvisionFailureFinder();
  private cancelFailureCheck: (() => void) | undefined;
  private cancelRecheck: (() => void) | undefined;
  private unsubscribe: (() => void) | undefined;
  private cancelResync: (() => void) | undefined;
  private running = false;
  readonly stats = { cycles: 0, scaleUps: 0, errors: 0, solveTimeouts: 0 };
  /** The oldest demand signal no cycle has started on yet, and the start of the running cycle. */
  private waitingSince: number | undefined;
  private cycleSince: number | undefined;
  private readonly held: HeldGroups;
  /** Scale-ups written for pending pods, until judged helpful or moot. */
  private readonly scaleUps: ScaleUpJudge;
  private readonly unschedulable: UnschedulableEvents;
  private readonly memory: GroupMemoryKeeper;
  private readonly bootTimes = new BootTimes();
  private readonly snapshots: SnapshotBuilder;

  constructor(private readonly deps: ProvisionerDeps, options: ProvisionerOptions = {}) {
    this.opts = {
      batch: DEFAULT_BATCH, observeTimeoutMs: 10_000, resyncMs: 30_000, solveDeadlineMs: DEFAULT_SOLVE_DEADLINE_MS,
      maxNodeProvisionMs: DEFAULT_MAX_NODE_PROVISION_MS, backoff: { initialMs: 300_000, maxMs: 1_800_000 }, unhealthyNodeMs: DEFAULT_UNHEALTHY_NODE_MS,
      scaleUpEffect: DEFAULT_SCALE_UP_EFFECT,
      ...options,
    };
    this.snapshots = deps.snapshots ?? new SnapshotBuilder();
    this.backoff = new GroupBackoff(this.opts.backoff.initialMs, this.opts.backoff.maxMs);
    const log = (m: string, about?: LogSubject) => this.log(m, about);
    this.held = new HeldGroups({ backoff: this.backoff, events: deps.events, log });
    this.scaleUps = new ScaleUpJudge({ backoff: this.backoff, events: deps.events, log, onRecovered: (id) => this.held.recovered(id) }, this.opts.scaleUpEffect);
    this.unschedulable = new UnschedulableEvents(deps.events);
    this.memory = new GroupMemoryKeeper({
      store: deps.memory, backoff: this.backoff, judge: this.scaleUps, state: deps.state, clock: deps.clock, term: deps.term, log,
    });
    this.batcher = new Batcher(deps.clock, this.opts.batch, () => this.runCycle(), (err) => {
      this.stats.errors++;
      this.log(`provisioning cycle failed: ${(err as Error).message}`);
    });
  }

  private log(msg: string, about?: LogSubject): void {
    this.deps.log?.(msg, about);
  }

  /** Starts reacting to state changes (and to `trigger()`, e.g. from demand intake). */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.unsubscribe = this.deps.state.onChange((kind, change) => {
      if (isTrigger(kind, change)) this.demand();
      // A new Machine has a provision deadline: look again when it passes (coalesced).
      else if (kind === 'machines' && change?.type === 'ADDED') this.recheckDeadlinesSoon();
    });
    this.demand();
    this.scheduleResync();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.unsubscribe?.();
    this.cancelResync?.();
    this.cancelFailureCheck?.();
    this.cancelRecheck?.();
    await this.batcher.stop();
  }

  /** A demand signal from outside the state source (webhook, extender). */
  trigger(): void {
    if (this.running) this.demand();
  }

  private demand(): void {
    this.waitingSince ??= this.deps.clock.now();
    this.batcher.trigger();
  }

  /**
   * How long demand has waited for a cycle to finish on it (0 when none waits): a
   * stuck cycle or solve shows here, for liveness.
   */
  stalledMs(now = this.deps.clock.now()): number {
    const since = Math.min(this.cycleSince ?? Infinity, this.waitingSince ?? Infinity);
    return Number.isFinite(since) ? Math.max(0, now - since) : 0;
  }

  private scheduleResync(): void {
    if (!this.opts.resyncMs) return;
    this.cancelResync = this.deps.clock.setTimer(this.opts.resyncMs, () => {
      if (!this.running) return;
      this.demand();
      this.scheduleResync();
    });
  }

  private async runCycle(): Promise<void> {
    this.cycleSince = this.waitingSince ?? this.deps.clock.now();
    this.waitingSince = undefined;
    try {
      const report = await this.cycle();
      this.deps.onCycle?.(report);
    } finally {
      this.cycleSince = undefined;
    }
  }

  /**
   * Removes Machines that failed or did not become Ready nodes within the max provision
   * time (remove-failed-provisions.ts), and waits until the state source shows them going.
   * Returns whether anything was removed. Schedules a look at the next deadline.
   */
  private async replaceFailedProvisions(objects: ClusterObjects, report: CycleReport): Promise<boolean> {
    const { actuator, clock } = this.deps;
    const now = clock.now();
    const { failures, nextDeadline } = this.provisionFailures.find(objects, now, this.opts.maxNodeProvisionMs);
    if (nextDeadline !== undefined) this.scheduleFailureCheck(nextDeadline - now);
    if (failures.length === 0) return false;
    const removed = await removeFailedProvisions(failures, now, {
      actuator, backoff: this.backoff, term: this.deps.term, stats: this.stats, log: (m, about) => this.log(m, about),
    }, report);
    if (removed.length === 0) return false;
    // Plan on a view without them, or their in-flight capacity would still count.
    const gone = new Set(removed);
    const ok = await this.waitUntil(() => !this.deps.state.objects().machines.some((m) => gone.has(`${m.metadata?.namespace}/${m.metadata?.name}`) && !m.metadata?.deletionTimestamp), ['machines']);
    if (!ok) this.log(`state source did not show the removed Machines within ${this.opts.observeTimeoutMs} ms`);
    return true;
  }

  private recheckDeadlinesSoon(): void {
    if (this.cancelRecheck) return;
    this.cancelRecheck = this.deps.clock.setTimer(1000, () => {
      this.cancelRecheck = undefined;
      if (!this.running) return;
      const now = this.deps.clock.now();
      const { failures, nextDeadline } = this.provisionFailures.find(this.deps.state.objects(), now, this.opts.maxNodeProvisionMs);
      if (failures.length) this.demand();
      else if (nextDeadline !== undefined) this.scheduleFailureCheck(nextDeadline - now);
    });
  }

  /** One timer for the earliest provision deadline: a cycle then removes what has not booted. */
  private scheduleFailureCheck(inMs: number): void {
    this.cancelFailureCheck?.();
    this.cancelFailureCheck = this.running ? this.deps.clock.setTimer(Math.max(0, inMs) + 1, () => this.demand()) : undefined;
  }

  /** Throws once the term has ended: called just before each write. */
  private checkTerm(): void {
    checkTerm(this.deps.term);
  }

  /**
   * The plan for `snapshot` within the solve deadline; past it, the fallback's plan
   * (same deadline), else undefined. A lost term ends the wait at once.
   */
  private async plan(snapshot: ClusterSnapshot, report: CycleReport): Promise<Plan | undefined> {
    const attempt = (fn: SolveFn) => solveWithin(fn, snapshot, this.deps.clock, this.opts.solveDeadlineMs, this.deps.term);
    const plan = await attempt(this.deps.solve);
    if (plan !== 'timeout') return plan;
    report.solveTimedOut = true;
    this.stats.solveTimeouts++;
    this.log(`solve gave no plan within ${this.opts.solveDeadlineMs} ms${this.deps.fallbackSolve ? '; using the fallback solve' : ''}`);
    if (!this.deps.fallbackSolve) return undefined;
    const fallback = await attempt(this.deps.fallbackSolve);
    if (fallback !== 'timeout') return fallback;
    this.log(`fallback solve gave no plan within ${this.opts.solveDeadlineMs} ms either`);
    return undefined;
  }

  /** One provisioning cycle on the current state. Exposed for tests and the simulator. */
  async cycle(): Promise<CycleReport> {
    try {
      return await this.cycleInTerm();
    } catch (err) {
      if (!(err instanceof TermEndedError)) throw err;
      this.log('provisioning cycle stopped: the leadership term ended');
      return { startedAt: this.deps.clock.now(), pendingPods: 0, solveMs: 0, scaleUps: [], unschedulable: 0, durationMs: 0, termEnded: true };
    }
  }

  private async cycleInTerm(): Promise<CycleReport> {
    const { state, clock, actuator } = this.deps;
    const startedAt = clock.now();
    const report: CycleReport = { startedAt, pendingPods: 0, solveMs: 0, scaleUps: [], unschedulable: 0, durationMs: 0 };
    const done = () => {
      report.durationMs = clock.now() - startedAt;
      return report;
    };
    this.stats.cycles++;
    if (!state.synced() || (this.deps.ready && !this.deps.ready())) {
      report.skipped = 'not-synced';
      return done();
    }
    let objects = state.objects();
    this.memory.restoreOnce(objects);
    // Every pass, pending pods or not: a burst's nodes may be gone before the next burst.
    this.bootTimes.observe(objects);
    if (await this.replaceFailedProvisions(objects, report)) objects = state.objects();
    await this.memory.storeAll();
    const extraPendingPods = this.opts.extraPendingPods?.(objects);
    // Most cycles (the resync, a burst already placed) find nothing to do; say so
    // without building the snapshot, which converts every pod and node (unless a
    // past scale-up still waits to be judged on it).
    if (!extraPendingPods?.length && !this.scaleUps.waiting() && !objects.pods.some(mayBeDemand)) {
      const held = this.held.read(objects, clock.now());
      if (held.size) report.held = Object.fromEntries(held);
      report.skipped = 'no-pending-pods';
      return done();
    }
    const built = this.snapshots.build(objects, {
      strict: false,
      onIssue: (i) => this.deps.onIssue?.(i),
      // Only a non-empty list: any list turns off the builder's reuse of the last snapshot.
      ...(extraPendingPods?.length ? { extraPendingPods } : {}),
    });
    const withPools = withStandalonePools(built, objects);
    const standalone = withPools.standalone;
    // Judged before the held groups are read, so a group found not helping is held this cycle.
    const settling = this.scaleUps.judge(withPools.snapshot, objects, clock.now(), report);
    await this.memory.storeAll();
    const held = this.held.read(objects, clock.now());
    for (const [id, why] of settling) if (!held.has(id)) held.set(id, why);
    if (held.size) report.held = Object.fromEntries(held);
    // Paused and backing-off groups cannot grow, unhealthy nodes take no pods: the solver plans around them.
    // Observed boot times let the solver prefer, between equally priced groups, the one whose nodes come sooner.
    const snapshot = this.bootTimes.annotate(holdCapacity(withPools.snapshot, held, objects, clock.now(), this.opts.unhealthyNodeMs));
    report.pendingPods = snapshot.pendingPods.length;
    if (snapshot.pendingPods.length === 0) {
      report.skipped = 'no-pending-pods';
      this.unschedulable.explain(undefined, snapshot, clock.now());
      return done();
    }
    const t0 = clock.now();
    const plan = await this.plan(snapshot, report);
    report.solveMs = clock.now() - t0;
    if (!plan) return done();
    report.unschedulable = plan.unschedulable.length;
    if (extraPendingPods?.length) predictedOutcome(report, snapshot, plan);
    this.checkTerm();
    this.unschedulable.explain(plan, snapshot, clock.now());

    // A written scale-up for pending pods is judged in later cycles (ScaleUpJudge).
    // Kept (and stored on the group) before the write, so no new node exists that no record explains.
    const remember = this.scaleUps.recorder(snapshot, () => clock.now(), (id) => this.memory.store(id));
    const written = await executeScaleUps(
      { state, actuator, events: this.deps.events, term: this.deps.term, stats: this.stats, log: (m, about) => this.log(m, about), remember }, snapshot, plan, standalone, report,
    );
    await this.memory.storeAll();
    if (written.length > 0) {
      const observed = await this.waitObserved(written);
      if (observed) report.observedMs = clock.now() - startedAt;
      else this.log(`state source did not show the writes within ${this.opts.observeTimeoutMs} ms`);
    }
    return done();
  }

  /** Resolves true once the state source shows at least the written replicas (or Machines) of every group. */
  private waitObserved(written: Parameters<typeof showsWrites>[1]): Promise<boolean> {
    return this.waitUntil(() => showsWrites(this.deps.state.objects(), written), ['nodeGroups', 'machines']);
  }

  /** Resolves true once `seen()` holds (checked on changes of `kinds`), false after observeTimeoutMs or a lost term. */
  private waitUntil(seen: () => boolean, kinds: ReadonlyArray<keyof ClusterObjects>): Promise<boolean> {
    const { state, clock, term } = this.deps;
    return waitUntil({ state, clock, timeoutMs: this.opts.observeTimeoutMs, ...(term ? { term } : {}) }, seen, kinds);
  }
}
