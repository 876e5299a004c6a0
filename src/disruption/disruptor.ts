import type { KubernetesObject, V1Pod } from '@kubernetes/client-node';
import { parseMachine, parseNodeGroupObject, type MachineView, type NodeGroupView } from '../api/capi.js';
import { NodePoolError, parseNodePool, type NodePoolDisruption } from '../api/nodepool.js';
import type { CapiActuator, ScaleResult } from '../capi/actuator.js';
import { buildSnapshot } from '../cluster/build-snapshot.js';
import { mapNodesToGroups } from '../cluster/node-machine-map.js';
import type { ClusterObjects } from '../cluster/objects.js';
import type { ClusterSnapshot, NodeGroup, SchedulingPod } from '../cluster/snapshot.js';
import type { ClusterStateSource } from '../cluster/state.js';
import type { Clock } from '../provisioning/clock.js';
import { controllerOf } from '../scheduling/pod-demand.js';
import { DEFAULT_DISRUPTION, DisruptionAllowance, type SettingsOf } from './allowance.js';
import { decideEmptiness, followsNode, type Removal, type Skip } from './emptiness.js';
import { decideExpiry, type SolveSnapshot } from './expiry.js';

/**
 * The disruption loop (first slice: emptiness and safe expiry). Same shape as the
 * Provisioner: a ClusterStateSource, a CapiActuator, a Clock and pure decisions,
 * so the simulator runs it unchanged. It tracks since when each node has been
 * empty from state changes; every `intervalMs` it builds a snapshot, decides, and
 * removes the chosen nodes one by one through actuator.deleteMachine (which marks
 * the Machine cluster.x-k8s.io/delete-machine and decrements replicas, never below
 * min size). See docs/adr/0080-disruption-first-slice.md.
 */

/** Node / pod annotations that keep a node (Karpenter's and Cluster Autoscaler's). */
export const DO_NOT_DISRUPT_ANNOTATION = 'karpenter.sh/do-not-disrupt';
export const SCALE_DOWN_DISABLED_ANNOTATION = 'cluster-autoscaler.kubernetes.io/scale-down-disabled';

export interface DisruptorOptions {
  /** How often to decide. Default 10 s. */
  intervalMs?: number;
  /**
   * Changes are folded into empty-since at most this often (each look is O(pods)).
   * Default 1 s; observing late only makes a node look empty for less long.
   */
  observeDelayMs?: number;
  /** consolidateAfter when a group has no NodePool, or its pool does not set it. Default 30 s. */
  defaultConsolidateAfterMs?: number;
  /** Expired nodes removed per pass (each is checked with a solve). Default 1; 0 disables expiry. */
  maxExpiredPerPass?: number;
  /**
   * A removal not yet visible in the state, or one the actuator declined (dry run, min
   * size), is retried after this long. Default 10 min.
   */
  removalTimeoutMs?: number;
  /** Predicted demand (CapacityBuffers, forecasts): capacity it would use is kept. */
  extraPendingPods?: (objects: ClusterObjects) => readonly SchedulingPod[];
}

export interface DisruptorDeps {
  state: ClusterStateSource;
  actuator: CapiActuator;
  clock: Clock;
  /** The real solver: which nodes pending pods will use, and whether expired nodes' pods fit elsewhere. */
  solve: SolveSnapshot;
  log?: (msg: string) => void;
  onPass?: (report: DisruptionReport) => void;
  /** Extra readiness gate, e.g. "every informer is fresh". */
  ready?: () => boolean;
}

export interface DisruptionReport {
  startedAt: number;
  skipped?: 'not-synced';
  removals: Array<Removal & { groupId: string; machine?: string; result?: ScaleResult; error?: string }>;
  kept: Skip[];
  durationMs: number;
}

/** NodePool disruption settings by pool name, and the settings of groups without a pool. */
interface PoolSettings { byPool: Map<string, NodePoolDisruption>; dflt: NodePoolDisruption }

const TERMINAL = new Set(['Succeeded', 'Failed']);

function annotated(o: KubernetesObject | undefined, key: string): boolean {
  return o?.metadata?.annotations?.[key] === 'true';
}

export class Disruptor {
  private readonly opts: Required<Omit<DisruptorOptions, 'extraPendingPods'>> & Pick<DisruptorOptions, 'extraPendingPods'>;
  /** Node -> first observed empty (ms). */
  private readonly emptySince = new Map<string, number>();
  /** Node -> when we asked for its removal, and why (until the node is gone). */
  private readonly removing = new Map<string, { at: number; reason: string }>();
  /** Node -> when the actuator declined to remove it (dry run, min size on fresh state): not retried for a while. */
  private readonly declined = new Map<string, number>();
  /** Pod object -> the node it keeps occupied, or null (see occupiedNodes). */
  private readonly occupies = new WeakMap<V1Pod, string | null>();
  private lastPods: readonly V1Pod[] | undefined;
  private lastOccupied: ReadonlySet<string> = new Set();
  private unsubscribe: (() => void) | undefined;
  private cancelTick: (() => void) | undefined;
  private cancelObserve: (() => void) | undefined;
  private running = false;
  private passing: Promise<void> | undefined;
  readonly stats = { passes: 0, removed: 0, errors: 0 };

