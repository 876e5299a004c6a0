import type { ScaleResult } from '../capi/actuator.js';
import type { Removal, Skip } from './removal.js';

/** What one disruption pass did: the removals it asked for (with the actuator's answer) and the nodes it kept, with why. */
export interface DisruptionReport {
  startedAt: number;
  skipped?: 'not-synced';
  removals: Array<Omit<Removal, 'machine'> & { groupId: string; machine?: string; result?: ScaleResult; error?: string }>;
  kept: Skip[];
  durationMs: number;
}
