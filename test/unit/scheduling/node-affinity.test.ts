import { expect } from 'chai';
import type { V1Affinity } from '@kubernetes/client-node';
import { nodeSelectorMatches, preferredNodeAffinityScore } from '../../../src/scheduling/node-affinity.js';
import { spod } from './pod-fixtures.js';

const zoneA = { 'topology.kubernetes.io/zone': 'a', 'node.kubernetes.io/instance-type': 'm5.large', arch: 'amd64' };
const zoneB = { 'topology.kubernetes.io/zone': 'b', 'node.kubernetes.io/instance-type': 'c5.xlarge', arch: 'arm64' };

function required(...terms: object[]): V1Affinity {
  return { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: terms as never } } };
}

describe('node affinity', () => {
  it('nodeSelector needs every pair', () => {
    expect(nodeSelectorMatches(spod('p', { nodeSelector: { arch: 'amd64' } }), zoneA)).to.equal(true);
    expect(nodeSelectorMatches(spod('p', { nodeSelector: { arch: 'amd64', 'topology.kubernetes.io/zone': 'b' } }), zoneA)).to.equal(false);
    expect(nodeSelectorMatches(spod('p'), {})).to.equal(true);
  });

  it('ORs terms and ANDs expressions within a term', () => {
    const p = spod('p', {
      affinity: required(
        { matchExpressions: [{ key: 'topology.kubernetes.io/zone', operator: 'In', values: ['a'] }, { key: 'arch', operator: 'In', values: ['arm64'] }] },
        { matchExpressions: [{ key: 'topology.kubernetes.io/zone', operator: 'In', values: ['b'] }] },
      ),
    });
    expect(nodeSelectorMatches(p, zoneA)).to.equal(false); // first term fails on arch, second on zone
    expect(nodeSelectorMatches(p, zoneB)).to.equal(true);
    expect(nodeSelectorMatches(p, { ...zoneA, arch: 'arm64' })).to.equal(true);
  });

  it('nodeSelector AND required affinity', () => {
    const p = spod('p', { nodeSelector: { arch: 'amd64' }, affinity: required({ matchExpressions: [{ key: 'topology.kubernetes.io/zone', operator: 'In', values: ['b'] }] }) });
    expect(nodeSelectorMatches(p, zoneA)).to.equal(false);
    expect(nodeSelectorMatches(p, zoneB)).to.equal(false);
    expect(nodeSelectorMatches(p, { ...zoneB, arch: 'amd64' })).to.equal(true);
  });

  it('an empty term or an empty term list matches nothing', () => {
    expect(nodeSelectorMatches(spod('p', { affinity: required({}) }), zoneA)).to.equal(false);
    expect(nodeSelectorMatches(spod('p', { affinity: required() }), zoneA)).to.equal(false);
    expect(nodeSelectorMatches(spod('p', { affinity: required({}, { matchExpressions: [{ key: 'arch', operator: 'Exists' }] }) }), zoneA)).to.equal(true);
  });

  it('matchFields on metadata.name: In needs the name, NotIn rejects it, new nodes have none', () => {
    const pin = spod('p', { affinity: required({ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n1'] }] }) });
    expect(nodeSelectorMatches(pin, zoneA, 'n1')).to.equal(true);
    expect(nodeSelectorMatches(pin, zoneA, 'n2')).to.equal(false);
    expect(nodeSelectorMatches(pin, zoneA)).to.equal(false);
    const avoid = spod('p', { affinity: required({ matchFields: [{ key: 'metadata.name', operator: 'NotIn', values: ['n1'] }] }) });
    expect(nodeSelectorMatches(avoid, zoneA, 'n1')).to.equal(false);
    expect(nodeSelectorMatches(avoid, zoneA, 'n2')).to.equal(true);
    expect(nodeSelectorMatches(avoid, zoneA)).to.equal(true);
    const other = spod('p', { affinity: required({ matchFields: [{ key: 'metadata.uid', operator: 'In', values: ['n1'] }] }) });
    expect(nodeSelectorMatches(other, zoneA, 'n1')).to.equal(false);
    const both = spod('p', { affinity: required({ matchExpressions: [{ key: 'arch', operator: 'In', values: ['amd64'] }], matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n1'] }] }) });
    expect(nodeSelectorMatches(both, zoneA, 'n1')).to.equal(true);
    expect(nodeSelectorMatches(both, zoneB, 'n1')).to.equal(false);
  });

  it('Gt/Lt in required affinity', () => {
    const p = spod('p', { affinity: required({ matchExpressions: [{ key: 'cpus', operator: 'Gt', values: ['8'] }] }) });
    expect(nodeSelectorMatches(p, { cpus: '16' })).to.equal(true);
    expect(nodeSelectorMatches(p, { cpus: '8' })).to.equal(false);
  });

  it('sums the weights of matching preferred terms', () => {
    const p = spod('p', {
      affinity: {
        nodeAffinity: {
          preferredDuringSchedulingIgnoredDuringExecution: [
            { weight: 10, preference: { matchExpressions: [{ key: 'topology.kubernetes.io/zone', operator: 'In', values: ['a'] }] } },
            { weight: 5, preference: { matchExpressions: [{ key: 'arch', operator: 'In', values: ['amd64'] }] } },
            { weight: 7, preference: { matchExpressions: [{ key: 'arch', operator: 'In', values: ['arm64'] }] } },
            { weight: 100, preference: {} },
          ],
        },
      },
    });
    expect(preferredNodeAffinityScore(p, zoneA)).to.equal(15);
    expect(preferredNodeAffinityScore(p, zoneB)).to.equal(7);
    expect(preferredNodeAffinityScore(p, {})).to.equal(0);
    expect(preferredNodeAffinityScore(spod('q'), zoneA)).to.equal(0);
  });
});
