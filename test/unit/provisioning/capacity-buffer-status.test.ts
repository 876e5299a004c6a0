import { expect } from 'chai';
import { capacityBufferStatus, mergeBufferStatus } from '../../../src/provisioning/capacity-buffer-status.js';
import type { BufferResolution } from '../../../src/provisioning/capacity-buffers.js';

const T0 = '2026-01-01T00:00:00Z';
const T1 = '2026-01-01T00:05:00Z';
const base: BufferResolution = {
  namespace: 'ns', name: 'b', uid: 'u', generation: 4, strategy: 'buffer.x-k8s.io/active-capacity', replicas: 3,
  podTemplateName: 'capacitybuffer-b-pod-template', template: { spec: { containers: [] } },
};
const summary = (s: ReturnType<typeof capacityBufferStatus>) => s.conditions.map((c) => `${c.type}=${c.status}/${c.reason}`);

describe('CapacityBuffer status', () => {
  it('a served buffer: replicas, podTemplateRef and generation, Ready, LimitedByQuotas=False, Provisioning from the last solve', () => {
    const s = capacityBufferStatus(base, T0, {}, 7);
    expect(s).to.deep.include({ replicas: 3, podTemplateRef: { name: 'capacitybuffer-b-pod-template' }, podTemplateGeneration: 7, provisioningStrategy: 'buffer.x-k8s.io/active-capacity' });
    expect(summary(s)).to.deep.equal(['ReadyForProvisioning=True/AttributesSetSuccessfully', 'LimitedByQuotas=False/ResourceQuotasAllocated', 'Provisioning=True/ChunksPlaced']);
    for (const c of s.conditions) expect(c.observedGeneration).to.equal(4);
  });

  it('LimitedByQuotas=True with Cluster Autoscaler\'s message; Provisioning=False with the solver\'s reason', () => {
    const s = capacityBufferStatus({ ...base, replicas: 1, quota: { from: 3, to: 1, quotas: ['q'] } }, T0, { unplaced: { count: 1, reason: 'MachineDeployment capi/md at max size 2' } }, undefined);
    expect(s.conditions.find((c) => c.type === 'LimitedByQuotas')!.message).to.equal('Buffer replicas limited from 3 to 1 due to quotas: q');
    expect(s.conditions.find((c) => c.type === 'Provisioning')).to.include({ status: 'False', reason: 'CapacityNotAvailable' });
  });

  it('an invalid buffer: only ReadyForProvisioning=False with its one line, no replicas', () => {
    const s = capacityBufferStatus({ ...base, podTemplateName: undefined, problem: { reason: 'TemplateNotFound', message: 'podTemplateRef: PodTemplate ns/x not found' } }, T0, undefined, undefined);
    expect(s.replicas).to.equal(undefined);
    expect(s.conditions).to.have.length(1);
    expect(s.conditions[0]).to.include({ type: 'ReadyForProvisioning', status: 'False', reason: 'TemplateNotFound', message: 'podTemplateRef: PodTemplate ns/x not found' });
  });

  it('merge: unchanged conditions keep their transition time and write nothing; others\' conditions stay', () => {
    const first = capacityBufferStatus(base, T0, {}, 7);
    const foreign = { type: 'example.com/Audited', status: 'True' as const, reason: 'Ok', message: '', lastTransitionTime: T0 };
    const again = mergeBufferStatus({ ...first, conditions: [...first.conditions, foreign] }, capacityBufferStatus(base, T1, {}, 7));
    expect(again.changed).to.equal(false);
    expect(again.status.conditions.every((c) => c.lastTransitionTime === T0)).to.equal(true);
    expect(again.status.conditions).to.deep.include(foreign);
    const grown = mergeBufferStatus(first, capacityBufferStatus({ ...base, replicas: 6 }, T1, {}, 7));
    expect(grown.changed).to.equal(true);
    expect(grown.status.replicas).to.equal(6);
    // No solve yet for this buffer: the last Provisioning condition is kept.
    const unsolved = mergeBufferStatus(first, capacityBufferStatus(base, T1, undefined, 7));
    expect(unsolved.status.conditions.find((c) => c.type === 'Provisioning')).to.include({ status: 'True', lastTransitionTime: T0 });
  });
});
