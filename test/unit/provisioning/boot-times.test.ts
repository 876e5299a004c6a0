import { expect } from 'chai';
import { BootTimes } from '../../../src/provisioning/boot-times.js';
import { group, snapshot } from '../packing/snapshot-builders.js';

const T0 = Date.UTC(2024, 0, 1);

/** A MachineDeployment's Machine created at T0 + at, whose Node was Ready `bootMs` later. */
function booted(md: string, name: string, at: number, bootMs: number) {
  const machine = {
    apiVersion: 'cluster.x-k8s.io/v1beta2', kind: 'Machine',
    metadata: { name, namespace: 'default', labels: { 'cluster.x-k8s.io/deployment-name': md }, creationTimestamp: new Date(T0 + at) },
    status: { nodeRef: { name: `node-${name}` } },
  };
  const node = { metadata: { name: `node-${name}` }, status: { conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: new Date(T0 + at + bootMs) }] } };
  return { machine, node };
}

describe('provisioning boot times', () => {
  it('learns each group\'s median boot from Machines that became Ready nodes, once enough were seen, and keeps them after the Machines go', () => {
    const times = new BootTimes();
    const first = [booted('fast', 'f1', 0, 60_000), booted('fast', 'f2', 0, 80_000), booted('slow', 's1', 0, 150_000)];
    times.observe({ machines: first.map((b) => b.machine), nodes: first.map((b) => b.node) });
    expect(times.medianMs('MachineDeployment/default/fast')).to.equal(undefined); // two boots: not enough yet
    // The first Machines are gone (scaled down); a later pass sees only the new one, and the old samples stay.
    const later = [booted('fast', 'f3', 600_000, 70_000)];
    times.observe({ machines: later.map((b) => b.machine), nodes: later.map((b) => b.node) });
    // Seen again: a Machine counts once.
    times.observe({ machines: later.map((b) => b.machine), nodes: later.map((b) => b.node) });
    expect(times.medianMs('MachineDeployment/default/fast')).to.equal(70_000);
    expect(times.medianMs('MachineDeployment/default/slow')).to.equal(undefined);
  });

  it('writes the median into the snapshot\'s groups, reusing the same group objects while nothing changed', () => {
    const times = new BootTimes();
    const b = [booted('fast', 'a', 0, 60_000), booted('fast', 'b', 0, 90_000), booted('fast', 'c', 0, 61_000)];
    times.observe({ machines: b.map((x) => x.machine), nodes: b.map((x) => x.node) });
    const fast = group('fast');
    const other = group('other');
    const s = snapshot({ groups: [fast, other] });
    const a1 = times.annotate(s);
    expect(a1.groups[0]!.bootMs).to.equal(61_000);
    expect(a1.groups[1]).to.equal(other); // nothing known: the same object, no bootMs
    expect(a1.groups[1]!.bootMs).to.equal(undefined);
    expect(fast.bootMs).to.equal(undefined); // the input is not mutated
    const a2 = times.annotate(snapshot({ groups: [fast, other] }));
    expect(a2.groups[0]).to.equal(a1.groups[0]); // reused: snapshot transfer ships unchanged groups once
    expect(times.annotate(snapshot({ groups: [other] })).groups[0]).to.equal(other);
  });
});
