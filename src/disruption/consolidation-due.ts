import { consolidationConfigured, shortestConsolidateAfter, type PassSettings } from './settings.js';

/**
 * Whether a consolidation pass may find something, without running it: its search
 * solves many what-ifs, so it is skipped while nothing it looks at has changed since it
 * last found nothing. It looks again when the nodes change, or when some node's pods
 * have been unchanged for consolidateAfter (a node whose pods change is no candidate
 * until then; that is also when the room its pods freed is looked at).
 */
export class ConsolidationDue {
  /** The nodes list on which consolidation last found nothing to do, and when. */
  private idle: { nodes: readonly unknown[]; at: number } | undefined;

  /** `enabled`: the loop's consolidation option is on. */
  constructor(private readonly enabled: boolean) {}

  /** On, and some setting in force consolidates underutilised nodes. */
  on(settings: PassSettings): boolean {
    return this.enabled && consolidationConfigured(settings.all);
  }

  /** `nodes` is the state's list object (rebuilt on every change), `settledSince` each node's pods-unchanged-since. */
  due(settings: PassSettings, nodes: readonly unknown[], settledSince: ReadonlyMap<string, number>, now: number): boolean {
    if (!this.on(settings)) return false;
    const idle = this.idle;
    if (!idle || idle.nodes !== nodes) return true;
    const after = shortestConsolidateAfter(settings.all.filter((d) => d.consolidationPolicy === 'WhenEmptyOrUnderutilized'));
    for (const since of settledSince.values()) if (since + after > idle.at && since + after <= now) return true;
    return false;
  }

  /** Consolidation found nothing on `nodes` at `now`. */
  foundNothing(nodes: readonly unknown[], now: number): void {
    this.idle = { nodes, at: now };
  }
}
