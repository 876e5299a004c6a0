import type { LogSubject } from '../api/log.js';
import type { ActionEvents } from '../capi/action-events.js';
import type { NodeGroupRef } from '../capi/actuator.js';
import type { ClusterObjects } from '../cluster/objects.js';
import { pausedGroups, type GroupBackoff } from './provision-failures.js';

export interface HeldGroupsDeps {
  backoff: GroupBackoff;
  /** Events on the held groups; none in the simulator. */
  events: ActionEvents | undefined;
  log: (msg: string, about?: LogSubject) => void;
}

/**
 * Groups that may not grow now, with why: paused (the group or its Cluster), or backing
 * off after a failed provision. Each is said (log line and NotScaledUp event) once per
 * group and cause per 10 minutes: this memory only dedupes, it never feeds a decision.
 */
export class HeldGroups {
  /** `held:<group>:<paused|backoff>` -> when it was last said. */
  private readonly said = new Map<string, number>();

  constructor(private readonly deps: HeldGroupsDeps) {}

  read(objects: ClusterObjects, now: number): Map<string, string> {
    const { backoff } = this.deps;
    const held = pausedGroups(objects);
    for (const [id, until] of backoff.active(now)) {
      if (!held.has(id)) held.set(id, `${id} is backing off after ${backoff.causeOf(id) ?? 'a failed provision'} until ${new Date(until).toISOString()}`);
    }
    for (const [id, why] of held) {
      const key = `held:${id}:${why.includes('paused') ? 'paused' : 'backoff'}`;
      if (this.said.has(key) && now - this.said.get(key)! < 600_000) continue;
      this.said.set(key, now);
      const [kind, namespace, name] = id.split('/') as [NodeGroupRef['kind'], string, string];
      this.deps.log(`not scaling ${id}: ${why}`, { kind, namespace, name });
      this.deps.events?.notifyGroup({ kind, namespace, name }, { type: 'Warning', reason: 'NotScaledUp', action: 'ScaleUp', note: why });
    }
    return held;
  }

  /** The group no longer backs off: a new back-off of it is said at once. */
  recovered(groupId: string): void {
    this.said.delete(`held:${groupId}:backoff`);
  }
}
