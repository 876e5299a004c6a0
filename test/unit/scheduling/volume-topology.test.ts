import { expect } from 'chai';
import { topologyTermsMatch, volumeTopologyAllows, volumeTopologyReason, type VolumeTopology } from '../../../src/scheduling/volume-topology.js';
import { spod } from './pod-fixtures.js';

const ZONE = 'topology.kubernetes.io/zone';
const a = { [ZONE]: 'a' };
const b = { [ZONE]: 'b' };

const volumes: VolumeTopology = {
  persistentVolumes: {
    'pv-a': { nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: ZONE, operator: 'In', values: ['a'] }] }] } } },
    'pv-local': { nodeAffinity: { required: { nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n1'] }] }] } } },
    'pv-any': {},
  },
  claims: {
    'default/bound-a': { volumeName: 'pv-a', storageClassName: 'gp3', bound: true },
    'default/bound-local': { volumeName: 'pv-local', bound: true },
    'default/bound-any': { volumeName: 'pv-any', bound: true },
    'default/bound-unknown-pv': { volumeName: 'pv-gone', bound: true },
    'default/wffc-b': { storageClassName: 'zonal-b', bound: false },
    'default/wffc-any': { storageClassName: 'gp3', bound: false },
    'default/immediate': { storageClassName: 'fast-immediate', bound: false },
    'default/no-class': { bound: false },
    'default/unknown-class': { storageClassName: 'who-knows', bound: false },
  },
  storageClasses: {
    gp3: { waitForFirstConsumer: true },
    'zonal-b': { waitForFirstConsumer: true, allowedTopologies: [{ matchLabelExpressions: [{ key: ZONE, values: ['b', 'c'] }] }] },
    'fast-immediate': { waitForFirstConsumer: false },
  },
};

function withClaims(...claims: string[]) {
  return spod('p', { volumes: claims.map((c) => ({ name: c, persistentVolumeClaim: { claimName: c } })) });
}

describe('volume topology', () => {
  it('pods without claims are allowed anywhere', () => {
    expect(volumeTopologyAllows(spod('p'), a, volumes)).to.equal(true);
  });

  it('bound PV node affinity', () => {
    expect(volumeTopologyAllows(withClaims('bound-a'), a, volumes)).to.equal(true);
    expect(volumeTopologyAllows(withClaims('bound-a'), b, volumes)).to.equal(false);
    expect(volumeTopologyReason(withClaims('bound-a'), b, volumes)).to.match(/persistentvolume pv-a .*default\/bound-a/);
    expect(volumeTopologyAllows(withClaims('bound-any'), b, volumes)).to.equal(true);
    expect(volumeTopologyAllows(withClaims('bound-unknown-pv'), b, volumes)).to.equal(true);
  });

  it('local PV pinned by metadata.name: only that node, never a new one', () => {
    expect(volumeTopologyAllows(withClaims('bound-local'), a, volumes, 'n1')).to.equal(true);
    expect(volumeTopologyAllows(withClaims('bound-local'), a, volumes, 'n2')).to.equal(false);
    expect(volumeTopologyAllows(withClaims('bound-local'), a, volumes)).to.equal(false);
  });

  it('WaitForFirstConsumer claims follow allowedTopologies', () => {
    expect(volumeTopologyAllows(withClaims('wffc-b'), b, volumes)).to.equal(true);
    expect(volumeTopologyAllows(withClaims('wffc-b'), { [ZONE]: 'c' }, volumes)).to.equal(true);
    expect(volumeTopologyAllows(withClaims('wffc-b'), a, volumes)).to.equal(false);
    expect(volumeTopologyReason(withClaims('wffc-b'), a, volumes)).to.match(/storageclass zonal-b allowedTopologies/);
    expect(volumeTopologyAllows(withClaims('wffc-b'), {}, volumes)).to.equal(false);
    expect(volumeTopologyAllows(withClaims('wffc-any'), a, volumes)).to.equal(true);
  });

  it('unbound Immediate claims (or claims without class) are not schedulable yet', () => {
    expect(volumeTopologyReason(withClaims('immediate'), a, volumes)).to.match(/unbound.*Immediate/);
    expect(volumeTopologyAllows(withClaims('no-class'), a, volumes)).to.equal(false);
  });

  it('a missing claim is not schedulable; an unknown class adds no constraint', () => {
    expect(volumeTopologyReason(withClaims('nope'), a, volumes)).to.equal('persistentvolumeclaim default/nope not found');
    expect(volumeTopologyAllows(withClaims('unknown-class'), a, volumes)).to.equal(true);
  });

  it('every claim must allow the node', () => {
    expect(volumeTopologyAllows(withClaims('bound-a', 'wffc-b'), a, volumes)).to.equal(false);
    expect(volumeTopologyAllows(withClaims('bound-a', 'wffc-b'), b, volumes)).to.equal(false);
    expect(volumeTopologyAllows(withClaims('bound-a', 'wffc-any'), a, volumes)).to.equal(true);
  });

  it('allowedTopologies: OR of terms, AND within; empty term matches nothing', () => {
    const terms = [
      { matchLabelExpressions: [{ key: ZONE, values: ['a'] }, { key: 'arch', values: ['arm64'] }] },
      { matchLabelExpressions: [{ key: ZONE, values: ['b'] }] },
    ];
    expect(topologyTermsMatch(terms, { [ZONE]: 'a', arch: 'arm64' })).to.equal(true);
    expect(topologyTermsMatch(terms, { [ZONE]: 'a', arch: 'amd64' })).to.equal(false);
    expect(topologyTermsMatch(terms, b)).to.equal(true);
    expect(topologyTermsMatch([{}], b)).to.equal(false);
  });
});