  constructor(private readonly deps: DisruptorDeps, options: DisruptorOptions = {}) {
    this.opts = {
      intervalMs: 10_000, observeDelayMs: 1000, defaultConsolidateAfterMs: DEFAULT_DISRUPTION.consolidateAfterMs!, maxExpiredPerPass: 1,
      removalTimeoutMs: 600_000, ...options,
    };
  }

  start(): void {
    if (this.running) return;
    this.running = true;
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
    this.unsubscribe?.();
    this.cancelTick?.();
    this.cancelObserve?.();
    this.cancelObserve = undefined;
    await this.passing;
  }

  /** Nodes Headroom is removing, with the reason (for the extender filter and status). */
  disrupting(): ReadonlyMap<string, string> {
    return new Map([...this.removing].map(([n, r]) => [n, r.reason]));
  }

  /** When each node was first seen empty (a copy). */
  emptyNodes(): ReadonlyMap<string, number> {
    return new Map(this.emptySince);
  }

  private log(msg: string): void {
    this.deps.log?.(msg);
  }

  private scheduleTick(): void {
    this.cancelTick = this.deps.clock.setTimer(this.opts.intervalMs, () => {
      if (!this.running) return;
      this.passing = this.pass()
        .then((r) => this.deps.onPass?.(r))
        .catch((err) => {
          this.stats.errors++;
          this.log(`disruption pass failed: ${(err as Error).message}`);
        })
        .finally(() => {
          this.passing = undefined;
          if (this.running) this.scheduleTick();
        });
    });
  }

  /** Updates empty-since from the current objects: a node is empty when only DaemonSet / mirror pods are bound to it. */
  observe(): void {
    if (!this.deps.state.synced()) return;
    const objects = this.deps.state.objects();
    const now = this.deps.clock.now();
    const occupied = this.occupiedNodes(objects.pods as V1Pod[]);
    const present = new Set<string>();
    for (const n of objects.nodes) {
      const name = n.metadata?.name;
      if (!name) continue;
      present.add(name);
      if (occupied.has(name)) this.emptySince.delete(name);
      else if (!this.emptySince.has(name)) this.emptySince.set(name, now);
    }
    for (const name of this.emptySince.keys()) if (!present.has(name)) this.emptySince.delete(name);
    for (const [name, r] of this.removing) {
      if (!present.has(name) || now - r.at > this.opts.removalTimeoutMs) this.removing.delete(name);
    }
    for (const [name, at] of this.declined) {
      if (!present.has(name) || now - at > this.opts.removalTimeoutMs) this.declined.delete(name);
    }
  }

  /**
   * Nodes with a pod that keeps them (bound, not terminal, not following its node).
   * Objects are immutable (ClusterStateSource), so the answer is kept per pod object
   * and per pods list: most observations see the same list or mostly the same pods.
   */
  private occupiedNodes(pods: readonly V1Pod[]): ReadonlySet<string> {
    if (pods === this.lastPods) return this.lastOccupied;
    const occupied = new Set<string>();
    for (const pod of pods) {
      let node = this.occupies.get(pod);
      if (node === undefined) {
        const bound = pod.spec?.nodeName;
        node = bound && !TERMINAL.has(pod.status?.phase ?? '') && !followsNode(controllerOf(pod)?.kind) ? bound : null;
        this.occupies.set(pod, node);
      }
      if (node !== null) occupied.add(node);
    }
    this.lastPods = pods;
    this.lastOccupied = occupied;
    return occupied;
  }

  /** NodePool disruption settings by pool name (a pool that does not set consolidateAfter gets the default), and the default. */
  private poolSettings(objects: ClusterObjects): PoolSettings {
    const byPool = new Map<string, NodePoolDisruption>();
    for (const o of objects.nodePools) {
      try {
        const p = parseNodePool(o);
        const raw = (o.spec?.disruption as { consolidateAfter?: unknown } | undefined)?.consolidateAfter;
        byPool.set(p.name, raw === undefined ? { ...p.disruption, consolidateAfterMs: this.opts.defaultConsolidateAfterMs } : p.disruption);
      } catch (err) {
        if (!(err instanceof NodePoolError)) throw err; // reported by buildSnapshot's onIssue elsewhere
      }
    }
    return { byPool, dflt: { ...DEFAULT_DISRUPTION, consolidateAfterMs: this.opts.defaultConsolidateAfterMs } };
  }

  private settings({ byPool, dflt }: PoolSettings): SettingsOf {
    return (g: NodeGroup) => (g.nodePool ? byPool.get(g.nodePool) : undefined) ?? dflt;
  }

