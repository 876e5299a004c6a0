import { expect } from 'chai';
import { emptyClusterObjects, type UnstructuredObject } from '../../../src/cluster/objects.js';
import { capacityBufferPods } from '../../../src/provisioning/capacity-buffers.js';

function buffer(name: string, spec: Record<string, unknown>): UnstructuredObject {
  return { apiVersion: 'autoscaling.x-k8s.io/v1alpha1', kind: 'CapacityBuffer', metadata: { name, namespace: 'ns', uid: `uid-${name}` }, spec };
}

describe('CapacityBuffers as predicted pods', () => {
  const objs = emptyClusterObjects();
  objs.podTemplates = [{
    apiVersion: 'v1', kind: 'PodTemplate', metadata: { name: 'shape', namespace: 'ns' },
    template: { metadata: { labels: { app: 'buffer' } }, spec: { containers: [{ name: 'c', image: 'x', resources: { requests: { cpu: '1', memory: '1Gi' } } }] } },
  } as never];

  it('turns podTemplateRef + replicas into that many predicted pods of the template\'s shape', () => {
    objs.capacityBuffers = [buffer('b', { podTemplateRef: { name: 'shape' }, replicas: 3 })];
    const pods = capacityBufferPods(objs);
    expect(pods).to.have.length(3);
    for (const p of pods) {
      expect(p).to.deep.include({ predicted: true, namespace: 'ns', equivalenceKey: 'CapacityBuffer/ns/b' });
      expect(p.requests).to.include({ cpu: 1000, memory: 2 ** 30 });
      expect(p.labels).to.deep.equal({ app: 'buffer' });
    }
    expect(new Set(pods.map((p) => p.key)).size).to.equal(3);
  });

  it('ignores other strategies, missing templates, and buffers without replicas', () => {
    objs.capacityBuffers = [
      buffer('other', { provisioningStrategy: 'buffer.gke.io/standby-capacity', podTemplateRef: { name: 'shape' }, replicas: 2 }),
      buffer('missing', { podTemplateRef: { name: 'nope' }, replicas: 2 }),
      buffer('zero', { podTemplateRef: { name: 'shape' } }),
      buffer('scalable', { scalableRef: { kind: 'Deployment', name: 'web' }, percentage: 10 }),
    ];
    expect(capacityBufferPods(objs)).to.deep.equal([]);
  });
});
