import { expect } from 'chai';
import type { LogSubject } from '../../../src/api/log.js';
import { EventRecorder } from '../../../src/capi/events.js';
import type { KubeClient } from '../../../src/kube/kube-client.js';

describe('EventRecorder', () => {
  it('reports a failed write with the object the event was about, and never rejects', async () => {
    const refused = { request: async () => { throw new Error('events is forbidden'); } } as unknown as KubeClient;
    const reported: Array<{ message: string; about: LogSubject }> = [];
    const recorder = new EventRecorder(refused, (err, about) => reported.push({ message: (err as Error).message, about }), 'test');
    await recorder.emit(
      { apiVersion: 'cluster.x-k8s.io/v1beta2', kind: 'MachineDeployment', namespace: 'team-a', name: 'md-small' },
      { type: 'Normal', reason: 'ScaledUp', action: 'ScaleUp', note: '1 -> 2' },
    );
    await recorder.emit({ apiVersion: 'v1', kind: 'Node', name: 'node-1' }, { type: 'Normal', reason: 'Disrupting', action: 'Disrupt', note: 'empty' });
    expect(reported).to.deep.equal([
      { message: 'events is forbidden', about: { kind: 'MachineDeployment', namespace: 'team-a', name: 'md-small' } },
      { message: 'events is forbidden', about: { kind: 'Node', name: 'node-1' } },
    ]);
  });

  it('a throwing reporter does not turn into a rejection', async () => {
    const refused = { request: async () => { throw new Error('boom'); } } as unknown as KubeClient;
    const recorder = new EventRecorder(refused, () => { throw new Error('reporter broke'); }, 'test');
    await recorder.emit({ apiVersion: 'v1', kind: 'Pod', namespace: 'a', name: 'p' }, { type: 'Warning', reason: 'X', action: 'Y', note: 'z' });
  });
});