  /** True when expiry may remove nodes: it is enabled and some pool (or the default) sets expireAfter. */
  private expiryOn({ byPool, dflt }: PoolSettings): boolean {
    return this.opts.maxExpiredPerPass > 0 && [dflt, ...byPool.values()].some((d) => d.expireAfterMs !== null);
  }

  /**
   * False only when no decision of this pass can remove a node: expiry is off (or no
   * pool sets expireAfter) and no node has been empty for the shortest consolidateAfter.
   */
  private mayRemove(pools: PoolSettings, now: number): boolean {
    if (this.expiryOn(pools)) return true;
    let after = Infinity;
    for (const d of [pools.dflt, ...pools.byPool.values()]) if (d.consolidateAfterMs !== null) after = Math.min(after, d.consolidateAfterMs);
    for (const since of this.emptySince.values()) if (now - since >= after) return true;
    return false;
  }

  /** Nodes that must stay this pass: do-not-disrupt, already being removed, or where pending pods will land. */
  private async keep(objects: ClusterObjects, snapshot: ClusterSnapshot, due: boolean, expiryOn: boolean): Promise<Set<string>> {
    const keep = new Set<string>([...this.removing.keys(), ...this.declined.keys()]);
    for (const n of objects.nodes) {
      if (annotated(n, DO_NOT_DISRUPT_ANNOTATION) || annotated(n, SCALE_DOWN_DISABLED_ANNOTATION)) keep.add(n.metadata!.name!);
    }
    // Only pods on nodes that could be removed matter: without expiry, those are the empty ones.
    const candidates = expiryOn ? undefined : this.emptySince;
    for (const p of objects.pods) {
      const node = p.spec?.nodeName;
      if (node && (!candidates || candidates.has(node)) && annotated(p, DO_NOT_DISRUPT_ANNOTATION)) keep.add(node);
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
    const pools = this.poolSettings(objects);
    const settingsOf = this.settings(pools);
    const now = clock.now();
    // Nothing could be removed this pass: skip the snapshot and every decision (same outcome, far cheaper).
    if (!this.mayRemove(pools, now)) return done();
    const snapshot = buildSnapshot(objects, {
      strict: false,
      ...(this.opts.extraPendingPods ? { extraPendingPods: this.opts.extraPendingPods(objects) } : {}),
    });
    const disrupting = new Set(this.removing.keys());
    // The solve for pending pods is only worth it when an empty node is due at all.
    const due = decideEmptiness({
      snapshot, emptySince: this.emptySince, now, settingsOf, allowance: new DisruptionAllowance(snapshot, settingsOf, disrupting),
    }).remove.length > 0;
    const keep = await this.keep(objects, snapshot, due, this.expiryOn(pools));
    const allowance = new DisruptionAllowance(snapshot, settingsOf, disrupting);
    const empty = decideEmptiness({ snapshot, emptySince: this.emptySince, now, settingsOf, allowance, keep });
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
    if (removals.length === 0) return done();

    const machines = this.machineOfNode(objects);
    // Serial on purpose: the actuator re-reads each group (and its min size) before it writes.
    for (const r of removals) {
      const entry: DisruptionReport['removals'][number] = { ...r, groupId: r.group.id };
      report.removals.push(entry);
      const m = machines.get(r.node);
      if (!m) {
        entry.error = 'no Machine found for the node';
        continue;
      }
      entry.machine = `${m.namespace}/${m.name}`;
      const reason = r.reason === 'Empty'
        ? `node empty (DaemonSet pods only) for ${Math.round((now - r.since) / 1000)} s`
        : `node expired (age ${Math.round((now - r.since) / 1000)} s), its pods fit on other nodes`;
      try {
        entry.result = await actuator.deleteMachine(
          { kind: r.group.kind, namespace: r.group.namespace, name: r.group.name },
          { namespace: m.namespace, name: m.name, nodeName: r.node }, reason,
        );
        if (entry.result.written) {
          this.stats.removed++;
          this.removing.set(r.node, { at: clock.now(), reason: `${r.reason}: ${reason}` });
        } else {
          this.declined.set(r.node, clock.now());
        }
      } catch (err) {
        entry.error = (err as Error).message;
        this.stats.errors++;
        this.log(`removing node ${r.node} (${r.group.id}) failed: ${entry.error}`);
      }
    }
    return done();
  }

  /** Node -> Machine through the shared node<->machine map (src/cluster/node-machine-map.ts). */
  private machineOfNode(objects: ClusterObjects): Map<string, MachineView> {
    const views: NodeGroupView[] = [];
    for (const o of objects.nodeGroups) {
      try { views.push(parseNodeGroupObject(o)); } catch { /* reported by buildSnapshot */ }
    }
    const machines: MachineView[] = [];
    for (const o of objects.machines) {
      try { machines.push(parseMachine(o)); } catch { /* idem */ }
    }
    return mapNodesToGroups(objects.nodes, machines, views).machineOfNode;
  }
}
