/**
 * Fleet mode's presence Lease collection (ADR 0148), a pure function: which presence
 * Leases of dead replicas a live replica deletes.
 *
 * Every replica process has its own identity (pod name and pid), so each restart leaves
 * a presence Lease behind that nothing renews; every replica lists them all each tick.
 * One live replica (the lowest identity among those alive) deletes those whose record has
 * not changed, on its own clock, for `afterLeases` times the longer of the lease duration
 * written on them and its own: far past any expiry or suspicion, so a slow replica is never
 * taken for a dead one. The delete carries the record's resourceVersion as a precondition,
 * so a replica that renewed in the meantime keeps its Lease.
 */

export interface PresenceRecord {
  /** The Lease's name. */
  name: string;
  /** holderIdentity ('' when none). */
  holder: string;
  resourceVersion: string;
  /** When this process first saw the current record (its own clock). */
  seenAt: number;
  /** spec.leaseDurationSeconds in ms (0 when absent). */
  durationMs: number;
}

export interface PresenceGcInput {
  self: string;
  /** Identities of the replicas counted alive this tick (self included). */
  alive: readonly string[];
  presence: readonly PresenceRecord[];
  /** This replica's lease duration. */
  leaseDurationMs: number;
  now: number;
  /** Default PRESENCE_GC_AFTER_LEASES. */
  afterLeases?: number;
}

export interface PresenceDeletion {
  name: string;
  holder: string;
  /** The precondition of the delete. */
  resourceVersion: string;
  /** How long the record had been unchanged, for the log. */
  unchangedMs: number;
}

/** Lease durations a presence record stays unchanged before it is collected: 40 s at the 8 s default. */
export const PRESENCE_GC_AFTER_LEASES = 5;

export function presenceToCollect(input: PresenceGcInput): PresenceDeletion[] {
  const alive = [...new Set([...input.alive, input.self])].sort();
  // One collector: the others would only race it to the same 404s and 409s.
  if (alive[0] !== input.self) return [];
  const after = input.afterLeases ?? PRESENCE_GC_AFTER_LEASES;
  const out: PresenceDeletion[] = [];
  for (const p of input.presence) {
    if (p.holder === input.self || alive.includes(p.holder) || p.resourceVersion === '') continue;
    const unchangedMs = input.now - p.seenAt;
    if (unchangedMs >= after * Math.max(p.durationMs, input.leaseDurationMs)) out.push({ name: p.name, holder: p.holder, resourceVersion: p.resourceVersion, unchangedMs });
  }
  return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}
