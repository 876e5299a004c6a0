// Over 400 lines: one disruption pass end to end (settings, candidates, the fresh re-checks before
// acting, drift and replacements, orphan taints); decisions are the pure files beside it and execution
// is in orchestration/. Moving the fresh re-checks out is the next split (they change under issue 14).
import type { KubernetesObject, V1Pod } from '@kubernetes/client-node';
import { hasDisruptionTaint, withoutDisruptionTaint } from '../api/disruption-taint.js';
import type { NodePoolDisruption } from '../api/nodepool.js';
import type { CapiActuator, ScaleResult } from '../capi/actuator.js';
import { SnapshotBuilder } from '../cluster/snapshot-builder.js';
import type { ClusterObjects } from '../cluster/objects.js';
import type { ClusterSnapshot, PoolTemplate } from '../cluster/snapshot.js';
import type { ClusterStateSource } from '../cluster/state.js';
import type { Clock } from '../provisioning/clock.js';
import type { SchedulingPod } from '../scheduling/scheduling-pod.js';
import { DEFAULT_DISRUPTION, DisruptionAllowance, type SettingsOf } from './allowance.js';
import { decideConsolidation, type ConsolidationOptions } from './consolidation.js';
import type { CandidateSetFilter } from './consolidation-candidates.js';
import { EmptyTracker } from './empty-tracker.js';
import { decideEmptiness } from './emptiness.js';
import { decideExpiry, type SolveSnapshot } from './expiry.js';
import { DEFAULT_DRAIN } from './orchestration/drain.js';
import { executeRemovals } from './orchestration/execute.js';
import type { DisruptionNodePort } from './orchestration/node-port.js';
import { Replacements } from './orchestration/replace.js';
import { BALANCED_MIN_SCORE } from './score.js';
import { SettledTracker } from './settled-tracker.js';
import { evaluateRemoval } from './what-if.js';
import type { Removal, Skip } from './removal.js';
import { consolidationConfigured, expiryConfigured, passSettings, shortestConsolidateAfter, type PassSettings } from './settings.js';
import { scaleDownOptionsByGroup } from './autoscaling-options.js';
import { PdbAllowance } from './pdb.js';
import { decideDrift, driftedMachines, driftedNodes } from './drift.js';
import { rollingOutGroups } from './capi-rollout.js';
import { podsToMove } from './pods.js';
import { nodeBlocker, podBlocker } from './validation.js';
import type { Log, LogSubject } from '../api/log.js';
import { pausedGroups } from '../provisioning/provision-failures.js';
import { withStandalonePools } from '../provisioning/standalone.js';

export { DO_NOT_DISRUPT_ANNOTATION, HEADROOM_DO_NOT_DISRUPT_ANNOTATION, SAFE_TO_EVICT_ANNOTATION, SCALE_DOWN_DISABLED_ANNOTATION } from './validation.js';

/**
 * The disruption loop (first slice: emptiness and safe expiry). Same shape as the
 * Provisioner: a ClusterStateSource, a CapiActuator, a Clock and pure decisions,
 * so the simulator runs it unchanged. It tracks since when each node has been
 * empty from state changes; every `intervalMs` it builds a snapshot and decides;
 * orchestration/execute.ts then taints the chosen nodes, re-checks them on a fresh
 * read, and removes each through actuator.deleteMachine (which marks the Machine
 * cluster.x-k8s.io/delete-machine and decrements replicas, never below min size) or
 * untaints it. See docs/adr/0080-disruption-first-slice.md and 0081.
 */

