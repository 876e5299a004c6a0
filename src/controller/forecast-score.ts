/**
 * How good the forecasts were, per workload: each forecast (the pods expected at
 * quantile q over the horizon) is judged when its horizon has passed, against the
 * most pods the workload had during it, with the pinball (quantile) loss,
 * q * (y - f) when under, (1 - q) * (f - y) when over. It is the loss a q-quantile
 * forecast minimises, so it is comparable across methods. Pure bookkeeping; the
 * clock is passed in. Bounded: at most `maxOpen` open forecasts and `window`
 * scores per workload, and only the workloads given to `forget`'s complement.
 */

export function pinballLoss(actual: number, forecast: number, q: number): number {
  return actual >= forecast ? q * (actual - forecast) : (1 - q) * (forecast - actual);
}

interface Open {
  dueAt: number;
  forecast: number;
  q: number;
  peak: number;
}

export class ForecastScore {
  private readonly open = new Map<string, Open[]>();
  private readonly scores = new Map<string, number[]>();

  constructor(private readonly window = 64, private readonly maxOpen = 64) {}

  /** A forecast made now for the horizon (now, now + horizonMs]. */
  forecast(key: string, now: number, horizonMs: number, forecast: number, q: number): void {
    const list = this.open.get(key) ?? [];
    list.push({ dueAt: now + horizonMs, forecast, q, peak: 0 });
    if (list.length > this.maxOpen) list.shift();
    this.open.set(key, list);
  }

  /** The workload's pod count now: raises the open forecasts' peaks and scores those due. */
  actual(key: string, now: number, pods: number): void {
    const list = this.open.get(key);
    if (!list) return;
    const keep: Open[] = [];
    for (const o of list) {
      o.peak = Math.max(o.peak, pods);
      if (now < o.dueAt) {
        keep.push(o);
        continue;
      }
      const s = this.scores.get(key) ?? [];
      s.push(pinballLoss(o.peak, o.forecast, o.q));
      if (s.length > this.window) s.shift();
      this.scores.set(key, s);
    }
    this.open.set(key, keep);
  }

  /** Mean pinball loss of the last `window` scored forecasts, or undefined before the first is due. */
  loss(key: string): number | undefined {
    const s = this.scores.get(key);
    return s?.length ? s.reduce((a, b) => a + b, 0) / s.length : undefined;
  }

  /** Drops every workload not in `keep` (bounded label set). */
  retain(keep: ReadonlySet<string>): void {
    for (const k of this.open.keys()) if (!keep.has(k)) this.open.delete(k);
    for (const k of this.scores.keys()) if (!keep.has(k)) this.scores.delete(k);
  }
}
