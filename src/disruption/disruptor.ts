import type { KubernetesObject, V1Node, V1Pod } from '@kubernetes/client-node';
import type { NodePoolDisruption } from '../api/nodepool.js';
import type { CapiActuator } from '../capi/actuator.js';
import { SnapshotBuilder } from '../cluster/snapshot-builder.js';
import type { ClusterObjects } from '../cluster/objects.js';
import type { ClusterSnapshot, PoolTemplate } from '../cluster/snapshot.js';
import type { ClusterStateSource } from '../cluster/state.js';
import type { Clock } from '../provisioning/clock.js';
import type { SchedulingPod } from '../scheduling/scheduling-pod.js';
import { isDemand } from '../scheduling/pod-demand.js';
import { DEFAULT_DISRUPTION, DisruptionAllowance } from './allowance.js';
import { decideConsolidation, type ConsolidationOptions } from './consolidation.js';
import type { CandidateSetFilter } from './consolidation-candidates.js';
import { ConsolidationDue } from './consolidation-due.js';
import type { DisruptionReport } from './disruption-report.js';
import { EmptyTracker } from './empty-tracker.js';
import { NodeOccupancy } from './node-occupancy.js';
import { decideEmptiness, notReadyNodes } from './emptiness.js';
import { decideExpiry, type SolveSnapshot } from './expiry.js';
import { DEFAULT_DRAIN } from './orchestration/drain.js';
import { executeRemovals } from './orchestration/execute.js';
import { FreshChecks } from './orchestration/fresh-checks.js';
import type { DisruptionNodePort } from './orchestration/node-port.js';
import { orphanTaints, untaintOrphans } from './orchestration/orphan-taints.js';
import { RemovalsUnderWay } from './orchestration/removals-under-way.js';
import { Replacements } from './orchestration/replace.js';
import { nodesToKeep } from './nodes-to-keep.js';
import { BALANCED_MIN_SCORE } from './score.js';
import { SettledTracker } from './settled-tracker.js';
import { describeRemoval } from './removal.js';
import { expiryConfigured, passSettings, shortestConsolidateAfter, type PassSettings } from './settings.js';
import { scaleDownOptionsByGroup } from './autoscaling-options.js';
import { PdbAllowance } from './pdb.js';
import { decideDrift, driftedMachines, driftedNodes } from './drift.js';
import type { Log, LogSubject } from '../api/log.js';
import { withStandalonePools } from '../provisioning/standalone.js';

/**
 * Consolidation as shipped: a score that weighs disruption, and multi-node sets that
 * may be replaced by one cheaper node (with the same-group rule in multi-node.ts).
 * Measured in docs/adr/0150-multi-node-replace-default.md.
 */
export const DEFAULT_CONSOLIDATION: ConsolidationOptions = { minScore: BALANCED_MIN_SCORE, multiNodeReplace: true };

export { DO_NOT_DISRUPT_ANNOTATION, HEADROOM_DO_NOT_DISRUPT_ANNOTATION, SAFE_TO_EVICT_ANNOTATION, SCALE_DOWN_DISABLED_ANNOTATION } from './validation.js';

/**
 * The disruption loop (Karpenter's disruption controller). Same shape as the
 * Provisioner: a ClusterStateSource, a CapiActuator, a Clock and pure decisions,
 * so the simulator runs it unchanged. It tracks since when each node has been
 * empty from state changes; every `intervalMs` it builds a snapshot, finds the nodes
 * that must stay (nodes-to-keep.ts) and runs the methods in order: emptiness, expiry,
 * replacements that are Ready, drift, consolidation (one file each). Execution is in
 * orchestration/: execute.ts taints the chosen nodes, re-checks them on a fresh read
 * (fresh-checks.ts) and removes each through actuator.deleteMachine (which marks the
 * Machine cluster.x-k8s.io/delete-machine and decrements replicas, never below min
 * size) or untaints it; removals-under-way.ts remembers them until the node is gone.
 * See docs/adr/0080-disruption-first-slice.md and 0081.
 */

