import { expect } from 'chai';
import { bufferChunkCount, parseCapacityBuffer } from '../../../src/api/capacity-buffer.js';
import { ObjectValidationError } from '../../../src/api/validation-error.js';

const buffer = (spec: unknown) => ({ apiVersion: 'autoscaling.x-k8s.io/v1beta1', kind: 'CapacityBuffer', metadata: { name: 'b', namespace: 'ns', uid: 'u', generation: 3 }, spec }) as never;

describe('CapacityBuffer spec (api)', () => {
  it('parses every field, defaulting the strategy to active-capacity and apiGroup to core', () => {
    expect(parseCapacityBuffer(buffer({ scalableRef: { kind: 'Thing', name: 'x' }, percentage: 20, replicas: 1, limits: { cpu: '2500m', memory: '1Gi' } }))).to.deep.equal({
      namespace: 'ns', name: 'b', uid: 'u', generation: 3, provisioningStrategy: 'buffer.x-k8s.io/active-capacity',
      scalableRef: { apiGroup: '', kind: 'Thing', name: 'x' }, replicas: 1, percentage: 20, limits: { cpu: 2500, memory: 2 ** 30 },
    });
    expect(parseCapacityBuffer(buffer({ podTemplateRef: { name: 't' }, replicas: 0, provisioningStrategy: 'other/x' }))).to.include({ provisioningStrategy: 'other/x', replicas: 0 });
  });

  for (const [label, spec, message] of [
    ['both refs', { podTemplateRef: { name: 't' }, scalableRef: { kind: 'Deployment', name: 'd' }, replicas: 1 }, 'CapacityBuffer ns/b: spec: set exactly one of podTemplateRef and scalableRef, not both'],
    ['no ref', { replicas: 1 }, 'CapacityBuffer ns/b: spec: set one of podTemplateRef and scalableRef'],
    ['no count', { podTemplateRef: { name: 't' } }, 'CapacityBuffer ns/b: spec: set replicas, percentage or limits'],
    ['a negative replicas', { podTemplateRef: { name: 't' }, replicas: -1 }, 'CapacityBuffer ns/b: spec.replicas: must be a non-negative 32-bit integer (got -1)'],
    ['percentage without scalableRef', { podTemplateRef: { name: 't' }, percentage: 5 }, "CapacityBuffer ns/b: spec.percentage: needs scalableRef (a share of the scalable's replicas)"],
    ['a bad limit', { podTemplateRef: { name: 't' }, limits: { cpu: 'lots' } }, 'CapacityBuffer ns/b: spec.limits: '],
    ['a kind-less scalableRef', { scalableRef: { name: 'd' }, replicas: 1 }, 'CapacityBuffer ns/b: spec.scalableRef.kind: must be a non-empty string'],
  ] as const) {
    it(`refuses ${label} with one line`, () => {
      expect(() => parseCapacityBuffer(buffer(spec))).to.throw(ObjectValidationError).with.property('message').that.satisfies((m: string) => m.startsWith(message) && !m.includes('\n'));
    });
  }
});

describe('CapacityBuffer chunk count (the upstream rule, ADR 0072)', () => {
  const chunk = { cpu: 1000, memory: 2 ** 30 };
  it('percentage of the scalable\'s replicas, rounded up, at least 1 when positive', () => {
    expect(bufferChunkCount({ percentage: 20 }, chunk, 10)).to.equal(2);
    expect(bufferChunkCount({ percentage: 20 }, chunk, 30)).to.equal(6);
    expect(bufferChunkCount({ percentage: 20 }, chunk, 11)).to.equal(3);
    expect(bufferChunkCount({ percentage: 1 }, chunk, 3)).to.equal(1);
    expect(bufferChunkCount({ percentage: 0 }, chunk, 30)).to.equal(0);
  });
  it('the larger of replicas and percentage', () => {
    expect(bufferChunkCount({ replicas: 3, percentage: 20 }, chunk, 10)).to.equal(3);
    expect(bufferChunkCount({ replicas: 3, percentage: 20 }, chunk, 30)).to.equal(6);
  });
  it('capped by what fits in limits; with neither replicas nor percentage, as many as fit', () => {
    expect(bufferChunkCount({ replicas: 10, limits: { cpu: 4500 } }, chunk)).to.equal(4);
    expect(bufferChunkCount({ percentage: 50, limits: { cpu: 10_000, memory: 3 * 2 ** 30 } }, chunk, 20)).to.equal(3);
    expect(bufferChunkCount({ limits: { cpu: 7000 } }, chunk)).to.equal(7);
  });
  it('undefined when limits name nothing the chunk requests', () => {
    expect(bufferChunkCount({ replicas: 2, limits: { 'nvidia.com/gpu': 4 } }, chunk)).to.equal(undefined);
  });
});
