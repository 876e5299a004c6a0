import type { CapiActuator } from '../../capi/actuator.js';
import type { ClusterSnapshot } from '../../cluster/snapshot.js';
import { STANDALONE_GROUP_PREFIX, standaloneMachineName } from '../../provisioning/standalone.js';
import type { SolveSnapshot } from '../expiry.js';
import type { Removal, Skip } from '../removal.js';
import { evaluateRemoval } from '../what-if.js';
import type { DisruptionNodePort } from './node-port.js';

/**
 * A consolidation that replaces nodes by one cheaper node, or a drifted node replaced
 * by a new one, carried out as Karpenter does: taint the old nodes so nothing new lands
 * there, scale the new node's group up by one (a standalone NodePool: create one
 * Machine from its current template), and only once that group shows a new Ready node hand the old nodes to the
 * usual removal (taint, fresh re-check, delete-machine). A replacement that does not
 * come within `timeoutMs` is given up: the old nodes are untainted and kept.
 */

interface Pending {
  removals: Removal[];
  at: number;
  /** Nodes of the replacement group when it was scaled up: a node not among them is the replacement. */
  known: ReadonlySet<string>;
}

export interface ReplacementDeps {
  actuator: CapiActuator;
  nodes: DisruptionNodePort;
  log: (msg: string) => void;
}

export class Replacements {
  private readonly pending: Pending[] = [];

  constructor(private readonly deps: ReplacementDeps, private readonly timeoutMs: number) {}

  /** Old nodes waiting for their replacement. */
  oldNodes(): Set<string> {
    return new Set(this.pending.flatMap((p) => p.removals.map((r) => r.node)));
  }

  /** Nodes to keep: the old ones, and every node of a replacement group that came after its scale-up (the replacement itself). */
  keep(snapshot: ClusterSnapshot): Set<string> {
    const keep = this.oldNodes();
    for (const p of this.pending) {
      const g = p.removals[0]!.replacement!.group.id;
      for (const n of snapshot.nodes) if (n.groupId === g && !p.known.has(n.name)) keep.add(n.name);
    }
    return keep;
  }

  /** Taints the old nodes and scales the replacement group up by one; false (and untainted) when that could not be done. */
  async begin(removals: Removal[], snapshot: ClusterSnapshot, now: number, reason: string): Promise<boolean> {
    const target = removals[0]?.replacement;
    if (!target) return false;
    const group = snapshot.groups.find((g) => g.id === target.group.id) ?? target.group;
    const tainted: string[] = [];
    const undo = async () => {
      for (const n of tainted) await this.deps.nodes.untaintNode(n).catch((err: Error) => this.deps.log(`untainting node ${n} failed: ${err.message}`));
    };
    try {
      for (const r of removals) {
        await this.deps.nodes.taintNode(r.node);
        tainted.push(r.node);
      }
      if (group.name.startsWith(STANDALONE_GROUP_PREFIX) && group.nodePool) {
        // A standalone NodePool has no replicas to raise: one more Machine from its (current) template.
        const machines = snapshot.nodes.filter((n) => n.groupId === group.id).map((n) => n.machine?.name ?? n.name.slice(n.name.indexOf('/') + 1));
        await this.deps.actuator.createMachine({
          name: standaloneMachineName(group.nodePool, machines, 0), nodePool: group.nodePool, namespace: group.namespace, clusterName: group.clusterName, reason,
        });
      } else {
        const ref = { kind: group.kind, namespace: group.namespace, name: group.name };
        const from = await this.deps.actuator.getReplicas(ref);
        const result = await this.deps.actuator.scaleTo(ref, from, from + 1, reason);
        if (!result.written) {
          await undo();
          return false;
        }
      }
    } catch (err) {
      this.deps.log(`replacing ${removals.map((r) => r.node).join(', ')} failed: ${(err as Error).message}`);
      await undo();
      return false;
    }
    const known = new Set(snapshot.nodes.filter((n) => n.groupId === group.id).map((n) => n.name));
    this.pending.push({ removals, at: now, known });
    return true;
  }

  /**
   * Actions whose replacement is Ready (taken out of the pending list: the caller
   * removes their old nodes or keeps them), after untainting those that timed out.
   */
  async due(snapshot: ClusterSnapshot, now: number): Promise<Removal[][]> {
    const ready: Removal[][] = [];
    for (let i = this.pending.length - 1; i >= 0; i--) {
      const p = this.pending[i]!;
      const g = p.removals[0]!.replacement!.group.id;
      const arrived = snapshot.nodes.some((n) => n.groupId === g && !n.inFlight && !p.known.has(n.name));
      if (arrived) {
        this.pending.splice(i, 1);
        ready.push(p.removals);
      } else if (now - p.at > this.timeoutMs) {
        this.pending.splice(i, 1);
        this.deps.log(`replacement for ${p.removals.map((r) => r.node).join(', ')} did not become Ready in time: keeping them`);
        await this.untaint(p.removals);
      }
    }
    return ready;
  }

  /**
   * Old nodes whose replacement is Ready, to remove now: only when, on this snapshot,
   * their pods fit without them and without new capacity. Otherwise they are untainted
   * and kept, with why (the replacement, empty, goes as any empty node does).
   */
  async readyToRemove(snapshot: ClusterSnapshot, now: number, solve: SolveSnapshot): Promise<{ remove: Removal[]; kept: Skip[] }> {
    const out: { remove: Removal[]; kept: Skip[] } = { remove: [], kept: [] };
    const actions = await this.due(snapshot, now);
    if (actions.length === 0) return out;
    const baseline = snapshot.pendingPods.length > 0 ? await solve(snapshot) : undefined;
    for (const action of actions) {
      const what = await evaluateRemoval(snapshot, new Set(action.map((r) => r.node)), solve, baseline);
      if (what.kind === 'delete') {
        for (const { replacement: _r, ...r } of action) out.remove.push(r);
        continue;
      }
      await this.untaint(action);
      for (const r of action) out.kept.push({ node: r.node, why: `its replacement is Ready, but ${what.kind === 'refused' ? what.why : 'its pods would need another new node'}` });
    }
    return out;
  }

  /** Takes the taint back from an action's old nodes. */
  async untaint(removals: readonly Removal[]): Promise<void> {
    for (const r of removals) await this.deps.nodes.untaintNode(r.node).catch((err: Error) => this.deps.log(`untainting node ${r.node} failed: ${err.message}`));
  }

  /** Gives every pending replacement up (stopping): the old nodes are untainted. */
  async abandon(): Promise<void> {
    const all = this.pending.splice(0);
    for (const p of all) await this.untaint(p.removals);
  }
}
