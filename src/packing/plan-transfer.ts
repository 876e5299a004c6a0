import { deserialize, serialize } from 'node:v8';
import type { Placement, Plan, ScaleUp, UnschedulablePod } from './plan.js';

/**
 * A plan on its way back from a solver worker (ADR 0033). A 20k-pod plan is ~2 MB
 * in structured-clone form and takes the main thread 10-30 ms to decode in one go;
 * sliced, the worker serializes it and the main thread decodes one slice per
 * event-loop turn, so no request waits behind more than a slice.
 */
export interface PlanParts {
  scaleUps: Uint8Array[];
  placements: Uint8Array[];
  unschedulable: Uint8Array[];
  addedPerHour: number;
  /** The worker's V8 heap when the solve ended (the main thread's metrics cannot see it). */
  workerHeap?: WorkerHeap;
}

/** A solver worker's heap, bytes: in use (live and not yet collected), and committed (what RSS sees). */
export interface WorkerHeap {
  usedBytes: number;
  committedBytes: number;
  /** Of `committedBytes`, the young generation's (new space and new large objects). */
  youngCommittedBytes: number;
}

export const PLAN_SLICE = 1000;

export function planParts(plan: Plan, slice = PLAN_SLICE): PlanParts {
  return {
    scaleUps: slices(plan.scaleUps, slice),
    placements: slices(plan.placements, slice),
    unschedulable: slices(plan.unschedulable, slice),
    addedPerHour: plan.cost.addedPerHour,
  };
}

function slices<T>(items: readonly T[], size: number): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (let i = 0; i < items.length; i += size) out.push(serialize(items.slice(i, i + size)));
  return out;
}

/** Decodes the parts, awaiting `turn()` before each slice. */
export async function assemblePlan(parts: PlanParts, turn: () => Promise<unknown>): Promise<Plan> {
  const join = async <T>(bufs: Uint8Array[]): Promise<T[]> => {
    const out: T[] = [];
    for (const b of bufs) {
      await turn();
      for (const x of deserialize(b) as T[]) out.push(x);
    }
    return out;
  };
  return {
    scaleUps: await join<ScaleUp>(parts.scaleUps),
    placements: await join<Placement>(parts.placements),
    unschedulable: await join<UnschedulablePod>(parts.unschedulable),
    cost: { addedPerHour: parts.addedPerHour },
  };
}
