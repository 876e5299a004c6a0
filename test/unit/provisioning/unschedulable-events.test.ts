import { expect } from 'chai';
import type { ActionEvents, PodRef } from '../../../src/capi/action-events.js';
import type { Plan } from '../../../src/packing/plan.js';
import { UnschedulableEvents } from '../../../src/provisioning/unschedulable-events.js';
import { pod, snapshot } from '../packing/snapshot-builders.js';

describe('UnschedulableEvents', () => {
  it('writes one NotTriggerScaleUp event per reason on the pods no group can take, once per pod per 10 minutes, none on forecasts', () => {
    const written: Array<{ pods: string[]; note: string }> = [];
    const port = {
      notifyPods: (pods: readonly PodRef[], e: { note: string }) => written.push({ pods: pods.map((p) => p.name), note: e.note }),
      notifyGroup: () => {},
    } as unknown as ActionEvents;
    const events = new UnschedulableEvents(port);
    const snap = snapshot({ pendingPods: [pod('a'), pod('b'), pod('c'), { ...pod('f'), predicted: true }] });
    const key = (n: string) => snap.pendingPods.find((p) => p.name === n)!.key;
    const plan = {
      placements: [], scaleUps: [],
      unschedulable: [{ pod: key('a'), reason: 'too big' }, { pod: key('b'), reason: 'too big' }, { pod: key('c'), reason: 'no group' }, { pod: key('f'), reason: 'too big' }],
    } as unknown as Plan;
    events.explain(plan, snap, 0);
    expect(written).to.deep.equal([
      { pods: ['a', 'b'], note: "pod didn't trigger scale-up: too big" }, { pods: ['c'], note: "pod didn't trigger scale-up: no group" },
    ]);
    events.explain(plan, snap, 600_000);
    expect(written).to.have.length(2);
    events.explain(plan, snap, 600_001);
    expect(written).to.have.length(4);
    // Without an events port (the simulator): nothing, and no error.
    new UnschedulableEvents(undefined).explain(plan, snap, 0);
  });

  it('writes a Normal NotTriggerScaleUp event on pods left alone (expendable, nominated), also when nothing else is pending', () => {
    const written: Array<{ pods: string[]; type: string; note: string }> = [];
    const port = {
      notifyPods: (pods: readonly PodRef[], e: { type: string; note: string }) => written.push({ pods: pods.map((p) => p.name), type: e.type, note: e.note }),
      notifyGroup: () => {},
    } as unknown as ActionEvents;
    const events = new UnschedulableEvents(port);
    const alone = (name: string, kind: 'expendable' | 'nominated', reason: string) => ({ key: `ns/${name}`, namespace: 'ns', name, uid: name, kind, reason });
    const snap = { ...snapshot({ pendingPods: [] }), leftAlone: [alone('x', 'expendable', 'low'), alone('y', 'expendable', 'low'), alone('z', 'nominated', 'waits')] };
    events.explain(undefined, snap, 0);
    expect(written).to.deep.equal([
      { pods: ['x', 'y'], type: 'Normal', note: "pod didn't trigger scale-up: low" },
      { pods: ['z'], type: 'Normal', note: "pod didn't trigger scale-up: waits" },
    ]);
    events.explain(undefined, snap, 1000);
    expect(written, 'once per pod per 10 minutes').to.have.length(2);
  });
});