export interface DisruptorOptions {
  /** How often to decide. Default 10 s. */
  intervalMs?: number;
  /**
   * Changes are folded into empty-since at most this often (each look walks the pod
   * and node lists by identity and folds in the changed objects). Default 1 s;
   * observing late only makes a node look empty for less long.
   */
  observeDelayMs?: number;
  /**
   * consolidateAfter of groups that belong to no NodePool (a pool's own default is the
   * parser's and the CRD's, DEFAULT_CONSOLIDATE_AFTER_MS). Default: that same 30 s.
   */
  defaultConsolidateAfterMs?: number;
  /**
   * Between tainting the chosen nodes and looking at them again: time for kube-scheduler
   * and the extender to see the taint, and for bindings already under way to land. Default 2 s.
   */
  settleMs?: number;
  /** Expired nodes removed per pass (each is checked with a solve). Default 1; 0 disables expiry. */
  maxExpiredPerPass?: number;
  /**
   * A removal not yet visible in the state, or one the actuator declined (dry run, min
   * size), is retried after this long. Default 10 min.
   */
  removalTimeoutMs?: number;
  /** Predicted demand (CapacityBuffers, forecasts): capacity it would use is kept. */
  extraPendingPods?: (objects: ClusterObjects) => readonly SchedulingPod[];
  /**
   * Draining through the Eviction API before the Machine goes (when the node port can
   * evict): timeout, poll and back-off. false leaves the pods to CAPI's drain. Default DEFAULT_DRAIN.
   */
  drain?: Partial<typeof DEFAULT_DRAIN> | false;
  /**
   * Underutilisation consolidation of groups whose policy is WhenEmptyOrUnderutilized
   * (docs/adr/0083-consolidation.md); false turns it off. Default: DEFAULT_CONSOLIDATION.
   */
  consolidation?: ConsolidationOptions | false;
  /** consolidationPolicy of groups that belong to no NodePool. Default: a NodePool's (api/disruption-defaults.ts). */
  defaultConsolidationPolicy?: NodePoolDisruption['consolidationPolicy'];
  /**
   * Budgets of groups that belong to no NodePool. Default: a NodePool's (api/disruption-defaults.ts);
   * the simulator's Karpenter-like policies give Karpenter's lone `10%`.
   */
  defaultBudgets?: NodePoolDisruption['budgets'];
  /** A cheaper replacement not Ready after this long is given up (its old nodes kept). Default 15 min. */
  replaceTimeoutMs?: number;
  /**
   * No underutilisation consolidation while capacity is being added for demand (pods
   * that wait, a rise the forecast acts on), nor for this long after: capacity just
   * needed is not taken away again at once (the role of Cluster Autoscaler's
   * scale-down-delay-after-add and of the HPA's scale-down stabilization window).
   * Capacity added for spare alone is kept by its predicted pods instead. Default 5 min;
   * 0 turns it off.
   */
  consolidationDelayAfterAddMs?: number;
}

export interface DisruptorDeps {
  state: ClusterStateSource;
  actuator: CapiActuator;
  /** Taint, fresh read, untaint: the workload-cluster side of a removal. */
  nodes: DisruptionNodePort;
  clock: Clock;
  /** The real solver: which nodes pending pods will use, and whether expired nodes' pods fit elsewhere. */
  solve: SolveSnapshot;
  log?: Log;
  onPass?: (report: DisruptionReport) => void;
  /** Extra readiness gate, e.g. "every informer is fresh". */
  ready?: () => boolean;
  /** Safety checks over a whole consolidation set (PodDisruptionBudgets), built per pass from the objects. */
  admissible?: (objects: ClusterObjects) => CandidateSetFilter | undefined;
  /** Builds this loop's snapshots; share one with the provisioner on the same state. Default: its own. */
  snapshots?: SnapshotBuilder;
}


/** Same objects in the same order (lists from the state source are rebuilt, their objects are not). */
/**
 * A Node's creationTimestamp in ms (null: none), per Node object: expiry asks for every
 * node on every pass, and parsing the dates again was a measurable share of a pass.
 * Sound because ClusterStateSource objects are immutable (a change is a new object).
 */
const createdMs = new WeakMap<V1Node, number | null>();
function createdAtOf(n: V1Node): number | null {
  let ms = createdMs.get(n);
  if (ms === undefined) {
    const ts = n.metadata?.creationTimestamp;
    ms = ts ? new Date(ts).getTime() : null;
    createdMs.set(n, ms);
  }
  return ms;
}

