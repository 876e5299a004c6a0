import { expect } from 'chai';
import type { PodEvent } from '../../../src/capi/action-events.js';
import type { EventRecorder } from '../../../src/capi/events.js';
import { KubeActionEvents } from '../../../src/capi/kube-action-events.js';

const event: PodEvent = { type: 'Normal', reason: 'TriggeredScaleUp', action: 'ScaleUp', note: 'n' };

function recorder(): { rec: EventRecorder; targets: Array<{ kind: string; name: string; apiVersion: string }> } {
  const targets: Array<{ kind: string; name: string; apiVersion: string }> = [];
  const rec = { emit: async (t: { kind: string; name: string; apiVersion: string }) => { targets.push(t); } } as unknown as EventRecorder;
  return { rec, targets };
}

describe('KubeActionEvents', () => {
  it('puts pod events on at most maxPodEvents pods, and group events on the CAPI object of the version in use', () => {
    const pods = recorder();
    const groups = recorder();
    const events = new KubeActionEvents({ capiVersion: 'v1beta1', podEvents: pods.rec, groupEvents: groups.rec, maxPodEvents: 2 });
    events.notifyPods([{ namespace: 'a', name: 'p1' }, { namespace: 'a', name: 'p2' }, { namespace: 'a', name: 'p3' }], event);
    events.notifyGroup({ kind: 'MachineDeployment', namespace: 'ns', name: 'md' }, event);
    expect(pods.targets.map((t) => [t.kind, t.name])).to.deep.equal([['Pod', 'p1'], ['Pod', 'p2']]);
    expect(groups.targets).to.deep.equal([{ apiVersion: 'cluster.x-k8s.io/v1beta1', kind: 'MachineDeployment', namespace: 'ns', name: 'md' }]);
  });

  it('writes nothing without recorders (a loop runs the same without events)', () => {
    const events = new KubeActionEvents({ capiVersion: 'v1beta2' });
    expect(() => {
      events.notifyPods([{ namespace: 'a', name: 'p' }], event);
      events.notifyGroup({ kind: 'MachinePool', namespace: 'ns', name: 'mp' }, event);
    }).to.not.throw();
  });
});
