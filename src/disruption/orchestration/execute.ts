import type { CapiActuator, NodeGroupRef, ScaleResult } from '../../capi/actuator.js';
import type { Clock } from '../../provisioning/clock.js';
import { STANDALONE_GROUP_PREFIX } from '../../provisioning/standalone.js';
import type { Removal } from '../removal.js';
import { invalidated } from '../validation.js';
import { drainNode, withoutTerminating, type DrainOptions } from './drain.js';
import type { DisruptionNodePort, FreshNode } from './node-port.js';
import type { Log } from '../../api/log.js';

/**
 * Carries out a pass's removals, apart from the decisions (Karpenter's
 * disruption/orchestration): taint every chosen node NoSchedule, let the taint
 * reach kube-scheduler, read each node again fresh and re-check it (pods,
 * do-not-disrupt, budgets), drain the nodes that pass through the Eviction API
 * (drain.ts, all at once; a pod bound meanwhile stops the drain), read each node a last
 * time (the same check), then remove the Machines, one replicas write per group
 * (deleteMachines: each marked cluster.x-k8s.io/delete-machine, then replicas lowered
 * by their number), or untaint the node when the check fails, the drain is given up
 * or cancelled. See
 * docs/adr/0081-disruption-taint-recheck.md and 0082-eviction-and-capi-drain.md.
 */

export interface ExecutionDeps {
  actuator: CapiActuator;
  nodes: DisruptionNodePort;
  clock: Clock;
  log: Log;
}

export interface ExecutionOptions {
  /** Wait between tainting and the fresh look, for kube-scheduler and the extender to see the taint. */
  settleMs: number;
  /** False once the loop is stopping (or leadership is lost): nothing more is removed, the taints are taken back. */
  mayAct: () => boolean;
  /** Built after the wait from the freshest state: why a removal would now exceed a budget or min size (and takes it when not). */
  freshBudgets: () => (removal: Removal) => string | undefined;
  /** Why the node goes, for the actuator's log and events. */
  describe: (removal: Removal) => string;
  /** Drain settings; without them (or without an eviction port) CAPI's drain evicts the pods. */
  drain?: Omit<DrainOptions, 'mayAct' | 'cancel'>;
  /**
   * The what-if re-solved on the freshest state for the nodes that passed the re-check,
   * together: node -> why it must stay (its pods no longer fit elsewhere). Nodes not in
   * the answer may go.
   */
  freshWhatIf?: (removals: readonly Removal[]) => Promise<ReadonlyMap<string, string>>;
  /** Why a node being drained must be kept after all (pending pods need it), or undefined. */
  cancel?: (removal: Removal) => Promise<string | undefined>;
  /** Pods below this priority go with their node (expendable); default -10. */
  expendablePodsPriorityCutoff?: number;
  /** Called when a node is tainted, and when it is settled (removed, untainted or failed). */
  onTainted?: (node: string) => void;
  onSettled?: (node: string) => void;
}

export type Outcome =
  | { removal: Removal; kind: 'removed'; result: ScaleResult; machine?: string }
  | { removal: Removal; kind: 'declined'; result: ScaleResult; machine?: string }
  | { removal: Removal; kind: 'kept'; why: string }
  | { removal: Removal; kind: 'gone' }
  | { removal: Removal; kind: 'error'; error: string };

function groupRef(r: Removal): NodeGroupRef {
  return { kind: r.group.kind, namespace: r.group.namespace, name: r.group.name };
}

