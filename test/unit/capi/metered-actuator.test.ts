import { expect } from 'chai';
import type { CapiActuator } from '../../../src/capi/actuator.js';
import { MeteredActuator, capiErrorClass } from '../../../src/capi/metered-actuator.js';
import { FencedError, KubeApiError } from '../../../src/kube/kube-client.js';

/** The error a promise rejects with (fails if it resolves). */
async function rejection(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (err) {
    return err;
  }
  throw new Error('expected a rejection');
}

const group = { kind: 'MachineDeployment' as const, namespace: 'ns', name: 'md' };

describe('MeteredActuator', () => {
  it('times each call to the port, passes its result through, and classifies a failure without swallowing it', async () => {
    let t = 0;
    const inner = {
      getReplicas: async () => { t += 250; return 3; },
      scaleTo: async () => { t += 1000; throw new KubeApiError(409, 'Conflict', 'changed', 'PATCH', '/x'); },
      deleteMachine: async () => { throw new FencedError('PATCH', '/y'); },
      deleteMachines: async () => { t += 500; return { replicas: 1, written: true, removed: ['m'] }; },
      createMachine: async () => 'm',
      deleteStandaloneMachine: async () => { throw new Error('socket hang up'); },
    } as unknown as CapiActuator;
    const seen: Array<[string, number, string | undefined]> = [];
    const metered = new MeteredActuator(inner, (m, s, e) => seen.push([m, s, e]), () => t);
    expect(await metered.getReplicas(group)).to.equal(3);
    expect(await rejection(metered.scaleTo(group, 1, 2, 'r'))).to.be.instanceOf(KubeApiError);
    expect(await rejection(metered.deleteMachine(group, { namespace: 'ns', name: 'm' }, 'r'))).to.be.instanceOf(FencedError);
    expect(await metered.deleteMachines(group, [{ machine: { namespace: 'ns', name: 'm' }, reason: 'r' }])).to.deep.equal({ replicas: 1, written: true, removed: ['m'] });
    expect(await metered.createMachine({ name: 'm', nodePool: 'p', namespace: 'ns', clusterName: 'c', reason: 'r' })).to.equal('m');
    expect((await rejection(metered.deleteStandaloneMachine({ namespace: 'ns', name: 'm' }, 'r')) as Error).message).to.equal('socket hang up');
    expect(seen).to.deep.equal([
      ['getReplicas', 0.25, undefined], ['scaleTo', 1, 'Conflict'], ['deleteMachine', 0, 'Fenced'], ['deleteMachines', 0.5, undefined], ['createMachine', 0, undefined], ['deleteStandaloneMachine', 0, 'Other'],
    ]);
  });

  it('error classes are a fixed set, whatever reason text the server sends', () => {
    expect(capiErrorClass(new KubeApiError(404, 'NotFound', '', 'GET', '/'))).to.equal('NotFound');
    expect(capiErrorClass(new KubeApiError(429, 'TooManyRequests', '', 'GET', '/'))).to.equal('TooManyRequests');
    expect(capiErrorClass(new KubeApiError(503, 'anything a proxy says', '', 'GET', '/'))).to.equal('ServerError');
    expect(capiErrorClass(new KubeApiError(418, 'Teapot', '', 'GET', '/'))).to.equal('Other');
  });
});
