import type { CapiActuator, NodeGroupRef, ScaleResult } from '../../capi/actuator.js';
import type { Clock } from '../../provisioning/clock.js';
import { STANDALONE_GROUP_PREFIX } from '../../provisioning/standalone.js';
import type { Removal } from '../removal.js';
import { invalidated } from '../validation.js';
import type { DisruptionNodePort } from './node-port.js';
import type { Log } from '../../api/log.js';

/**
 * Carries out a pass's removals, apart from the decisions (Karpenter's
 * disruption/orchestration): taint every chosen node NoSchedule, let the taint
 * reach kube-scheduler, read each node again fresh and re-check it (pods,
 * do-not-disrupt, budgets), then remove its Machine, or untaint it when the check
 * fails. See docs/adr/0081-disruption-taint-recheck.md.
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
  // Serial on purpose: the actuator re-reads each group (and its min size) before it writes.
  for (const r of tainted) {
    outcomes.push(await settle(r, deps, opts, budgets));
    opts.onSettled?.(r.node);
  }
  return outcomes;
}

async function settle(r: Removal, deps: ExecutionDeps, opts: ExecutionOptions, budgets: ((r: Removal) => string | undefined) | undefined): Promise<Outcome> {
  const untaint = async (): Promise<string | undefined> => {
    try {
      await deps.nodes.untaintNode(r.node);
      return undefined;
    } catch (err) {
      deps.log(`untainting node ${r.node} failed: ${(err as Error).message}`, { kind: 'Node', name: r.node });
      return (err as Error).message;
    }
  };
  try {
    if (!budgets || !opts.mayAct()) {
      await untaint();
      return { removal: r, kind: 'kept', why: 'disruption stopped before the removal' };
    }
    const fresh = await deps.nodes.readNode(r.node);
    if (!fresh) return { removal: r, kind: 'gone' };
    const why = invalidated(r, fresh) ?? budgets(r);
    if (why) {
      await untaint();
      return { removal: r, kind: 'kept', why };
    }
    const reason = opts.describe(r);
    let result: ScaleResult;
    let machine: string | undefined;
    if (r.machine && r.group.name.startsWith(STANDALONE_GROUP_PREFIX)) {
      // A standalone Machine (NodePool machineTemplate) belongs to no group: it is deleted.
      machine = `${r.machine.namespace}/${r.machine.name}`;
      await deps.actuator.deleteStandaloneMachine({ namespace: r.machine.namespace, name: r.machine.name, nodeName: r.node }, reason);
      result = { replicas: r.group.replicas - 1, written: true };
    } else if (r.machine) {
      machine = `${r.machine.namespace}/${r.machine.name}`;
      result = await deps.actuator.deleteMachine(groupRef(r), { namespace: r.machine.namespace, name: r.machine.name, nodeName: r.node }, reason);
    } else {
      // A MachinePool without Machines: every node of it is empty, so whichever the provider removes is.
      const from = await deps.actuator.getReplicas(groupRef(r));
      result = await deps.actuator.scaleTo(groupRef(r), from, from - 1, reason);
    }
    if (!result.written) {
      await untaint();
      return { removal: r, kind: 'declined', result, ...(machine ? { machine } : {}) };
    }
    return { removal: r, kind: 'removed', result, ...(machine ? { machine } : {}) };
  } catch (err) {
    await untaint();
    return { removal: r, kind: 'error', error: (err as Error).message };
  }
}
