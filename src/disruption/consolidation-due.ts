import type { SchedulingPod } from '../scheduling/scheduling-pod.js';
import { consolidationConfigured, shortestConsolidateAfter, type PassSettings } from './settings.js';

/**
 * Whether a consolidation pass may find something, without running it: its search
 * solves many what-ifs, so it is skipped while nothing it looks at has changed since it
 * last found nothing. It looks again when the nodes change, when some node's pods
 * have been unchanged for consolidateAfter (a node whose pods change is no candidate
 * until then; that is also when the room its pods freed is looked at), or when a
 * predicted pod it kept capacity for (a forecast's spare, a CapacityBuffer's chunk) is
 * gone: room the forecast no longer needs is room to consolidate (issue 24: after a
 * flash crowd the spare fell to nothing, and with no node or pod changing, the extra
 * node it had held stayed for hours). More predicted pods can only keep more, so only
 * one gone counts.
 */
export class ConsolidationDue {
  /** The nodes list on which consolidation last found nothing to do, when, and the predicted pods it kept room for. */
  private idle: { nodes: readonly unknown[]; at: number; kept: ReadonlySet<string> } | undefined;

  /** `enabled`: the loop's consolidation option is on. */
  constructor(private readonly enabled: boolean) {}

  /** On, and some setting in force consolidates underutilised nodes. */
  on(settings: PassSettings): boolean {
    return this.enabled && consolidationConfigured(settings.all);
  }

  /**
   * `nodes` is the state's list object (rebuilt on every change), `settledSince` each
   * node's pods-unchanged-since, `kept` the predicted pods whose capacity is kept now.
   */
  due(settings: PassSettings, nodes: readonly unknown[], settledSince: ReadonlyMap<string, number>, now: number, kept: readonly Pick<SchedulingPod, 'key'>[] = []): boolean {
    if (!this.on(settings)) return false;
    const idle = this.idle;
    if (!idle || idle.nodes !== nodes) return true;
    if (idle.kept.size > kept.length) return true;
    if (idle.kept.size > 0) {
      const present = new Set(kept.map((p) => p.key));
      for (const k of idle.kept) if (!present.has(k)) return true;
    }
    const after = shortestConsolidateAfter(settings.all.filter((d) => d.consolidationPolicy === 'WhenEmptyOrUnderutilized'));
    for (const since of settledSince.values()) if (since + after > idle.at && since + after <= now) return true;
    return false;
  }

  /** Consolidation found nothing on `nodes` at `now`, keeping room for `kept`. */
  foundNothing(nodes: readonly unknown[], now: number, kept: readonly Pick<SchedulingPod, 'key'>[] = []): void {
    this.idle = { nodes, at: now, kept: new Set(kept.map((p) => p.key)) };
  }
}
