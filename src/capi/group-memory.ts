import type { NodeGroupRef } from './actuator.js';

/**
 * Where a loop keeps what it must remember about a node group across restarts and
 * leader changes (ADR 0120: the scale-up back-off and the scale-ups awaiting
 * judgement): one opaque value per group, stored on the group object. A port of its
 * own, apart from the CapiActuator: it never changes capacity, and a loop runs the
 * same without it (the simulator has none; the memory then lasts one process).
 */
export interface GroupMemoryStore {
  /** Stores `value` for `group`; null removes it. */
  save(group: NodeGroupRef, value: string | null): Promise<void>;
}