export interface DisruptorOptions {
  /** How often to decide. Default 10 s. */
  intervalMs?: number;
  /**
   * Changes are folded into empty-since at most this often (each look is O(pods)).
   * Default 1 s; observing late only makes a node look empty for less long.
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
   * (docs/adr/0083-consolidation.md); false turns it off. Default: score >= BALANCED_MIN_SCORE.
   */
  consolidation?: ConsolidationOptions | false;
  /** consolidationPolicy of groups that belong to no NodePool. Default WhenEmpty. */
  defaultConsolidationPolicy?: NodePoolDisruption['consolidationPolicy'];
  /** A cheaper replacement not Ready after this long is given up (its old nodes kept). Default 15 min. */
  replaceTimeoutMs?: number;
  /**
   * No underutilisation consolidation while capacity is being added, nor for this long
   * after the last added node became Ready: capacity just needed is not taken away
   * again at once (the role of Cluster Autoscaler's scale-down-delay-after-add and of
   * the HPA's scale-down stabilization window). Default 5 min; 0 turns it off.
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

export interface DisruptionReport {
  startedAt: number;
  skipped?: 'not-synced';
  removals: Array<Omit<Removal, 'machine'> & { groupId: string; machine?: string; result?: ScaleResult; error?: string }>;
  kept: Skip[];
  durationMs: number;
}

/** Same objects in the same order (lists from the state source are rebuilt, their objects are not). */
function sameElements(a: readonly unknown[], b: readonly unknown[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

export class Disruptor {
  private readonly opts: Required<Omit<DisruptorOptions, 'extraPendingPods' | 'drain'>> & Pick<DisruptorOptions, 'extraPendingPods'>;
  private readonly drain: typeof DEFAULT_DRAIN | undefined;
  private readonly settled = new SettledTracker();
  private readonly replacements: Replacements;
  /** When capacity was last seen being added (a node in flight). */
  private lastAddingAt = -Infinity;
  /** The nodes list on which consolidation last found nothing to do, and when. */
  private idleConsolidation: { nodes: readonly unknown[]; at: number } | undefined;
  /** Node -> when we asked for its removal, and why (until the node is gone). */
  private readonly removing = new Map<string, { at: number; reason: string }>();
  /** Node -> when the actuator declined to remove it (dry run, min size on fresh state): not retried for a while. */
  private readonly declined = new Map<string, number>();
  /** Nodes tainted by the running pass, not yet removed or untainted. */
  private readonly tainting = new Set<string>();
  private readonly empty = new EmptyTracker();
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
      removalTimeoutMs: 600_000, settleMs: 2000, consolidation: { minScore: BALANCED_MIN_SCORE },
      defaultConsolidationPolicy: DEFAULT_DISRUPTION.consolidationPolicy, replaceTimeoutMs: 900_000, consolidationDelayAfterAddMs: 300_000, ...options,
    };
    this.drain = options.drain === false ? undefined : { ...DEFAULT_DRAIN, ...options.drain };
    this.poolless = {
      ...DEFAULT_DISRUPTION, consolidateAfterMs: this.opts.defaultConsolidateAfterMs, consolidationPolicy: this.opts.defaultConsolidationPolicy,
    };
    this.replacements = new Replacements({ actuator: deps.actuator, nodes: deps.nodes, log: (m) => this.log(m) }, this.opts.replaceTimeoutMs);
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
    const out = new Map([...this.removing].map(([n, r]) => [n, r.reason]));
    for (const n of this.tainting) if (!out.has(n)) out.set(n, 'tainted for removal, being re-checked');
    for (const n of this.replacements.oldNodes()) if (!out.has(n)) out.set(n, 'waiting for its replacement (a new node) to be Ready');
    return out;
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
    const present = this.empty.observe(objects.nodes, objects.pods as V1Pod[], now);
    this.settled.observe(objects.nodes, objects.pods as V1Pod[], now);
    for (const [name, r] of this.removing) {
      if (!present.has(name) || now - r.at > this.opts.removalTimeoutMs) this.removing.delete(name);
    }
    for (const [name, at] of this.declined) {
      if (!present.has(name) || now - at > this.opts.removalTimeoutMs) this.declined.delete(name);
    }
  }

  /** True when expiry may remove nodes: it is enabled and some pool (or the default) sets expireAfter. */
  private expiryOn(settings: PassSettings): boolean {
    return this.opts.maxExpiredPerPass > 0 && expiryConfigured(settings.all);
  }

  private consolidationOn(settings: PassSettings): boolean {
    return this.opts.consolidation !== false && consolidationConfigured(settings.all);
  }

  /**
   * Consolidation may find something: it is on, and since it last found nothing the
   * nodes changed, or some node's pods have been unchanged for consolidateAfter (a
   * node whose pods change is no candidate until then; that is also when the room
   * its pods freed is looked at).
   */
  private consolidationDue(settings: PassSettings, objects: ClusterObjects, now: number): boolean {
    if (!this.consolidationOn(settings)) return false;
    const idle = this.idleConsolidation;
    if (!idle || idle.nodes !== objects.nodes) return true;
    const after = shortestConsolidateAfter(settings.all.filter((d) => d.consolidationPolicy === 'WhenEmptyOrUnderutilized'));
    for (const since of this.settled.settledSince().values()) if (since + after > idle.at && since + after <= now) return true;
    return false;
  }

  /**
   * False only when no decision of this pass can remove a node: expiry is off (or no
   * pool sets expireAfter), no standalone Machine has drifted from its pool's template
   * (`templates`, the last snapshot's), and no node has been empty for the shortest consolidateAfter.
   */
  private mayRemove(settings: PassSettings, templates: Readonly<Record<string, PoolTemplate>>, now: number, objects: ClusterObjects): boolean {
    if (this.expiryOn(settings) || this.consolidationDue(settings, objects, now) || driftedMachines(templates, objects.machines).size > 0) return true;
    const after = shortestConsolidateAfter(settings.all);
    for (const since of this.empty.emptySince().values()) if (now - since >= after) return true;
    return false;
  }

  /**
   * Nodes that must stay this pass: do-not-disrupt, a pod that may not move (validation.ts),
   * a paused group or Cluster, already being removed, or where pending pods will land.
   */
  private async keep(objects: ClusterObjects, snapshot: ClusterSnapshot, due: boolean, expiryOn: boolean, drifted: ReadonlyMap<string, string>): Promise<Set<string>> {
    const keep = new Set<string>([...this.removing.keys(), ...this.declined.keys(), ...this.replacements.keep(snapshot)]);
    for (const n of objects.nodes) if (nodeBlocker(n)) keep.add(n.metadata!.name!);
    const paused = pausedGroups(objects);
    if (paused.size > 0) for (const n of snapshot.nodes) if (n.groupId && paused.has(n.groupId)) keep.add(n.name);
    // A MachineDeployment CAPI is rolling out: its nodes are CAPI's to replace.
    const rolling = rollingOutGroups(objects.nodeGroups);
    if (rolling.size > 0) {
      for (const n of snapshot.nodes) if (n.groupId && rolling.has(n.groupId)) keep.add(n.name);
      for (const [id, why] of rolling) this.explainOnce(`rollout:${id}`, why);
    }
    // Only pods on nodes that could be removed matter: without expiry, those are the empty and the drifted ones.
    const candidates = expiryOn ? undefined : new Set([...this.empty.emptySince().keys(), ...drifted.keys()]);
    for (const p of objects.pods) {
      const node = p.spec?.nodeName;
      if (node && (!candidates || candidates.has(node)) && podBlocker(p as V1Pod)) keep.add(node);
    }
    // A node that is empty now but is where the solver puts pending pods (or CapacityBuffer
    // pods) is capacity in use: removing it would only make the provisioner add it back.
    if (due && snapshot.pendingPods.length > 0) {
      const plan = await this.deps.solve(snapshot);
      for (const pl of plan.placements) if ('node' in pl) keep.add(pl.node);
    }
    return keep;
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
    const orphans = this.orphanTaints(objects);
    // Nothing could be removed this pass: skip the snapshot and every decision (same outcome, far cheaper).
    // The settings are the last snapshot's while the NodePools are the same objects.
    const last = this.lastSettings;
    const known = last && sameElements(last.nodePools, objects.nodePools) && sameElements(last.nodeGroups, objects.nodeGroups) ? last : undefined;
    if (orphans.length === 0 && known && !this.mayRemove(known.settings, known.templates, now, objects) && !this.replacements.oldNodes().size) return done();
    // Only a non-empty list: any list turns off the builder's reuse of the last snapshot.
    const predicted = this.opts.extraPendingPods?.(objects);
    // Standalone Machines (NodePools with a machineTemplate) are groups too: removed by a delete.
    const snapshot = withStandalonePools(this.snapshots.build(objects, {
      strict: false,
      ...(predicted?.length ? { extraPendingPods: predicted } : {}),
    }), objects).snapshot;
    const settings = passSettings(snapshot, this.poolless, scaleDownOptionsByGroup(objects));
    this.lastSettings = { nodePools: objects.nodePools, nodeGroups: objects.nodeGroups, settings, templates: snapshot.templates };
    const { settingsOf } = settings;
    const emptySince = this.empty.emptySince();
    if (orphans.length > 0) await this.untaintOrphans(snapshot, orphans);
    const disrupting = new Set(this.removing.keys());
    // The solve for pending pods is only worth it when an empty node is due at all.
    const notReady = notReadyNodes(objects);
    const due = decideEmptiness({
      snapshot, emptySince, now, settingsOf, notReady, allowance: new DisruptionAllowance(snapshot, settingsOf, disrupting, undefined, now),
    }).remove.length > 0;
    const drifted = driftedNodes(snapshot, objects.machines);
    const keep = await this.keep(objects, snapshot, due, this.expiryOn(settings), drifted);
    const allowance = new DisruptionAllowance(snapshot, settingsOf, disrupting, undefined, now, new PdbAllowance(objects.podDisruptionBudgets));
    const empty = decideEmptiness({ snapshot, emptySince, now, settingsOf, allowance, keep, notReady });
    const removals = [...empty.remove];
    report.kept.push(...empty.skipped);
    if (this.opts.maxExpiredPerPass > 0) {
      for (const r of removals) keep.add(r.node);
      const createdAt = new Map<string, number>();
      for (const n of objects.nodes) {
        const ts = n.metadata?.creationTimestamp;
        if (n.metadata?.name && ts) createdAt.set(n.metadata.name, new Date(ts).getTime());
      }
      const expired = await decideExpiry({
        snapshot, createdAt, now, settingsOf, allowance, solve: this.deps.solve, keep, max: this.opts.maxExpiredPerPass,
      });
      removals.push(...expired.remove);
      report.kept.push(...expired.skipped);
    }
    removals.push(...await this.replaced(snapshot, now, report));
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
    // In-flight replacements of our own do not count: they are capacity we are swapping, not adding.
    const replacing = this.replacements.oldNodes().size > 0;
    if (!replacing && snapshot.nodes.some((n) => n.inFlight)) this.lastAddingAt = now;
    const settledCapacity = now - this.lastAddingAt >= this.opts.consolidationDelayAfterAddMs;
    // One consolidation at a time, as Karpenter: not while other removals of ours are under way.
    if (removals.length === 0 && settledCapacity && this.removing.size === 0 && !replacing && this.opts.consolidation && this.consolidationDue(settings, objects, now)) {
      const admissible = this.deps.admissible?.(objects);
      const consolidated = await decideConsolidation({
        snapshot, settingsOf, settledSince: this.settled.settledSince(), now, allowance, solve: this.deps.solve, keep,
        ...this.opts.consolidation, ...(admissible ? { admissible } : {}),
      });
      report.kept.push(...consolidated.skipped);
      const first = consolidated.remove[0];
      if (!first) this.idleConsolidation = { nodes: objects.nodes, at: now };
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
      freshBudgets: () => this.freshBudgets(settingsOf, batch),
      describe: (r) => describeRemoval(r, now),
      ...(this.drain ? { drain: this.drain } : {}),
      freshWhatIf: (rs) => this.freshWhatIf(rs),
      cancel: (r) => this.neededByPending(r.node),
      onTainted: (node) => this.tainting.add(node),
      onSettled: (node) => this.tainting.delete(node),
    });
    for (const o of outcomes) {
      const { machine: _m, ...decided } = o.removal;
      const entry: DisruptionReport['removals'][number] = { ...decided, groupId: o.removal.group.id };
      if (o.kind === 'kept') {
        report.kept.push({ node: o.removal.node, why: `on a fresh look: ${o.why}`, reason: o.removal.reason, blockedBy: 'changed' });
        continue;
      }
      if (o.kind === 'gone') continue;
      report.removals.push(entry);
      if (o.kind === 'error') {
        entry.error = o.error;
        this.stats.errors++;
        this.log(`removing node ${o.removal.node} (${o.removal.group.id}) failed: ${o.error}`, { kind: 'Node', name: o.removal.node });
        continue;
      }
      if (o.machine) entry.machine = o.machine;
      entry.result = o.result;
      if (o.kind === 'removed') {
        this.stats.removed++;
        this.removing.set(o.removal.node, { at: clock.now(), reason: `${o.removal.reason}: ${REASON_TEXT[o.removal.reason]}` });
      } else {
        this.declined.set(o.removal.node, clock.now());
      }
    }
    return done();
  }

