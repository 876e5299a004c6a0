import type { ActionEvents, PodRef } from '../capi/action-events.js';
import type { ClusterSnapshot } from '../cluster/snapshot.js';
import type { Plan } from '../packing/plan.js';

/**
 * A Warning event (NotTriggerScaleUp, as Cluster Autoscaler names it) on pods no
 * group can take, with the solver's reason, and a Normal one on pods left alone on
 * purpose (expendable, or nominated by kube-scheduler's preemption: left-alone.ts);
 * at most once per pod per 10 minutes (this memory only dedupes events, it never
 * feeds a decision). Forecast pods get none.
 */
export class UnschedulableEvents {
  /** Pod key -> when its event was written. */
  private readonly said = new Map<string, number>();

  constructor(private readonly events: ActionEvents | undefined) {}

  /** Events for the plan's unschedulable pods (no plan: none) and the snapshot's left-alone pods. */
  explain(plan: Plan | undefined, snapshot: ClusterSnapshot, now: number): void {
    const events = this.events;
    const leftAlone = snapshot.leftAlone ?? [];
    if (!events || ((plan?.unschedulable.length ?? 0) === 0 && leftAlone.length === 0)) return;
    for (const [key, at] of this.said) if (now - at > 600_000) this.said.delete(key);
    this.notify(events, 'Normal', leftAlone.map((p) => ({ pod: p, reason: p.reason })), now);
    if (!plan || plan.unschedulable.length === 0) return;
    const byKey = new Map(snapshot.pendingPods.map((p) => [p.key, p]));
    const refused: Array<{ pod: PodRef & { key: string }; reason: string }> = [];
    for (const u of plan.unschedulable) {
      const p = byKey.get(u.pod);
      if (p && !p.predicted) refused.push({ pod: p, reason: u.reason });
    }
    this.notify(events, 'Warning', refused, now);
  }

  /** One event per reason on the pods not told in the last 10 minutes. */
  private notify(events: ActionEvents, type: 'Normal' | 'Warning', pods: ReadonlyArray<{ pod: PodRef & { key: string }; reason: string }>, now: number): void {
    const byReason = new Map<string, PodRef[]>();
    for (const { pod: p, reason } of pods) {
      if (this.said.has(p.key)) continue;
      this.said.set(p.key, now);
      let list = byReason.get(reason);
      if (!list) byReason.set(reason, (list = []));
      list.push({ namespace: p.namespace, name: p.name, uid: p.uid });
    }
    for (const [reason, refs] of byReason) {
      events.notifyPods(refs, { type, reason: 'NotTriggerScaleUp', action: 'ScaleUp', note: `pod didn't trigger scale-up: ${reason}` });
    }
  }
}
