import { expect } from 'chai';
import { UsageError } from '../../../src/cli/command.js';
import { parseFleetLeaseFlags } from '../../../src/cli/fleet-lease-flags.js';
import { runMain as run } from './captured-main.js';
import { FLEET_LEASE_DEFAULTS } from '../../../src/fleet/fleet-controller.js';

function refused(f: Parameters<typeof parseFleetLeaseFlags>[0]): string {
  try {
    parseFleetLeaseFlags(f);
  } catch (err) {
    expect(err).to.be.instanceOf(UsageError);
    return (err as Error).message;
  }
  throw new Error(`accepted ${JSON.stringify(f)}`);
}

describe('headroom controller: fleet Lease timing flags', () => {
  it('defaults to the FleetController defaults', () => {
    expect(parseFleetLeaseFlags({})).to.deep.equal(FLEET_LEASE_DEFAULTS);
  });

  it('reads Go durations, each flag on its own or together', () => {
    expect(parseFleetLeaseFlags({ leaseDuration: '15s', renewDeadline: '10s', retryPeriod: '2s' })).to.deep.equal({ leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2000 });
    expect(parseFleetLeaseFlags({ leaseDuration: '1m' })).to.deep.equal({ ...FLEET_LEASE_DEFAULTS, leaseDurationMs: 60_000 });
    expect(parseFleetLeaseFlags({ renewDeadline: '7500ms', retryPeriod: '1s500ms' })).to.deep.equal({ leaseDurationMs: 8000, renewDeadlineMs: 7500, retryPeriodMs: 1500 });
  });

  it('refuses what is not a positive duration, naming the flag and the value', () => {
    expect(refused({ leaseDuration: '15' })).to.equal('controller: --fleet-lease-duration must be a positive Go duration such as 15s, got "15"');
    expect(refused({ renewDeadline: '0s' })).to.include('--fleet-renew-deadline must be a positive Go duration').and.include('"0s"');
    expect(refused({ retryPeriod: '-2s' })).to.include('--fleet-retry-period must be a positive Go duration');
    expect(refused({ retryPeriod: 'Never' })).to.include('--fleet-retry-period must be a positive Go duration');
    expect(refused({ leaseDuration: '' })).to.include('--fleet-lease-duration');
  });

  it('needs lease duration > renew deadline > retry period, as client-go does', () => {
    expect(refused({ leaseDuration: '6s' })).to.equal('controller: --fleet-renew-deadline (6000 ms) must be less than --fleet-lease-duration (6000 ms)');
    expect(refused({ leaseDuration: '15s', renewDeadline: '20s' })).to.include('--fleet-renew-deadline (20000 ms) must be less than --fleet-lease-duration (15000 ms)');
    expect(refused({ retryPeriod: '6s' })).to.equal('controller: --fleet-retry-period (6000 ms) must be less than --fleet-renew-deadline (6000 ms)');
    expect(refused({ leaseDuration: '15s', renewDeadline: '3s', retryPeriod: '5s' })).to.include('--fleet-retry-period (5000 ms) must be less than --fleet-renew-deadline (3000 ms)');
  });

  it('needs a lease duration of whole seconds and a retry period of at least 100ms', () => {
    expect(refused({ leaseDuration: '8500ms' })).to.include('--fleet-lease-duration must be a whole number of seconds').and.include('"8500ms"');
    expect(refused({ retryPeriod: '10ms' })).to.include('--fleet-retry-period must be at least 100ms');
  });

  it('exits 2 with one line on a bad value, and the flags need --fleet', async () => {
    let r = await run(['controller', '--fleet', '--fleet-lease-duration', '15s', '--fleet-renew-deadline', '20s']);
    expect(r.code).to.equal(2);
    expect(r.err.split('\n').filter(Boolean)).to.have.length(1);
    expect(r.err).to.include('--fleet-renew-deadline (20000 ms) must be less than --fleet-lease-duration (15000 ms)');
    r = await run(['controller', '--fleet', '--fleet-retry-period', 'soon']);
    expect(r.code).to.equal(2);
    expect(r.err).to.include('--fleet-retry-period must be a positive Go duration such as 15s, got "soon"');
    r = await run(['controller', '--fleet-lease-duration', '15s']);
    expect(r.code).to.equal(2);
    expect(r.err).to.include('need --fleet');
  });
});
