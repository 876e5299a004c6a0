import type { EventSpec, EventTarget } from '../capi/events.js';
import type { PredictionDecision } from '../prediction/predictor.js';

/**
 * Events on a workload when capacity is first held for its forecast and when it is
 * released (its predicted pods drop to zero), so `kubectl describe deployment web`
 * tells why a node appeared before the pods did. Changes in between (3 -> 4 pods)
 * are not events: metrics show them. Pure: returns what to emit.
 */

const API_VERSION: Record<string, string> = {
  Deployment: 'apps/v1', StatefulSet: 'apps/v1', ReplicaSet: 'apps/v1', Job: 'batch/v1', CronJob: 'batch/v1',
};

export interface PredictionEvent {
  target: EventTarget;
  spec: EventSpec;
}

function target(key: string): EventTarget | undefined {
  const [kind = '', namespace = '', ...rest] = key.split('/');
  const apiVersion = API_VERSION[kind];
  return apiVersion ? { apiVersion, kind, namespace, name: rest.join('/') } : undefined;
}

function minutes(ms: number): string {
  return ms % 60_000 === 0 ? `${ms / 60_000}m` : `${Math.round(ms / 1000)}s`;
}

export class PredictionEvents {
  /** Workload -> predicted pods held at the last pass (only those holding some). */
  private held = new Map<string, number>();

  next(decisions: readonly PredictionDecision[]): PredictionEvent[] {
    const out: PredictionEvent[] = [];
    const now = new Map<string, number>();
    for (const d of decisions) {
      if (d.pods <= 0) continue;
      now.set(d.key, d.pods);
      const t = target(d.key);
      if (this.held.has(d.key) || !t) continue;
      out.push({
        target: t,
        spec: {
          type: 'Normal', reason: 'PredictedCapacityAdded', action: 'Predict',
          note: `Holding capacity for ${d.pods} predicted pod${d.pods === 1 ? '' : 's'} (${d.nodes.toFixed(2)} node-equivalents, `
            + `${d.costPerHour.toFixed(3)}/h) in NodePool ${d.pool}: ${d.forecast.method} forecast of ${Math.ceil(d.forecast.upper)} pods `
            + `within ${minutes(d.horizonMs)}, ${d.forecast.current} now${d.reason === 'capped' ? ` (capped: ${d.excess} wanted)` : ''}`,
        },
      });
    }
    for (const [key, pods] of this.held) {
      if (now.has(key)) continue;
      const t = target(key);
      if (!t) continue;
      out.push({
        target: t,
        spec: {
          type: 'Normal', reason: 'PredictedCapacityReleased', action: 'Predict',
          note: `Released the capacity held for ${pods} predicted pod${pods === 1 ? '' : 's'}: the forecast no longer exceeds the pods that exist`,
        },
      });
    }
    this.held = now;
    return out;
  }
}
