import { expect } from 'chai';
import type { EventRecorder, EventSpec, EventTarget } from '../../../src/capi/events.js';
import { SnapshotIssueEvents } from '../../../src/controller/snapshot-issue-events.js';

function recorder(into: Array<{ target: EventTarget; spec: EventSpec }>): EventRecorder {
  return { emit: async (target: EventTarget, spec: EventSpec) => { into.push({ target, spec }); } } as unknown as EventRecorder;
}

describe('SnapshotIssueEvents: what the snapshot rejects reaches the object (issue 25, items 1 and 4)', () => {
  const held = { severity: 'warning' as const, reason: 'NotScaled', message: 'MachineDeployment capi/workers-m: held, neither scaled up nor down: ...', object: { kind: 'MachineDeployment', namespace: 'capi', name: 'workers-m' } };

  it('writes one Warning Event per object and message, again only after an hour', () => {
    const mgmt: Array<{ target: EventTarget; spec: EventSpec }> = [];
    const work: Array<{ target: EventTarget; spec: EventSpec }> = [];
    let now = 0;
    const e = new SnapshotIssueEvents({ capiVersion: 'v1beta2', management: recorder(mgmt), workload: recorder(work), now: () => now });
    for (let i = 0; i < 5; i++) e.report(held);
    expect(mgmt).to.have.length(1);
    expect(mgmt[0]!.target).to.deep.equal({ apiVersion: 'cluster.x-k8s.io/v1beta2', kind: 'MachineDeployment', namespace: 'capi', name: 'workers-m' });
    expect(mgmt[0]!.spec).to.include({ type: 'Warning', reason: 'NotScaled', note: held.message });
    e.report({ ...held, message: `${held.message} (changed)` });
    expect(mgmt).to.have.length(2);
    now = 3_600_000;
    e.report(held);
    expect(mgmt).to.have.length(3);
    expect(work).to.deep.equal([]);
  });

  it('routes NodePools to the management cluster and pods to the workload cluster; errors are InvalidObject', () => {
    const mgmt: Array<{ target: EventTarget; spec: EventSpec }> = [];
    const work: Array<{ target: EventTarget; spec: EventSpec }> = [];
    const e = new SnapshotIssueEvents({ capiVersion: 'v1beta1', management: recorder(mgmt), workload: recorder(work) });
    e.report({ severity: 'error', message: 'NodePool p: limits.cpu: invalid', object: { kind: 'NodePool', name: 'p' } });
    e.report({ severity: 'error', message: 'Pod a/b: bad', object: { kind: 'Pod', namespace: 'a', name: 'b' } });
    e.report({ severity: 'warning', message: 'no object' });
    e.report({ severity: 'warning', message: 'unknown kind', object: { kind: 'Gadget', name: 'g' } });
    expect(mgmt.map((x) => [x.target.apiVersion, x.target.kind, x.spec.reason])).to.deep.equal([['headroom.dev/v1alpha1', 'NodePool', 'InvalidObject']]);
    expect(work.map((x) => [x.target.apiVersion, x.target.kind, x.target.namespace])).to.deep.equal([['v1', 'Pod', 'a']]);
  });

  it('remembers a bounded number of pairs', () => {
    const mgmt: Array<{ target: EventTarget; spec: EventSpec }> = [];
    const e = new SnapshotIssueEvents({ capiVersion: 'v1beta2', management: recorder(mgmt), workload: recorder([]), maxRemembered: 2 });
    for (const m of ['a', 'b', 'c', 'a']) e.report({ ...held, message: m });
    expect(mgmt.map((x) => x.spec.note)).to.deep.equal(['a', 'b', 'c', 'a']);
  });
});
