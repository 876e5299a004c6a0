import { expect } from 'chai';
import { capiPath, groupId, groupPath } from '../../../src/capi/group-resource.js';

describe('capi: CAPI object paths', () => {
  it('paths and ids of node groups and Machines at the served version', () => {
    const group = { kind: 'MachineDeployment' as const, namespace: 'capi ns', name: 'md-0' };
    expect(groupId(group)).to.equal('MachineDeployment/capi ns/md-0');
    expect(groupPath('v1beta2', group)).to.equal('/apis/cluster.x-k8s.io/v1beta2/namespaces/capi%20ns/machinedeployments/md-0');
    expect(capiPath('v1beta1', 'Machine', 'capi')).to.equal('/apis/cluster.x-k8s.io/v1beta1/namespaces/capi/machines');
  });
});