function sameElements(a: readonly unknown[], b: readonly unknown[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** A pending pod that is demand: a real one, or a predicted one the forecast acts on (not spare). */
const isPendingDemand = (p: SchedulingPod) => !p.predicted || !!p.predictedDemand;

/**
 * Whether any pod is, or may be, demand waiting for capacity: without a build, a pod that
 * may be pending (isDemand, which every snapshot's pending pod passes), or a predicted pod
 * that is demand.
 */
function demandPending(pods: readonly V1Pod[], predicted: readonly SchedulingPod[] | undefined): boolean {
  return pods.some(isDemand) || !!predicted?.some(isPendingDemand);
}

export class Disruptor {
  private readonly opts: Required<Omit<DisruptorOptions, 'extraPendingPods' | 'drain' | 'defaultBudgets'>> & Pick<DisruptorOptions, 'extraPendingPods'>;
  private readonly drain: typeof DEFAULT_DRAIN | undefined;
  private readonly settled = new SettledTracker();
  private readonly replacements: Replacements;
  /** When capacity was last seen being added (a node in flight). */
  private lastAddingAt = -Infinity;
  private readonly consolidation: ConsolidationDue;
  private readonly underWay: RemovalsUnderWay;
  private readonly fresh: FreshChecks;
  private readonly empty = new EmptyTracker();
  /** Which nodes are present and occupied, kept change by change for the two trackers. */
  private readonly occupancy = new NodeOccupancy();
  /** Things said once (a rollout left to CAPI), with when: said again after 10 min at most. */
  private readonly explained = new Map<string, number>();
  /** Settings of groups in no NodePool. */
  private readonly poolless: NodePoolDisruption;
  /** The last snapshot's settings and pool templates, and the NodePool and node group objects they came from. */
  private lastSettings: {
    nodePools: readonly KubernetesObject[]; nodeGroups: readonly KubernetesObject[]; settings: PassSettings; templates: ClusterSnapshot['templates'];
  } | undefined;
  private unsubscribe: (() => void) | undefined;
  private cancelTick: (() => void) | undefined;
  private cancelObserve: (() => void) | undefined;
  private running = false;
  /** Set by stop(): a pass under way removes nothing more and takes its taints back. */
  private stopping = false;
  private passing: Promise<void> | undefined;
  readonly stats = { passes: 0, removed: 0, errors: 0 };
  private readonly snapshots: SnapshotBuilder;

  constructor(private readonly deps: DisruptorDeps, options: DisruptorOptions = {}) {
    this.snapshots = deps.snapshots ?? new SnapshotBuilder();
    this.opts = {
      intervalMs: 10_000, observeDelayMs: 1000, defaultConsolidateAfterMs: DEFAULT_DISRUPTION.consolidateAfterMs!, maxExpiredPerPass: 1,
      removalTimeoutMs: 600_000, settleMs: 2000, consolidation: DEFAULT_CONSOLIDATION,
      defaultConsolidationPolicy: DEFAULT_DISRUPTION.consolidationPolicy, replaceTimeoutMs: 900_000, consolidationDelayAfterAddMs: 300_000, ...options,
    };
    this.drain = options.drain === false ? undefined : { ...DEFAULT_DRAIN, ...options.drain };
    this.poolless = {
      ...DEFAULT_DISRUPTION, consolidateAfterMs: this.opts.defaultConsolidateAfterMs, consolidationPolicy: this.opts.defaultConsolidationPolicy,
      ...(options.defaultBudgets ? { budgets: options.defaultBudgets.map((b) => ({ ...b })) } : {}),
    };
    this.replacements = new Replacements({ actuator: deps.actuator, nodes: deps.nodes, log: (m) => this.log(m) }, this.opts.replaceTimeoutMs);
    this.consolidation = new ConsolidationDue(this.opts.consolidation !== false);
    this.underWay = new RemovalsUnderWay(this.opts.removalTimeoutMs);
    this.fresh = new FreshChecks({ state: deps.state, clock: deps.clock, solve: deps.solve, snapshots: this.snapshots, extraPendingPods: this.opts.extraPendingPods });
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.stopping = false;
    this.unsubscribe = this.deps.state.onChange((kind) => {
      if (kind !== 'pods' && kind !== 'nodes') return;
      // Coalesce a burst of changes into one observation.
      this.cancelObserve ??= this.deps.clock.setTimer(this.opts.observeDelayMs, () => {
        this.cancelObserve = undefined;
        if (this.running) this.observe();
      });
    });
    if (this.deps.state.synced()) this.observe();
    this.scheduleTick();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.stopping = true;
    this.unsubscribe?.();
    this.cancelTick?.();
    this.cancelObserve?.();
    this.cancelObserve = undefined;
    await this.passing;
    await this.replacements.abandon();
  }

  /** Nodes Headroom is removing, with the reason (for the extender filter and status). */
  disrupting(): ReadonlyMap<string, string> {
    return this.underWay.disrupting(this.replacements.oldNodes());
  }

  /** When each node was first seen empty (a copy). */
  emptyNodes(): ReadonlyMap<string, number> {
    return new Map(this.empty.emptySince());
  }

  private log(msg: string, about?: LogSubject): void {
    this.deps.log?.(msg, about);
  }

  private explainOnce(key: string, msg: string): void {
    const now = this.deps.clock.now();
    const at = this.explained.get(key);
    if (at !== undefined && now - at < 600_000) return;
    this.explained.set(key, now);
    this.log(msg);
  }

  /** Passes start every `intervalMs` (a pass that waits on its taints does not push the next one back). */
  private scheduleTick(delayMs = this.opts.intervalMs): void {
    this.cancelTick = this.deps.clock.setTimer(delayMs, () => {
      if (!this.running) return;
      const started = this.deps.clock.now();
      this.passing = this.pass()
        .then((r) => this.deps.onPass?.(r))
        .catch((err) => {
          this.stats.errors++;
          this.log(`disruption pass failed: ${(err as Error).message}`);
        })
        .finally(() => {
          this.passing = undefined;
          if (this.running) this.scheduleTick(Math.max(0, this.opts.intervalMs - (this.deps.clock.now() - started)));
        });
    });
  }

  /** Updates empty-since from the current objects: a node is empty when only DaemonSet / mirror pods are bound to it. */
  observe(): void {
    if (!this.deps.state.synced()) return;
    const objects = this.deps.state.objects();
    const now = this.deps.clock.now();
    const changed = this.occupancy.update(objects.nodes, objects.pods as V1Pod[]);
    this.empty.observe(this.occupancy, changed, now);
    this.settled.observe(this.occupancy, changed, now);
    this.underWay.prune(this.occupancy, now);
  }

  /** True when expiry may remove nodes: it is enabled and some pool (or the default) sets expireAfter. */
  private expiryOn(settings: PassSettings): boolean {
    return this.opts.maxExpiredPerPass > 0 && expiryConfigured(settings.all);
  }

  private consolidationDue(settings: PassSettings, objects: ClusterObjects, now: number, predicted: readonly SchedulingPod[] | undefined): boolean {
    return this.consolidation.due(settings, objects.nodes, this.settled.settledSince(), now, predicted);
  }

  /**
   * True when consolidation is the only method that may remove a node this pass: expiry is
   * off (or no pool sets expireAfter), no standalone Machine has drifted from its pool's
   * template (`templates`), and no node has been empty for the shortest consolidateAfter.
   */
  private onlyConsolidation(settings: PassSettings, templates: Readonly<Record<string, PoolTemplate>>, now: number, objects: ClusterObjects): boolean {
    if (this.expiryOn(settings) || driftedMachines(templates, objects.machines).size > 0) return false;
    const after = shortestConsolidateAfter(settings.all);
    for (const since of this.empty.emptySince().values()) if (now - since >= after) return false;
    return true;
  }

  /**
   * Whether capacity is being added for demand now, which starts the delay after add.
   * In-flight replacements of our own do not count: they are capacity we are swapping,
   * not adding. Nor does capacity added while only spare is pending (the forecast's
   * jitter margin, a CapacityBuffer): the predicted pods that asked for it keep it for as
   * long as they are wanted, inside every what-if (spare.ts's keep window). The delay
   * guards capacity added for demand: pods that wait, or a rise the forecast acts on.
   */
  private noteAdding(snapshot: ClusterSnapshot, now: number): void {
    const replacing = this.replacements.oldNodes().size > 0;
    if (!replacing && snapshot.pendingPods.some(isPendingDemand) && snapshot.nodes.some((n) => n.inFlight)) this.lastAddingAt = now;
  }

  /** Consolidation may run this pass: on, due, capacity settled since the last add, and no removal of ours under way. */
  private consolidationMayRun(settings: PassSettings, objects: ClusterObjects, now: number, predicted: readonly SchedulingPod[] | undefined): boolean {
    return now - this.lastAddingAt >= this.opts.consolidationDelayAfterAddMs && !this.underWay.anyRemoving()
      && this.replacements.oldNodes().size === 0 && !!this.opts.consolidation && this.consolidationDue(settings, objects, now, predicted);
  }

  /** One decision pass on the current state. Exposed for tests and the simulator. */
  async pass(): Promise<DisruptionReport> {
    const { state, clock, actuator } = this.deps;
    const startedAt = clock.now();
    const report: DisruptionReport = { startedAt, removals: [], kept: [], durationMs: 0 };
    const done = () => {
      report.durationMs = clock.now() - startedAt;
      return report;
    };
    this.stats.passes++;
    if (!state.synced() || (this.deps.ready && !this.deps.ready())) {
      report.skipped = 'not-synced';
      return done();
    }
    this.observe();
    const objects = state.objects();
    const now = clock.now();
    const waiting = this.replacements.oldNodes();
    const orphans = orphanTaints(objects, (n) => this.underWay.working(n) || waiting.has(n));
    // Nothing could be removed this pass: skip the snapshot and every decision (same outcome, far cheaper).
    // The settings are the last snapshot's while the NodePools are the same objects.
    const last = this.lastSettings;
    const known = last && sameElements(last.nodePools, objects.nodePools) && sameElements(last.nodeGroups, objects.nodeGroups) ? last : undefined;
    // No orphan taint to take back and no replacement of ours under way (neither changes before the snapshot).
    const quiet = orphans.length === 0 && waiting.size === 0;
    // Predicted pods first: room one no longer needs is a reason to look again (consolidation-due.ts).
    const predicted = this.opts.extraPendingPods?.(objects);
    if (quiet && known && this.onlyConsolidation(known.settings, known.templates, now, objects)) {
      if (!this.consolidationDue(known.settings, objects, now, predicted)) return done();
      // Consolidation may not run (the delay after add, most often), and with no demand
      // pending this pass would not record capacity being added either (noteAdding).
      if (!demandPending(objects.pods as V1Pod[], predicted) && !this.consolidationMayRun(known.settings, objects, now, predicted)) return done();
    }
    // Only a non-empty list: any list turns off the builder's reuse of the last snapshot.
    // Standalone Machines (NodePools with a machineTemplate) are groups too: removed by a delete.
    const snapshot = withStandalonePools(this.snapshots.build(objects, {
      strict: false,
      ...(predicted?.length ? { extraPendingPods: predicted } : {}),
    }), objects).snapshot;
    const settings = passSettings(snapshot, this.poolless, scaleDownOptionsByGroup(objects));
    this.lastSettings = { nodePools: objects.nodePools, nodeGroups: objects.nodeGroups, settings, templates: snapshot.templates };
    const { settingsOf } = settings;
    // Consolidation is the only method that could act, and it may not run now (most often:
    // capacity is still being added): the rest of the pass would decide nothing, so only
    // its record of capacity being added is kept. Same outcome, and no solve.
    if (quiet && this.onlyConsolidation(settings, snapshot.templates, now, objects)) {
      this.noteAdding(snapshot, now);
      if (!this.consolidationMayRun(settings, objects, now, predicted)) return done();
    }
    const emptySince = this.empty.emptySince();
    if (orphans.length > 0) await untaintOrphans(snapshot, orphans, this.deps.nodes, (m, about) => this.log(m, about));
    const disrupting = this.underWay.removingNodes();
    // The solve for pending pods is only worth it when an empty node is due at all.
    const notReady = notReadyNodes(objects);
    const due = decideEmptiness({
      snapshot, emptySince, now, settingsOf, notReady, allowance: new DisruptionAllowance(snapshot, settingsOf, disrupting, undefined, now),
    }).remove.length > 0;
    const drifted = driftedNodes(snapshot, objects.machines);
    const expiryOn = this.expiryOn(settings);
    const keep = await nodesToKeep({
      objects, snapshot, busy: [...this.underWay.held(), ...this.replacements.keep(snapshot)], empty: this.empty.emptySince().keys(), drifted, due, expiryOn,
      solve: this.deps.solve, explain: (key, msg) => this.explainOnce(key, msg),
    });
    const allowance = new DisruptionAllowance(snapshot, settingsOf, disrupting, undefined, now, new PdbAllowance(objects.podDisruptionBudgets));
    const empty = decideEmptiness({ snapshot, emptySince, now, settingsOf, allowance, keep, notReady });
    const removals = [...empty.remove];
    report.kept.push(...empty.skipped);
    if (this.opts.maxExpiredPerPass > 0) {
      for (const r of removals) keep.add(r.node);
      const createdAt = new Map<string, number>();
      for (const n of objects.nodes) {
        const ms = n.metadata?.name ? createdAtOf(n) : null;
        if (ms !== null) createdAt.set(n.metadata!.name!, ms);
      }
      const expired = await decideExpiry({
        snapshot, createdAt, now, settingsOf, allowance, solve: this.deps.solve, keep, max: this.opts.maxExpiredPerPass,
      });
      removals.push(...expired.remove);
      report.kept.push(...expired.skipped);
    }
    const replaced = await this.replacements.readyToRemove(snapshot, now, this.deps.solve);
    report.kept.push(...replaced.kept);
    removals.push(...replaced.remove);
    // Drift: one node at a time, not while a replacement of ours is under way.
    if (drifted.size > 0 && removals.length === 0 && this.replacements.oldNodes().size === 0) {
      const drift = await decideDrift({ snapshot, drifted, now, settingsOf, allowance, solve: this.deps.solve, keep });
      report.kept.push(...drift.skipped);
      for (const r of drift.remove) {
        if (!r.replacement) {
          removals.push(r);
          continue;
        }
        const reason = `Drifted: ${drifted.get(r.node)}; replaced by one new ${r.replacement.group.id} node first`;
        if (await this.replacements.begin([r], snapshot, now, reason)) this.log(reason, { kind: 'Node', name: r.node });
      }
    }
    this.noteAdding(snapshot, now);
    // One consolidation at a time, as Karpenter: not while other removals of ours are under way.
    if (removals.length === 0 && this.opts.consolidation && this.consolidationMayRun(settings, objects, now, predicted)) {
      const admissible = this.deps.admissible?.(objects);
      const consolidated = await decideConsolidation({
        snapshot, settingsOf, settledSince: this.settled.settledSince(), now, allowance, solve: this.deps.solve, keep,
        ...this.opts.consolidation, ...(admissible ? { admissible } : {}),
      });
      report.kept.push(...consolidated.skipped);
      const first = consolidated.remove[0];
      if (!first) this.consolidation.foundNothing(objects.nodes, now, predicted);
      else if (first.replacement) {
        const names = consolidated.remove.map((r) => r.node).join(', ');
        const reason = `Underutilized: ${names} replaced by one cheaper ${first.replacement.group.id} node (score ${first.score?.toFixed(2)})`;
        if (await this.replacements.begin(consolidated.remove, snapshot, now, reason)) this.log(reason);
      } else removals.push(...consolidated.remove);
    }
    if (removals.length === 0) return done();

    const batch = new Set(removals.map((r) => r.node));
    const outcomes = await executeRemovals(removals, { actuator, nodes: this.deps.nodes, clock, log: (m, about) => this.log(m, about) }, {
      settleMs: this.opts.settleMs,
      mayAct: () => !this.stopping,
      freshBudgets: () => this.fresh.budgets(settingsOf, this.underWay.removingNodes(), batch),
      describe: (r) => describeRemoval(r, now),
      ...(snapshot.expendablePodsPriorityCutoff === undefined ? {} : { expendablePodsPriorityCutoff: snapshot.expendablePodsPriorityCutoff }),
      ...(this.drain ? { drain: this.drain } : {}),
      freshWhatIf: (rs) => this.fresh.whatIf(rs),
      cancel: (r) => this.fresh.neededByPending(r.node),
      onTainted: (node) => this.underWay.tainted(node),
      onSettled: (node) => this.underWay.settled(node),
    });
    const counts = this.underWay.record(outcomes, report, () => clock.now(), (m, about) => this.log(m, about));
    this.stats.removed += counts.removed;
    this.stats.errors += counts.errors;
    return done();
  }
}