export async function executeRemovals(removals: readonly Removal[], deps: ExecutionDeps, opts: ExecutionOptions): Promise<Outcome[]> {
  const outcomes: Outcome[] = [];
  const tainted: Removal[] = [];
  for (const r of removals) {
    if (!opts.mayAct()) break;
    try {
      opts.onTainted?.(r.node);
      await deps.nodes.taintNode(r.node);
      tainted.push(r);
    } catch (err) {
      opts.onSettled?.(r.node);
      outcomes.push({ removal: r, kind: 'error', error: `tainting the node failed: ${(err as Error).message}` });
    }
  }
  if (tainted.length === 0) return outcomes;
  if (opts.settleMs > 0) await new Promise<void>((resolve) => deps.clock.setTimer(opts.settleMs, resolve));
  const budgets = opts.mayAct() ? opts.freshBudgets() : undefined;
  const untaint = async (r: Removal): Promise<void> => {
    try {
      await deps.nodes.untaintNode(r.node);
    } catch (err) {
      deps.log(`untainting node ${r.node} failed: ${(err as Error).message}`, { kind: 'Node', name: r.node });
    }
  };
  const finish = (o: Outcome) => {
    outcomes.push(o);
    opts.onSettled?.(o.removal.node);
  };
  // 1. The fresh re-check, node by node (budgets are taken in order).
  const checked: Removal[] = [];
  for (const r of tainted) {
    const o = await recheck(r, deps, opts, budgets, untaint);
    if (o) finish(o);
    else checked.push(r);
  }
  // 1b. The what-if again, on the state as it is now: pods bound elsewhere meanwhile may have taken the room.
  if (checked.length > 0 && opts.freshWhatIf && opts.mayAct()) {
    let refused: ReadonlyMap<string, string>;
    try {
      refused = await opts.freshWhatIf(checked);
    } catch (err) {
      refused = new Map(checked.map((r) => [r.node, `the fresh what-if failed: ${(err as Error).message}`]));
    }
    for (let i = checked.length - 1; i >= 0; i--) {
      const r = checked[i]!;
      const why = refused.get(r.node);
      if (why === undefined) continue;
      checked.splice(i, 1);
      await untaint(r);
      finish({ removal: r, kind: 'kept', why });
    }
  }
  // 2. Drain every node that passed, at once (each waits on its own pods' grace periods),
  // then look once more: a pod bound since the re-check (kube-scheduler not yet seeing the
  // taint) was never given a place, so its node stays.
  const invalid = (r: Removal) => (fresh: FreshNode) => invalidated(r, fresh, opts.expendablePodsPriorityCutoff);
  const drained = await Promise.all(checked.map(async (r): Promise<Removal | undefined> => {
    if (opts.drain && deps.nodes.evictPod) {
      try {
        const d = await drainNode(r.node, deps.nodes, deps.clock, {
          ...opts.drain, mayAct: opts.mayAct, invalid: invalid(r), ...(opts.cancel ? { cancel: () => opts.cancel!(r) } : {}),
        });
        if (!d.drained) {
          await untaint(r);
          finish({ removal: r, kind: 'kept', why: d.why });
          return undefined;
        }
      } catch (err) {
        await untaint(r);
        finish({ removal: r, kind: 'error', error: `draining the node failed: ${(err as Error).message}` });
        return undefined;
      }
    }
    const o = await lastLook(r, deps, invalid(r), untaint);
    if (!o) return r;
    finish(o);
    return undefined;
  }));
  // 3. One write per group: the Machines of a group go in one deleteMachines (the actuator
  // re-reads the group and its min size before it writes). Groups one after another.
  for (const batch of byGroup(drained.filter((r): r is Removal => r !== undefined))) {
    for (const o of await removeBatch(batch, deps, opts, untaint)) finish(o);
  }
  return outcomes;
}

/**
 * The removals of one group together (its Machines; or the nodes of a MachinePool without
 * Machines); a standalone Machine alone. In first-seen order.
 */
function byGroup(removals: readonly Removal[]): Removal[][] {
  const out: Removal[][] = [];
  const groups = new Map<string, Removal[]>();
  for (const r of removals) {
    if (r.machine && r.group.name.startsWith(STANDALONE_GROUP_PREFIX)) {
      out.push([r]);
      continue;
    }
    const key = `${r.group.id}${r.machine ? '' : ' (no Machines)'}`;
    let batch = groups.get(key);
    if (!batch) {
      batch = [];
      groups.set(key, batch);
      out.push(batch);
    }
    batch.push(r);
  }
  return out;
}

/**
 * Removes one group's batch with one replicas write: its Machines through deleteMachines
 * (each marked cluster.x-k8s.io/delete-machine), or a MachinePool without Machines by
 * replicas (every node of it is empty, so whichever the provider removes is). The
 * removals min size does not allow on the fresh read are declined and untainted.
 */
