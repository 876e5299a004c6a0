import { parseDuration } from '../api/nodepool.js';
import { FLEET_LEASE_DEFAULTS, type FleetLeaseTiming } from '../fleet/fleet-controller.js';
import { UsageError } from './command.js';

export interface FleetLeaseFlags {
  leaseDuration?: string | undefined;
  renewDeadline?: string | undefined;
  retryPeriod?: string | undefined;
}

/** Below this the replicas would poll the management cluster's apiserver in a tight loop. */
const MIN_RETRY_PERIOD_MS = 100;

function duration(raw: string, flag: string): number {
  let ms: number | null;
  try {
    ms = parseDuration(raw);
  } catch {
    ms = null;
  }
  if (ms === null || !(ms > 0)) throw new UsageError(`controller: ${flag} must be a positive Go duration such as 15s, got "${raw}"`);
  return ms;
}

/**
 * --fleet-lease-duration, --fleet-renew-deadline, --fleet-retry-period (Go durations),
 * each defaulting to the FleetController's; checked as client-go checks its elector's:
 * lease duration > renew deadline > retry period. The lease duration is whole seconds
 * because that is what a Lease records (spec.leaseDurationSeconds): the other replicas
 * wait out what is written, not what was meant.
 */
export function parseFleetLeaseFlags(f: FleetLeaseFlags): FleetLeaseTiming {
  const leaseDurationMs = f.leaseDuration === undefined ? FLEET_LEASE_DEFAULTS.leaseDurationMs : duration(f.leaseDuration, '--fleet-lease-duration');
  const renewDeadlineMs = f.renewDeadline === undefined ? FLEET_LEASE_DEFAULTS.renewDeadlineMs : duration(f.renewDeadline, '--fleet-renew-deadline');
  const retryPeriodMs = f.retryPeriod === undefined ? FLEET_LEASE_DEFAULTS.retryPeriodMs : duration(f.retryPeriod, '--fleet-retry-period');
  if (leaseDurationMs % 1000 !== 0) throw new UsageError(`controller: --fleet-lease-duration must be a whole number of seconds (a Lease records seconds), got "${f.leaseDuration}"`);
  if (!(renewDeadlineMs < leaseDurationMs)) {
    throw new UsageError(`controller: --fleet-renew-deadline (${renewDeadlineMs} ms) must be less than --fleet-lease-duration (${leaseDurationMs} ms)`);
  }
  if (!(retryPeriodMs < renewDeadlineMs)) {
    throw new UsageError(`controller: --fleet-retry-period (${retryPeriodMs} ms) must be less than --fleet-renew-deadline (${renewDeadlineMs} ms)`);
  }
  if (retryPeriodMs < MIN_RETRY_PERIOD_MS) throw new UsageError(`controller: --fleet-retry-period must be at least ${MIN_RETRY_PERIOD_MS}ms, got "${f.retryPeriod}"`);
  return { leaseDurationMs, renewDeadlineMs, retryPeriodMs };
}
