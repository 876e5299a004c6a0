import { expect } from 'chai';
import type { ActionEvents } from '../../../src/capi/action-events.js';
import { emptyClusterObjects } from '../../../src/cluster/objects.js';
import { HeldGroups } from '../../../src/provisioning/held-groups.js';
import { GroupBackoff } from '../../../src/provisioning/provision-failures.js';

describe('HeldGroups', () => {
  it('holds the groups backing off, and says so once per group and cause per 10 minutes (again at once after a recovery)', () => {
    const backoff = new GroupBackoff(300_000, 1_800_000);
    const lines: string[] = [];
    const events: string[] = [];
    const port = { notifyPods: () => {}, notifyGroup: (g, e) => events.push(`${g.name} ${e.reason}`) } as ActionEvents;
    const held = new HeldGroups({ backoff, events: port, log: (m) => lines.push(m) });
    const id = 'MachineDeployment/default/md';
    backoff.fail(id, 0);
    const first = held.read(emptyClusterObjects(), 1000);
    expect([...first.keys()]).to.deep.equal([id]);
    expect(first.get(id)).to.match(/is backing off after a failed provision until 1970-01-01T00:05:00/);
    expect(events).to.deep.equal(['md NotScaledUp']);
    held.read(emptyClusterObjects(), 2000);
    expect(lines).to.have.length(1);
    held.recovered(id);
    held.read(emptyClusterObjects(), 3000);
    expect(lines).to.have.length(2);
    // Past the back-off: nothing held.
    expect(held.read(emptyClusterObjects(), 300_001).size).to.equal(0);
  });
});
