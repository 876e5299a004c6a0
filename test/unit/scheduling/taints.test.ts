import { expect } from 'chai';
import type { V1Taint } from '@kubernetes/client-node';
import { countIntolerablePreferNoSchedule, formatTaint, tolerates, untoleratedTaint } from '../../../src/scheduling/taints.js';

describe('taints and tolerations', () => {
  const gpu: V1Taint = { key: 'gpu', value: 'true', effect: 'NoSchedule' };

  it('Equal (the default) needs key, value and effect to match', () => {
    expect(tolerates({ key: 'gpu', value: 'true', effect: 'NoSchedule' }, gpu)).to.equal(true);
    expect(tolerates({ key: 'gpu', operator: 'Equal', value: 'true' }, gpu)).to.equal(true);
    expect(tolerates({ key: 'gpu', value: 'false', effect: 'NoSchedule' }, gpu)).to.equal(false);
    expect(tolerates({ key: 'gpu', value: 'true', effect: 'NoExecute' }, gpu)).to.equal(false);
    expect(tolerates({ key: 'other', value: 'true' }, gpu)).to.equal(false);
  });

  it('Exists matches any value; an empty key with Exists matches every taint', () => {
    expect(tolerates({ key: 'gpu', operator: 'Exists' }, gpu)).to.equal(true);
    expect(tolerates({ operator: 'Exists' }, gpu)).to.equal(true);
    expect(tolerates({ operator: 'Exists', effect: 'NoExecute' }, gpu)).to.equal(false);
    expect(tolerates({ key: 'gpu', operator: 'Bogus' }, gpu)).to.equal(false);
  });

  it('a taint without value is tolerated by Equal with an empty value', () => {
    expect(tolerates({ key: 'dedicated', effect: 'NoSchedule' }, { key: 'dedicated', effect: 'NoSchedule' })).to.equal(true);
    expect(tolerates({ key: 'dedicated', value: 'x' }, { key: 'dedicated', effect: 'NoSchedule' })).to.equal(false);
  });

  it('NoSchedule and NoExecute are hard by default, PreferNoSchedule is not', () => {
    const taints: V1Taint[] = [
      { key: 'soft', effect: 'PreferNoSchedule' },
      { key: 'a', effect: 'NoSchedule' },
      { key: 'b', effect: 'NoExecute' },
    ];
    expect(untoleratedTaint(taints, [])?.key).to.equal('a');
    expect(untoleratedTaint(taints, [{ key: 'a', operator: 'Exists' }])?.key).to.equal('b');
    expect(untoleratedTaint(taints, [{ key: 'a', operator: 'Exists' }, { key: 'b', operator: 'Exists', effect: 'NoExecute' }])).to.equal(undefined);
    expect(untoleratedTaint(taints, [], ['NoExecute'])?.key).to.equal('b');
    expect(untoleratedTaint(taints, [], ['PreferNoSchedule'])?.key).to.equal('soft');
    expect(untoleratedTaint([], [])).to.equal(undefined);
  });

  it('counts untolerated PreferNoSchedule taints for scoring', () => {
    const taints: V1Taint[] = [
      { key: 's1', effect: 'PreferNoSchedule' },
      { key: 's2', value: 'v', effect: 'PreferNoSchedule' },
      { key: 'hard', effect: 'NoSchedule' },
    ];
    expect(countIntolerablePreferNoSchedule(taints, [])).to.equal(2);
    expect(countIntolerablePreferNoSchedule(taints, [{ key: 's1', operator: 'Exists' }])).to.equal(1);
    expect(countIntolerablePreferNoSchedule(taints, [{ key: 's2', value: 'v', effect: 'PreferNoSchedule' }])).to.equal(1);
    // A NoSchedule toleration does not cover a PreferNoSchedule taint.
    expect(countIntolerablePreferNoSchedule(taints, [{ key: 's1', operator: 'Exists', effect: 'NoSchedule' }])).to.equal(2);
    expect(countIntolerablePreferNoSchedule(taints, [{ operator: 'Exists' }])).to.equal(0);
  });

  it('formats taints', () => {
    expect(formatTaint(gpu)).to.equal('gpu=true:NoSchedule');
    expect(formatTaint({ key: 'k', effect: 'NoExecute' })).to.equal('k:NoExecute');
  });
});
