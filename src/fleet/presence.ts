/**
 * Fleet mode's presence rule (ADR 0143, ADR 0147), a pure function: whether another
 * replica counts as alive when the shards are balanced.
 *
 * Presence decides balance only, never safety (a cluster's Lease is the only licence
 * to act on it). So a replica is suspected dead well before its presence Lease would
 * expire: once it has missed two renewals (plus half a period for the observer's own
 * tick). The survivor then warms a controller for the suspect's clusters while their
 * Leases run out, and takes each the moment it expires: failover is one cluster-Lease
 * duration (plus the observation lag), not presence expiry, a cold start and the Lease
 * in series. A wrong suspicion (a slow replica) costs one warm-up: the holder keeps its
 * clusters while it renews their Leases and stays within its share.
 */

export interface PresenceObservation {
  /** holderIdentity of the presence Lease ('' when none). */
  holder: string;
  /** When this process first saw the current record (its own clock). */
  seenAt: number;
  /** The record's renewTime in ms (the writer's clock), NaN when absent or unparsable. */
  renewedAt: number;
}

/** How long a presence record may stay unchanged before its replica is suspected dead. */
export function presenceSuspectMs(renewEveryMs: number, leaseDurationMs: number): number {
  return Math.min(leaseDurationMs, 2.5 * renewEveryMs);
}

/**
 * Alive: a holder, the record changed within `suspectMs` by our clock, and its
 * renewTime not older than that plus `skewMs` (a record first seen long after it was
 * written is a dead replica now, not after `suspectMs` of watching it).
 */
export function presenceAlive(p: PresenceObservation, now: number, suspectMs: number, skewMs: number): boolean {
  if (p.holder === '') return false;
  if (now - p.seenAt >= suspectMs) return false;
  return !Number.isFinite(p.renewedAt) || now - p.renewedAt <= suspectMs + skewMs;
}
