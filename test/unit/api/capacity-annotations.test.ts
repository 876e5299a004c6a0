import { expect } from 'chai';
import {
  capacityTypeOf, parseCapacityAnnotations, parseLabelsAnnotation, parseScalingBounds, parseTaintsAnnotation,
} from '../../../src/api/capacity-annotations.js';
import { parseNodeGroupObject } from '../../../src/api/capi.js';
import { derivedPricePerHour } from '../../../src/api/price.js';
import { ObjectValidationError } from '../../../src/api/validation-error.js';

const P = 'capacity.cluster-autoscaler.kubernetes.io/';
const MIN = 'cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size';
const MAX = 'cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size';

function group(annotations: Record<string, string>) {
  return parseNodeGroupObject({
    apiVersion: 'cluster.x-k8s.io/v1beta2', kind: 'MachineDeployment',
    metadata: { name: 'small', namespace: 'default', annotations }, spec: { clusterName: 'c', template: { spec: {} } },
  });
}

describe('capacity annotations', () => {
  describe('scaling bounds', () => {
    it('a group with neither annotation is not managed', () => {
      expect(parseScalingBounds(group({}))).to.equal(undefined);
    });
    it('reads min and max; min defaults to 0', () => {
      expect(parseScalingBounds(group({ [MIN]: '1', [MAX]: '10' }))).to.deep.equal({ minSize: 1, maxSize: 10 });
      expect(parseScalingBounds(group({ [MAX]: '5' }))).to.deep.equal({ minSize: 0, maxSize: 5 });
      expect(parseScalingBounds(group({ [MIN]: '3', [MAX]: '3' }))).to.deep.equal({ minSize: 3, maxSize: 3 });
    });
    it('min = max = 0 is not managed, as in Cluster Autoscaler', () => {
      expect(parseScalingBounds(group({ [MIN]: '0', [MAX]: '0' }))).to.equal(undefined);
    });
    it('rejects bad values with the annotation named', () => {
      expect(() => parseScalingBounds(group({ [MIN]: 'x', [MAX]: '3' }))).to.throw(ObjectValidationError, `MachineDeployment default/small: annotation ${MIN}: must be a non-negative integer, got "x"`);
      expect(() => parseScalingBounds(group({ [MAX]: '-1' }))).to.throw(ObjectValidationError, /must be a non-negative integer/);
      expect(() => parseScalingBounds(group({ [MIN]: '5', [MAX]: '2' }))).to.throw(ObjectValidationError, /2 is less than min size 5/);
      expect(() => parseScalingBounds(group({ [MIN]: '1' }))).to.throw(ObjectValidationError, /is required/);
    });
  });

  describe('shape', () => {
    it('reads cpu, memory, disk, maxPods, gpus as allocatable (decimal vs binary units)', () => {
      const c = parseCapacityAnnotations(group({
        [`${P}cpu`]: '4', [`${P}memory`]: '16G', [`${P}ephemeral-disk`]: '100Gi', [`${P}maxPods`]: '58',
        [`${P}gpu-type`]: 'amd.com/gpu', [`${P}gpu-count`]: '2',
      }));
      expect(c.complete).to.equal(true);
      expect(c.allocatable).to.deep.equal({ cpu: 4000, memory: 16e9, 'ephemeral-storage': 100 * 2 ** 30, pods: 58, 'amd.com/gpu': 2 });
      expect(c.gpuResource).to.equal('amd.com/gpu');
    });
    it('maxPods defaults to 110; gpu-type defaults to nvidia.com/gpu', () => {
      const c = parseCapacityAnnotations(group({ [`${P}cpu`]: '500m', [`${P}memory`]: '1Gi', [`${P}gpu-count`]: '1' }));
      expect(c.allocatable).to.deep.equal({ cpu: 500, memory: 2 ** 30, pods: 110, 'nvidia.com/gpu': 1 });
    });
    it('partial annotations are incomplete and do not invent a pod count', () => {
      const c = parseCapacityAnnotations(group({ [`${P}cpu`]: '2' }));
      expect(c.complete).to.equal(false);
      expect(c.allocatable).to.deep.equal({ cpu: 2000 });
      expect(parseCapacityAnnotations(group({})).allocatable).to.deep.equal({});
    });
    it('names the object and annotation for a bad quantity', () => {
      expect(() => parseCapacityAnnotations(group({ [`${P}memory`]: '12Qi' }))).to.throw(
        ObjectValidationError, `MachineDeployment default/small: annotation ${P}memory: invalid quantity "12Qi"`,
      );
      expect(() => parseCapacityAnnotations(group({ [`${P}cpu`]: '-1' }))).to.throw(ObjectValidationError, /must not be negative/);
      expect(() => parseCapacityAnnotations(group({ [`${P}maxPods`]: '1.5' }))).to.throw(ObjectValidationError, /maxPods: must be a non-negative integer/);
      expect(() => parseCapacityAnnotations(group({ [`${P}gpu-type`]: 'gpu' }))).to.throw(ObjectValidationError, /gpu-type: must be an extended resource name/);
    });
  });

  describe('labels and taints', () => {
    it('parses the labels annotation', () => {
      expect(parseLabelsAnnotation('a=1, example.com/b=x-y ,c=')).to.deep.equal({ a: '1', 'example.com/b': 'x-y', c: '' });
      expect(parseLabelsAnnotation('')).to.deep.equal({});
      expect(() => parseLabelsAnnotation('novalue')).to.throw(/not key=value/);
      expect(() => parseLabelsAnnotation('bad key=1')).to.throw(/invalid label key/);
      expect(() => parseLabelsAnnotation('k=bad value')).to.throw(/invalid label value/);
    });
    it('parses the taints annotation', () => {
      expect(parseTaintsAnnotation('gpu=true:NoSchedule, dedicated:NoExecute,soft=x:PreferNoSchedule')).to.deep.equal([
        { key: 'gpu', value: 'true', effect: 'NoSchedule' },
        { key: 'dedicated', effect: 'NoExecute' },
        { key: 'soft', value: 'x', effect: 'PreferNoSchedule' },
      ]);
      expect(() => parseTaintsAnnotation('gpu=true')).to.throw(/no effect/);
      expect(() => parseTaintsAnnotation('gpu=true:Never')).to.throw(/effect must be one of/);
    });
    it('wraps label/taint errors with the object and annotation', () => {
      expect(() => parseCapacityAnnotations(group({ [`${P}taints`]: 'a=b:Nope' }))).to.throw(
        ObjectValidationError, /^MachineDeployment default\/small: annotation capacity.cluster-autoscaler.kubernetes.io\/taints: taint "a=b:Nope": effect/,
      );
      const c = parseCapacityAnnotations(group({ [`${P}labels`]: 'a=1', [`${P}taints`]: 'k:NoSchedule' }));
      expect(c.labels).to.deep.equal({ a: '1' });
      expect(c.taints).to.deep.equal([{ key: 'k', effect: 'NoSchedule' }]);
    });
  });

  describe('price and capacity type', () => {
    it('reads headroom.dev/price as a decimal', () => {
      expect(parseCapacityAnnotations(group({ 'headroom.dev/price': '0.096' })).pricePerHour).to.equal(0.096);
      expect(parseCapacityAnnotations(group({ 'headroom.dev/price': '2' })).pricePerHour).to.equal(2);
      expect(parseCapacityAnnotations(group({})).pricePerHour).to.equal(undefined);
      for (const bad of ['-1', 'cheap', '1e3', '$1']) {
        expect(() => parseCapacityAnnotations(group({ 'headroom.dev/price': bad }))).to.throw(ObjectValidationError, /headroom.dev\/price: must be a non-negative decimal/);
      }
    });
    it('derives a price proportional to cpu, memory and gpus', () => {
      const small = derivedPricePerHour({ cpu: 2000, memory: 8 * 2 ** 30, pods: 110 });
      const big = derivedPricePerHour({ cpu: 16000, memory: 64 * 2 ** 30, pods: 110 });
      expect(small).to.be.greaterThan(0);
      expect(big).to.be.closeTo(8 * small, 1e-5);
      expect(derivedPricePerHour({ cpu: 2000, memory: 8 * 2 ** 30, 'nvidia.com/gpu': 1 })).to.be.greaterThan(small + 0.5);
      expect(derivedPricePerHour({ cpu: 2000, memory: 8 * 2 ** 30 }, 'spot')).to.be.lessThan(small);
    });
    it('reads the capacity type label', () => {
      const g = group({});
      expect(capacityTypeOf(g, {})).to.equal('on-demand');
      expect(capacityTypeOf(g, { 'karpenter.sh/capacity-type': 'spot' })).to.equal('spot');
      expect(() => capacityTypeOf(g, { 'karpenter.sh/capacity-type': 'cheap' })).to.throw(ObjectValidationError, /label karpenter.sh\/capacity-type: must be/);
    });
  });
});
