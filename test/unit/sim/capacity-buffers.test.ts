import { expect } from 'chai';
import { policyFactory, simulationSnapshot } from '../../../src/sim/policies.js';
import { runTrace } from '../../../src/sim/run.js';
import { TraceError, type Trace } from '../../../src/sim/trace.js';
import { group, podTemplate, trace } from './fixtures.js';

const buffer = (name: string, spec: Record<string, unknown>) => ({ apiVersion: 'autoscaling.x-k8s.io/v1beta1', kind: 'CapacityBuffer', metadata: { name }, spec });

/** Headroom without prediction: its spare would add to the buffer's nodes, and these count the buffer's alone. */
async function headroom(t: Trace) {
  const r = await runTrace(t, { seed: 1, policies: [{ name: 'headroom', factory: policyFactory('headroom', { prediction: false }) }], buildSnapshot: simulationSnapshot });
  return r.policies.headroom!;
}

describe('simulator: CapacityBuffers in a trace', function () {
  this.timeout(60_000);
  const groups = [group({ name: 'md', cpu: '4', memory: '16Gi', price: '0.2', boot: '60s' })];
  const web = {
    kind: 'Deployment', name: 'web', template: podTemplate('web', '2', '1Gi'),
    replicas: { points: [{ at: '0s', replicas: 10 }, { at: '10m', replicas: 30 }], interpolation: 'step', every: '5s' },
  };

  it('Headroom keeps a percentage buffer of a trace Deployment as spare nodes, and the buffer follows the Deployment', async () => {
    const plain = await headroom(trace('plain', '20m', groups, [web]));
    const buffered = await headroom(trace('buffered', '20m', groups, [web], {
      capacityBuffers: [buffer('web-spare', { scalableRef: { apiGroup: 'apps', kind: 'Deployment', name: 'web' }, percentage: 20 })],
    }));
    // 10 pods x 2 cpu: 5 nodes; +2 chunks: 6. 30 pods: 15 nodes; +6 chunks: 18.
    expect(plain.summary.peakNodes).to.equal(15);
    expect(buffered.summary.peakNodes).to.equal(18);
    const upsBefore = (r: typeof plain) => r.actions.filter((a) => a.to > a.from && a.at < 600).reduce((m, a) => Math.max(m, a.to), 0);
    expect([upsBefore(plain), upsBefore(buffered)]).to.deep.equal([5, 6]);
  });

  it('a podTemplateRef buffer holds capacity with no workload at all', async () => {
    const r = await headroom(trace('spare', '10m', groups, [], {
      podTemplates: [{ apiVersion: 'v1', kind: 'PodTemplate', metadata: { name: 'shape' }, template: podTemplate('shape', '3', '1Gi') }],
      capacityBuffers: [buffer('spare', { podTemplateRef: { name: 'shape' }, replicas: 2 })],
    }));
    expect(r.summary.peakNodes).to.equal(2);
  });

  it('refuses an invalid buffer with one line naming the field', () => {
    expect(() => trace('bad', '10m', groups, [], { capacityBuffers: [buffer('b', { podTemplateRef: { name: 't' }, scalableRef: { kind: 'Deployment', name: 'w' }, replicas: 1 })] }))
      .to.throw(TraceError, 'trace "bad": capacityBuffers[0]: CapacityBuffer default/b: spec: set exactly one of podTemplateRef and scalableRef, not both');
  });
});
