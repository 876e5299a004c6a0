import { expect } from 'chai';
import { parseNodePool, type NodePool } from '../../../src/api/nodepool.js';
import { admitGroup } from '../../../src/cluster/pool-admission.js';
import { buildSnapshot } from '../../../src/cluster/build-snapshot.js';
import { loadObjects } from '../../../src/cluster/load-objects.js';

const pool = (name: string, spec: Record<string, unknown>): NodePool =>
  parseNodePool({ apiVersion: 'headroom.dev/v1alpha1', kind: 'NodePool', metadata: { name }, spec });
const SPOT = [{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['spot'] }];

describe('admitGroup: a stricter NodePool never scales more (ADR 0138)', () => {
  it('without any NodePool, a group is scaled with the defaults (no pool, not held)', () => {
    expect(admitGroup([], 0, { team: 'a' }, {})).to.deep.equal({});
  });

  it('a group the selector picks but a requirement refuses is held, naming the pool and the requirement', () => {
    const strict = pool('m', { nodeGroupSelector: { matchLabels: { team: 'a' } }, requirements: SPOT, limits: { cpu: '1' } });
    const a = admitGroup([strict], 1, { team: 'a' }, { 'karpenter.sh/capacity-type': 'on-demand' });
    expect(a.pool).to.equal(undefined);
    expect(a.held).to.contain('NodePool m selects it').and.contain('karpenter.sh/capacity-type In [spot]').and.contain('karpenter.sh/capacity-type=on-demand');
  });

  it('once any NodePool exists, a group no selector picks is held too (narrowing a selector frees nothing)', () => {
    const narrow = pool('m', { nodeGroupSelector: { matchLabels: { team: 'b' } }, limits: { cpu: '1' } });
    expect(admitGroup([narrow], 1, { team: 'a' }, {}).held).to.contain("no NodePool's nodeGroupSelector selects it");
  });

  it('an invalid NodePool holds the groups rather than freeing them', () => {
    expect(admitGroup([], 1, { team: 'a' }, {}).held).to.contain('1 NodePool is invalid');
  });

  it('a pool that admits the group still wins by weight', () => {
    const low = pool('low', { weight: 1, nodeGroupSelector: {} });
    const spot = pool('spot', { weight: 50, nodeGroupSelector: {}, requirements: SPOT });
    expect(admitGroup([low, spot], 2, {}, { 'karpenter.sh/capacity-type': 'spot' }).pool?.name).to.equal('spot');
    expect(admitGroup([low, spot], 2, {}, {}).pool?.name).to.equal('low');
  });
});

const GROUP = `
apiVersion: cluster.x-k8s.io/v1beta2
kind: MachineDeployment
metadata:
  name: workers-m
  namespace: capi
  labels: {pool: m}
  annotations:
    cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size: "0"
    cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size: "5"
    capacity.cluster-autoscaler.kubernetes.io/cpu: "2"
    capacity.cluster-autoscaler.kubernetes.io/memory: 8Gi
spec:
  clusterName: c
  replicas: 0
  selector: {matchLabels: {cluster.x-k8s.io/deployment-name: workers-m}}
  template:
    metadata: {labels: {cluster.x-k8s.io/deployment-name: workers-m}}
    spec:
      clusterName: c
      bootstrap: {configRef: {apiGroup: bootstrap.cluster.x-k8s.io, kind: KubeadmConfigTemplate, name: w}}
      infrastructureRef: {apiGroup: infrastructure.cluster.x-k8s.io, kind: DockerMachineTemplate, name: w}
`;

describe('buildSnapshot with a held group', () => {
  it('leaves the held group out of the groups and says why on the group', () => {
    const text = `${GROUP}---
apiVersion: headroom.dev/v1alpha1
kind: NodePool
metadata: {name: m}
spec:
  nodeGroupSelector: {matchLabels: {pool: m}}
  requirements: [{key: karpenter.sh/capacity-type, operator: In, values: [spot]}]
  limits: {cpu: "1"}
`;
    const warnings: Array<{ message: string; kind?: string; name?: string }> = [];
    const s = buildSnapshot(loadObjects([{ source: 'x.yaml', text }]), { onIssue: (i) => warnings.push({ message: i.message, kind: i.object?.kind, name: i.object?.name }) });
    expect(s.groups.map((g) => g.id)).to.deep.equal([]);
    expect(warnings).to.have.length(1);
    expect(warnings[0]).to.include({ kind: 'MachineDeployment', name: 'workers-m' });
    expect(warnings[0]!.message).to.contain('held');
  });
});
