import { expect } from 'chai';
import type { MachineTemplateSpec } from '../../../src/api/nodepool.js';
import type { UnstructuredObject } from '../../../src/api/unstructured-object.js';
import {
  CLONED_FROM_GROUPKIND_ANNOTATION, CLONED_FROM_NAME_ANNOTATION, cloneFromTemplate, standaloneMachine,
} from '../../../src/capi/machine-template.js';

const tpl: MachineTemplateSpec = {
  namespace: 'capi', clusterName: 'prod', version: 'v1.36.0', failureDomain: 'zone-a',
  bootstrapConfigTemplateRef: { apiVersion: 'bootstrap.cluster.x-k8s.io/v1beta2', kind: 'KubeadmConfigTemplate', name: 'kc' },
  infrastructureTemplateRef: { apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta2', kind: 'DockerMachineTemplate', name: 'dm' },
  capacity: { cpu: 4000, memory: 8 * 2 ** 30, pods: 110 },
  labels: { tier: 'batch' }, taints: [],
};

describe('capi: Machines built from templates', () => {
  it('a standalone Machine references its bootstrap and infrastructure objects in the contract of the version', () => {
    const v2 = standaloneMachine('v1beta2', 'pool-abc', { name: 'pool', uid: 'u1' }, tpl);
    expect(v2.apiVersion).to.equal('cluster.x-k8s.io/v1beta2');
    expect(v2.spec?.bootstrap).to.deep.equal({ configRef: { apiGroup: 'bootstrap.cluster.x-k8s.io', kind: 'KubeadmConfig', name: 'pool-abc' } });
    expect(v2.spec?.infrastructureRef).to.deep.equal({ apiGroup: 'infrastructure.cluster.x-k8s.io', kind: 'DockerMachine', name: 'pool-abc' });
    expect(v2.metadata?.ownerReferences?.[0]).to.include({ kind: 'NodePool', name: 'pool', uid: 'u1', controller: true });
    expect(v2.metadata?.labels).to.include({ tier: 'batch', 'cluster.x-k8s.io/cluster-name': 'prod' });
    expect(v2.metadata?.annotations).to.include({ 'capacity.cluster-autoscaler.kubernetes.io/cpu': '4000m' });
    const v1 = standaloneMachine('v1beta1', 'pool-abc', { name: 'pool', uid: 'u1' }, tpl);
    expect(v1.spec?.infrastructureRef).to.deep.equal({
      apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta2', kind: 'DockerMachine', name: 'pool-abc', namespace: 'capi',
    });
  });

  it('clones a template the way CAPI does: kind minus Template, cloned-from annotations, its spec copied', () => {
    const template: UnstructuredObject = {
      apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta2', kind: 'DockerMachineTemplate', metadata: { name: 'dm' },
      spec: { template: { metadata: { labels: { a: 'b' } }, spec: { image: 'x' } } },
    };
    const clone = cloneFromTemplate(template, 'm-1', 'capi', 'prod', { c: 'd' });
    expect(clone.kind).to.equal('DockerMachine');
    expect(clone.metadata?.labels).to.deep.equal({ a: 'b', c: 'd', 'cluster.x-k8s.io/cluster-name': 'prod' });
    expect(clone.metadata?.annotations).to.deep.equal({
      [CLONED_FROM_NAME_ANNOTATION]: 'dm', [CLONED_FROM_GROUPKIND_ANNOTATION]: 'DockerMachineTemplate.infrastructure.cluster.x-k8s.io',
    });
    expect(clone.spec).to.deep.equal({ image: 'x' });
    expect(clone.spec).to.not.equal((template.spec!.template as { spec: unknown }).spec);
    expect(() => cloneFromTemplate({ ...template, kind: 'DockerMachine' }, 'm', 'capi', 'prod', {})).to.throw(/must end in "Template"/);
  });
});
