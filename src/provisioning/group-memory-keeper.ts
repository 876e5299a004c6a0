import type { LogSubject } from '../api/log.js';
import type { NodeGroupRef } from '../capi/actuator.js';
import type { GroupMemoryStore } from '../capi/group-memory.js';
import type { ClusterObjects } from '../cluster/objects.js';
import type { ClusterStateSource } from '../cluster/state.js';
import type { Clock } from './clock.js';
import type { GroupBackoff } from './provision-failures.js';
import type { ScaleUpJudge } from './scale-up-judge.js';
import { SCALE_UP_MEMORY_ANNOTATION, encodeGroupMemory, restoreGroupMemories } from './scale-up-memory.js';
import { checkTerm } from './solve-deadline.js';

export interface GroupMemoryKeeperDeps {
  /** Where the memory is kept; none (the simulator): it lasts this provisioner. */
  store: GroupMemoryStore | undefined;
  backoff: GroupBackoff;
  judge: ScaleUpJudge;
  state: ClusterStateSource;
  clock: Clock;
  /** The leadership term: checked before each write. */
  term: AbortSignal | undefined;
  log: (msg: string, about?: LogSubject) => void;
}

/**
 * Each group's back-off and its scale-ups awaiting judgement, kept on the group for
 * the next leader (ADR 0120): taken over on the first synced cycle, and stored again
 * whenever they change (scale-up-memory.ts encodes and parses them).
 */
export class GroupMemoryKeeper {
  /** Whether a previous leader's memory was read from the groups yet (first synced cycle). */
  private restored = false;
  /** Each group's memory as last stored or found on it, encoded: what is there now. */
  private readonly stored = new Map<string, string>();

  constructor(private readonly deps: GroupMemoryKeeperDeps) {}

  /**
   * Takes over what a previous leader kept on the groups, once: their back-offs, and
   * the scale-ups it wrote that are still to be judged. Memory only ever holds a group.
   */
  restoreOnce(objects: ClusterObjects): void {
    if (this.restored) return;
    this.restored = true;
    const { groups, raw, errors } = restoreGroupMemories(objects.nodeGroups);
    for (const e of errors) this.deps.log(`ignoring unreadable scale-up memory: ${e}`);
    for (const [id, value] of raw) this.stored.set(id, value);
    for (const [id, memory] of groups) {
      if (memory.backoff) this.deps.backoff.restore(id, memory.backoff);
      this.deps.judge.restore(memory.scaleUps);
    }
    if (groups.size > 0) this.deps.log(`restored the scale-up memory of ${groups.size} group(s) from their ${SCALE_UP_MEMORY_ANNOTATION} annotation`);
  }

  /** Stores every group's memory that changed since it was last stored (one patch per such group). */
  async storeAll(): Promise<void> {
    if (!this.deps.store) return;
    const ids = new Set([...this.stored.keys(), ...this.deps.backoff.groups(), ...this.deps.judge.groupIds()]);
    for (const id of ids) await this.store(id);
  }

  /**
   * Stores `groupId`'s back-off and open scale-ups on the group, if they changed. A failed
   * write is logged and retried next cycle: memory only delays scale-ups, it never blocks one.
   */
  async store(groupId: string): Promise<void> {
    const store = this.deps.store;
    if (!store) return;
    const backoff = this.deps.backoff.kept(groupId, this.deps.clock.now());
    const value = encodeGroupMemory({ ...(backoff ? { backoff } : {}), scaleUps: this.deps.judge.recordsOf(groupId) });
    if (value === (this.stored.get(groupId) ?? null)) return;
    const [kind, namespace, name] = groupId.split('/') as [NodeGroupRef['kind'], string, string];
    // Standalone NodePool Machines have no group object to keep it on.
    if (!this.deps.state.objects().nodeGroups.some((o) => o.kind === kind && o.metadata?.namespace === namespace && o.metadata?.name === name)) return;
    checkTerm(this.deps.term);
    try {
      await store.save({ kind, namespace, name }, value);
      if (value === null) this.stored.delete(groupId);
      else this.stored.set(groupId, value);
    } catch (err) {
      checkTerm(this.deps.term);
      this.deps.log(`storing the scale-up memory of ${groupId} failed (retried next cycle): ${(err as Error).message}`, { kind, namespace, name });
    }
  }
}
