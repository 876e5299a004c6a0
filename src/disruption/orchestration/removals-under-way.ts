import type { LogSubject } from '../../api/log.js';
import type { DisruptionReport } from '../disruption-report.js';
import { REASON_TEXT } from '../removal.js';
import type { Outcome } from './execute.js';

/**
 * The removals the loop has under way between passes (Karpenter's orchestration queue):
 * nodes asked to go, until they are gone or the removal times out; nodes the actuator
 * declined (dry run, min size on fresh state), not retried for a while; and the nodes
 * the running pass has tainted. Every decision leaves them alone, and the extender is
 * told about them.
 */
export class RemovalsUnderWay {
  /** Node -> when we asked for its removal, and why (until the node is gone). */
  private readonly removing = new Map<string, { at: number; reason: string }>();
  /** Node -> when the actuator declined to remove it: not retried for a while. */
  private readonly declined = new Map<string, number>();
  /** Nodes tainted by the running pass, not yet removed or untainted. */
  private readonly tainting = new Set<string>();

  /** `timeoutMs`: a removal not yet visible in the state, or a declined one, is retried after this long. */
  constructor(private readonly timeoutMs: number) {}

  /** Forgets the nodes that are gone (not in `present`) and the removals older than the timeout. */
  prune(present: { has(node: string): boolean }, now: number): void {
    for (const [name, r] of this.removing) {
      if (!present.has(name) || now - r.at > this.timeoutMs) this.removing.delete(name);
    }
    for (const [name, at] of this.declined) {
      if (!present.has(name) || now - at > this.timeoutMs) this.declined.delete(name);
    }
  }

  /** Nodes asked to go. */
  removingNodes(): Set<string> {
    return new Set(this.removing.keys());
  }

  /** True while some node is asked to go. */
  anyRemoving(): boolean {
    return this.removing.size > 0;
  }

  /** Nodes a pass must keep: asked to go, or declined a while ago. */
  held(): string[] {
    return [...this.removing.keys(), ...this.declined.keys()];
  }

  /** True when a removal of ours is working on the node: asked to go, or tainted by the running pass. */
  working(node: string): boolean {
    return this.removing.has(node) || this.tainting.has(node);
  }

  tainted(node: string): void {
    this.tainting.add(node);
  }

  settled(node: string): void {
    this.tainting.delete(node);
  }

  /** Nodes being removed, with the reason; then those tainted by the running pass, then `waiting` (for a replacement). */
  disrupting(waiting: Iterable<string>): Map<string, string> {
    const out = new Map([...this.removing].map(([n, r]) => [n, r.reason]));
    for (const n of this.tainting) if (!out.has(n)) out.set(n, 'tainted for removal, being re-checked');
    for (const n of waiting) if (!out.has(n)) out.set(n, 'waiting for its replacement (a new node) to be Ready');
    return out;
  }

  /**
   * Records what execution did with each removal, in `report` and here (removed: under
   * way until the node is gone; declined: not retried for a while). Returns the counts
   * for the loop's stats.
   */
  record(
    outcomes: readonly Outcome[], report: DisruptionReport, now: () => number, log: (msg: string, about?: LogSubject) => void,
  ): { removed: number; errors: number } {
    const counts = { removed: 0, errors: 0 };
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
        counts.errors++;
        log(`removing node ${o.removal.node} (${o.removal.group.id}) failed: ${o.error}`, { kind: 'Node', name: o.removal.node });
        continue;
      }
      if (o.machine) entry.machine = o.machine;
      entry.result = o.result;
      if (o.kind === 'removed') {
        counts.removed++;
        this.removing.set(o.removal.node, { at: now(), reason: `${o.removal.reason}: ${REASON_TEXT[o.removal.reason]}` });
      } else {
        this.declined.set(o.removal.node, now());
      }
    }
    return counts;
  }
}