async function removeBatch(batch: readonly Removal[], deps: ExecutionDeps, opts: ExecutionOptions, untaint: (r: Removal) => Promise<void>): Promise<Outcome[]> {
  const first = batch[0]!;
  if (first.machine && first.group.name.startsWith(STANDALONE_GROUP_PREFIX)) return [await remove(first, deps, opts, untaint)];
  const machineOf = (r: Removal) => (r.machine ? { machine: `${r.machine.namespace}/${r.machine.name}` } : {});
  const keptAll = async (why: string, kind: 'kept' | 'error'): Promise<Outcome[]> => {
    for (const r of batch) await untaint(r);
    return batch.map((r) => (kind === 'kept' ? { removal: r, kind, why } : { removal: r, kind, error: why }));
  };
  if (!opts.mayAct()) return keptAll('disruption stopped before the removal', 'kept');
  /** Whether the i-th removal of the batch went. */
  let went: (r: Removal, i: number) => boolean;
  let result: ScaleResult;
  try {
    if (first.machine) {
      const r = await deps.actuator.deleteMachines(groupRef(first), batch.map((x) => ({
        machine: { namespace: x.machine!.namespace, name: x.machine!.name, nodeName: x.node }, reason: opts.describe(x),
      })));
      const removed = new Set(r.removed);
      result = { replicas: r.replicas, written: r.written };
      went = (x) => r.written && removed.has(x.machine!.name);
    } else {
      const from = await deps.actuator.getReplicas(groupRef(first));
      result = await deps.actuator.scaleTo(groupRef(first), from, from - batch.length, batch.map((x) => opts.describe(x)).join('; '));
      const count = result.written ? Math.max(0, from - result.replicas) : 0;
      went = (_x, i) => i < count;
    }
  } catch (err) {
    return keptAll((err as Error).message, 'error');
  }
  const out: Outcome[] = [];
  for (const [i, r] of batch.entries()) {
    if (went(r, i)) {
      out.push({ removal: r, kind: 'removed', result, ...machineOf(r) });
      continue;
    }
    await untaint(r);
    out.push({ removal: r, kind: 'declined', result: { ...result, written: false }, ...machineOf(r) });
  }
  return out;
}

/** The fresh look: an outcome when the node must not go (or is gone), undefined when it may. */
async function recheck(
  r: Removal, deps: ExecutionDeps, opts: ExecutionOptions, budgets: ((r: Removal) => string | undefined) | undefined, untaint: (r: Removal) => Promise<void>,
): Promise<Outcome | undefined> {
  try {
    if (!budgets || !opts.mayAct()) {
      await untaint(r);
      return { removal: r, kind: 'kept', why: 'disruption stopped before the removal' };
    }
    const fresh = await deps.nodes.readNode(r.node);
    if (!fresh) return { removal: r, kind: 'gone' };
    const why = invalidated(r, fresh, opts.expendablePodsPriorityCutoff) ?? budgets(r);
    if (why) {
      await untaint(r);
      return { removal: r, kind: 'kept', why };
    }
    return undefined;
  } catch (err) {
    await untaint(r);
    return { removal: r, kind: 'error', error: (err as Error).message };
  }
}

/**
 * The read just before the Machine goes (after the drain, if any): an outcome when the
 * node must stay after all (or is gone), undefined when it may go. Pods already
 * terminating are leaving anyway and do not count.
 */
async function lastLook(r: Removal, deps: ExecutionDeps, invalid: (fresh: FreshNode) => string | undefined, untaint: (r: Removal) => Promise<void>): Promise<Outcome | undefined> {
  try {
    const fresh = await deps.nodes.readNode(r.node);
    if (!fresh) return { removal: r, kind: 'gone' };
    const why = invalid(withoutTerminating(fresh));
    if (!why) return undefined;
    await untaint(r);
    return { removal: r, kind: 'kept', why };
  } catch (err) {
    await untaint(r);
    return { removal: r, kind: 'error', error: `the last look at the node failed: ${(err as Error).message}` };
  }
}

/** A standalone Machine (NodePool machineTemplate) belongs to no group: it is deleted. */
async function remove(r: Removal, deps: ExecutionDeps, opts: ExecutionOptions, untaint: (r: Removal) => Promise<void>): Promise<Outcome> {
  try {
    if (!opts.mayAct()) {
      await untaint(r);
      return { removal: r, kind: 'kept', why: 'disruption stopped before the removal' };
    }
    const machine = `${r.machine!.namespace}/${r.machine!.name}`;
    await deps.actuator.deleteStandaloneMachine({ namespace: r.machine!.namespace, name: r.machine!.name, nodeName: r.node }, opts.describe(r));
    return { removal: r, kind: 'removed', result: { replicas: r.group.replicas - 1, written: true }, machine };
  } catch (err) {
    await untaint(r);
    return { removal: r, kind: 'error', error: (err as Error).message };
  }
}