  /**
   * Old nodes whose cheaper replacement is Ready, to remove now: only when, on this
   * snapshot, their pods fit without them and without new capacity. Otherwise they are
   * untainted and kept (the replacement, empty, goes as any empty node does).
   */
  private async replaced(snapshot: ClusterSnapshot, now: number, report: DisruptionReport): Promise<Removal[]> {
    const out: Removal[] = [];
    const actions = await this.replacements.due(snapshot, now);
    if (actions.length === 0) return out;
    const baseline = snapshot.pendingPods.length > 0 ? await this.deps.solve(snapshot) : undefined;
    for (const action of actions) {
      const what = await evaluateRemoval(snapshot, new Set(action.map((r) => r.node)), this.deps.solve, baseline);
      if (what.kind === 'delete') {
        for (const { replacement: _r, ...r } of action) out.push(r);
        continue;
      }
      await this.replacements.untaint(action);
      for (const r of action) report.kept.push({ node: r.node, why: `its replacement is Ready, but ${what.kind === 'refused' ? what.why : 'its pods would need another new node'}` });
    }
    return out;
  }

  /**
   * Budgets and min sizes on the freshest state, for the re-check after the taint:
   * the pass's own nodes count when taken again, not as already disrupting.
   */
  private freshBudgets(settingsOf: SettingsOf, batch: ReadonlySet<string>): (r: Removal) => string | undefined {
    const objects = this.deps.state.objects();
    const snapshot = withStandalonePools(this.snapshots.build(objects, { strict: false }), objects).snapshot;
    const groups = new Map(snapshot.groups.map((g) => [g.id, g]));
    const nodes = new Map(snapshot.nodes.map((n) => [n.name, n]));
    const paused = pausedGroups(objects);
    const rolling = rollingOutGroups(objects.nodeGroups);
    const allowance = new DisruptionAllowance(
      snapshot, settingsOf, new Set(this.removing.keys()), batch, this.deps.clock.now(), new PdbAllowance(objects.podDisruptionBudgets),
    );
    return (r) => {
      const group = groups.get(r.group.id);
      if (!group) return `${r.group.id} is no longer managed`;
      const pausedWhy = paused.get(group.id) ?? rolling.get(group.id);
      if (pausedWhy) return pausedWhy;
      const uids = new Set(r.podUids);
      const moved = (nodes.get(r.node)?.pods ?? []).filter((p) => uids.has(p.uid));
      const blocked = allowance.blocked(group, r.reason, moved);
      if (!blocked) allowance.take(group, r.reason, moved);
      return blocked?.why;
    };
  }

