import { expect } from 'chai';
import { isTrigger } from '../../../src/provisioning/triggers.js';

describe('isTrigger (what opens a batch window)', () => {
  it('fires on new unbound pods, new groups, pools and relists, not on status churn', () => {
    const pod = (nodeName?: string) => ({ metadata: { name: 'p' }, spec: nodeName ? { nodeName } : {} });
    expect(isTrigger('pods', { type: 'ADDED', object: pod() })).to.equal(true);
    expect(isTrigger('pods', { type: 'ADDED', object: pod('n1') })).to.equal(false);
    expect(isTrigger('pods', { type: 'MODIFIED', object: pod() })).to.equal(false);
    expect(isTrigger('pods', { type: 'RELIST' })).to.equal(true);
    expect(isTrigger('pods')).to.equal(true);
    expect(isTrigger('nodeGroups', { type: 'ADDED', object: {} })).to.equal(true);
    expect(isTrigger('nodeGroups', { type: 'MODIFIED', object: {} })).to.equal(false);
    expect(isTrigger('nodePools', { type: 'MODIFIED', object: {} })).to.equal(true);
    expect(isTrigger('nodes', { type: 'ADDED', object: {} })).to.equal(false);
  });
});
