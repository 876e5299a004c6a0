import { expect } from 'chai';
import { emptyClusterObjects } from '../../../src/cluster/objects.js';
import { formatCpu, formatMemory, nodePoolStatuses } from '../../../src/controller/nodepool-status.js';
import { machineDeployment } from '../../integration/controller-objects.js';

describe('NodePool status', () => {
  it('formats quantities the way kubectl shows them', () => {
    expect(formatCpu(12_000)).to.equal('12');
    expect(formatCpu(12_500)).to.equal('12500m');
    expect(formatMemory(48 * 2 ** 30)).to.equal('48Gi');
    expect(formatMemory(1536 * 2 ** 20)).to.equal('1536Mi');
    expect(formatMemory(1000)).to.equal('1000');
  });

  it('reports usage incl. in-flight nodes, member groups, and Ready / Invalid / NoNodeGroups', () => {
    const objs = emptyClusterObjects();
    objs.nodeGroups = [
      machineDeployment({ namespace: 'ns', name: 'a', replicas: 2, min: 0, max: 5, cpu: '4', memory: '16Gi', labels: { pool: 'p' } }),
      machineDeployment({ namespace: 'ns', name: 'b', replicas: 1, min: 0, max: 5, cpu: '2', memory: '8Gi', labels: { pool: 'p' } }),
    ];
    objs.nodePools = [
      { apiVersion: 'headroom.dev/v1alpha1', kind: 'NodePool', metadata: { name: 'p' }, spec: { nodeGroupSelector: { matchLabels: { pool: 'p' } } } },
      { apiVersion: 'headroom.dev/v1alpha1', kind: 'NodePool', metadata: { name: 'empty' }, spec: { nodeGroupSelector: { matchLabels: { pool: 'none' } } } },
      { apiVersion: 'headroom.dev/v1alpha1', kind: 'NodePool', metadata: { name: 'bad' }, spec: { weight: 500, nodeGroupSelector: {} } },
    ];
    const st = nodePoolStatuses(objs, '2026-01-01T00:00:00Z');
    expect(st.get('p')).to.deep.include({ resources: { cpu: '10', memory: '40Gi', nodes: '3' }, nodeGroups: ['MachineDeployment/ns/a', 'MachineDeployment/ns/b'] });
    expect(st.get('p')!.conditions[0]).to.include({ type: 'Ready', status: 'True' });
    expect(st.get('empty')!.conditions[0]).to.include({ status: 'False', reason: 'NoNodeGroups' });
    expect(st.get('bad')!.conditions[0]).to.include({ status: 'False', reason: 'Invalid' });
    expect(st.get('bad')!.conditions[0]!.message).to.match(/weight/);
  });
});