  /**
   * The delete what-if re-solved on the freshest state, for the nodes that passed the
   * re-check, as one set: pods bound elsewhere since the decision may have taken the room
   * the moved pods were to use. When it refuses, every node with pods to move stays
   * (nodes with none may still go: they move nothing).
   */
  private async freshWhatIf(removals: readonly Removal[]): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    const objects = this.deps.state.objects();
    const predicted = this.opts.extraPendingPods?.(objects);
    const snapshot = withStandalonePools(this.snapshots.build(objects, { strict: false, ...(predicted?.length ? { extraPendingPods: predicted } : {}) }), objects).snapshot;
    const names = new Set(removals.map((r) => r.node));
    const moving = snapshot.nodes.filter((n) => names.has(n.name) && podsToMove(n).length > 0);
    if (moving.length === 0) return out;
    const baseline = snapshot.pendingPods.length > 0 ? await this.deps.solve(snapshot) : undefined;
    const what = await evaluateRemoval(snapshot, names, this.deps.solve, baseline);
    if (what.kind === 'delete') return out;
    const why = what.kind === 'refused' ? what.why : 'its pods would now need a new node';
    for (const n of moving) out.set(n.name, `the what-if re-solved on the fresh state refuses it: ${why}`);
    return out;
  }

  /**
   * Cancellation: why a node being drained must stay after all, or undefined. It must
   * when pods are pending (real ones, not forecasts) that no other existing or in-flight
   * node can take, and this node, untainted, would. Scale-ups do not count: capacity
   * that exists beats capacity that might come.
   */
  private async neededByPending(node: string): Promise<string | undefined> {
    const objects = this.deps.state.objects();
    const built = withStandalonePools(this.snapshots.build(objects, { strict: false }), objects).snapshot;
    if (built.pendingPods.length === 0) return undefined;
    const existingOnly = { ...built, groups: built.groups.map((g) => ({ ...g, maxSize: Math.min(g.maxSize, g.replicas) })) };
    const without = await this.deps.solve(existingOnly);
    if (without.unschedulable.length === 0 && without.scaleUps.every((s) => s.to <= s.from)) return undefined;
    const back = {
      ...existingOnly,
      nodes: existingOnly.nodes.map((n) => (n.name === node ? { ...n, unschedulable: false, taints: withoutDisruptionTaint(n.taints) } : n)),
    };
    const withIt = await this.deps.solve(back);
    const onIt = withIt.placements.filter((p) => 'node' in p && p.node === node).length;
    return onIt > 0 ? `cancelled: ${onIt} pending pod(s) have no other place than this node` : undefined;
  }

  /** Nodes carrying our taint that no pass of ours is working on (a pass cut short, a previous leader). */
  private orphanTaints(objects: ClusterObjects): string[] {
    const out: string[] = [];
    const waiting = this.replacements.oldNodes();
    for (const n of objects.nodes) {
      const name = n.metadata?.name;
      if (name && hasDisruptionTaint(n.spec?.taints) && !this.removing.has(name) && !this.tainting.has(name) && !waiting.has(name)) out.push(name);
    }
    return out;
  }

  /** Takes our taint back from orphaned nodes, unless their Machine is on its way out already. */
  private async untaintOrphans(snapshot: ClusterSnapshot, orphans: readonly string[]): Promise<void> {
    const byName = new Map(snapshot.nodes.map((n) => [n.name, n]));
    for (const name of orphans) {
      if (byName.get(name)?.machine?.leaving) continue;
      try {
        await this.deps.nodes.untaintNode(name);
        this.log(`untainted node ${name}: no removal of it is under way`, { kind: 'Node', name });
      } catch (err) {
        this.log(`untainting node ${name} failed: ${(err as Error).message}`, { kind: 'Node', name });
      }
    }
  }
}

/** Nodes whose Ready condition is not True (or that report none). */
function notReadyNodes(objects: ClusterObjects): Set<string> {
  const out = new Set<string>();
  for (const n of objects.nodes) {
    const ready = n.status?.conditions?.find((c) => c.type === 'Ready');
    if (ready?.status !== 'True' && n.metadata?.name) out.add(n.metadata.name);
  }
  return out;
}

const REASON_TEXT: Record<Removal['reason'], string> = {
  Empty: 'node empty', Underutilized: 'node underutilized', Drifted: 'node drifted', Expired: 'node expired',
};

/** Why a node goes, for the actuator's log and events. */
function describeRemoval(r: Removal, now: number): string {
  const s = Math.round((now - r.since) / 1000);
  if (r.reason === 'Empty') return `node empty (DaemonSet pods only) for ${s} s`;
  if (r.reason === 'Expired') return `node expired (age ${s} s), its pods fit on other nodes`;
  if (r.reason === 'Drifted') return 'node drifted from its NodePool template';
  return `node underutilized (pods unchanged for ${s} s, score ${r.score?.toFixed(2) ?? '-'}), its pods fit on other nodes`;
}
