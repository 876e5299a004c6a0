import { expect } from 'chai';
import { parseCapacityAnnotations } from '../../../src/api/capacity-annotations.js';
import { parseNodeGroupObject } from '../../../src/api/capi.js';
import {
  infrastructureObjectKey, infrastructureRefKey, parseInfrastructureTemplateCapacity, withInfrastructureTemplate,
} from '../../../src/api/infrastructure-template.js';
import type { UnstructuredObject } from '../../../src/api/unstructured-object.js';
import { ObjectValidationError } from '../../../src/api/validation-error.js';

const P = 'capacity.cluster-autoscaler.kubernetes.io/';
const GIB = 1024 ** 3;

function template(status: Record<string, unknown> | undefined): UnstructuredObject {
  return {
    apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta2', kind: 'DockerMachineTemplate',
    metadata: { name: 'tpl', namespace: 'ns' }, spec: { template: { spec: {} } }, ...(status ? { status } : {}),
  };
}

function group(annotations: Record<string, string>, infrastructureRef?: Record<string, string>, apiVersion = 'cluster.x-k8s.io/v1beta2') {
  return parseNodeGroupObject({
    apiVersion, kind: 'MachineDeployment',
    metadata: { name: 'md', namespace: 'ns', annotations },
    spec: { clusterName: 'c', template: { spec: infrastructureRef ? { infrastructureRef } : {} } },
  });
}

describe('infrastructure template capacity (scale from zero)', () => {
  it('reads status.capacity into scheduler units and status.nodeInfo into node labels', () => {
    const t = parseInfrastructureTemplateCapacity(template({
      capacity: { cpu: '4', memory: '16Gi', pods: '50', 'nvidia.com/gpu': '1', 'ephemeral-storage': '100Gi' },
      nodeInfo: { architecture: 'arm64', operatingSystem: 'linux' },
    }));
    expect(t).to.deep.equal({
      allocatable: { cpu: 4000, memory: 16 * GIB, pods: 50, 'nvidia.com/gpu': 1, 'ephemeral-storage': 100 * GIB },
      labels: { 'kubernetes.io/arch': 'arm64', 'kubernetes.io/os': 'linux' },
    });
  });

  it('a template that reports neither field says nothing', () => {
    expect(parseInfrastructureTemplateCapacity(template(undefined))).to.equal(undefined);
    expect(parseInfrastructureTemplateCapacity(template({ ready: true }))).to.equal(undefined);
  });

  it('rejects a malformed status naming the field', () => {
    expect(() => parseInfrastructureTemplateCapacity(template({ capacity: { memory: '12Qi' } })))
      .to.throw(ObjectValidationError, /DockerMachineTemplate ns\/tpl: status\.capacity\.memory/);
    expect(() => parseInfrastructureTemplateCapacity(template({ capacity: ['cpu'] }))).to.throw(ObjectValidationError, /status\.capacity: must be a resource list/);
    expect(() => parseInfrastructureTemplateCapacity(template({ nodeInfo: { architecture: 'a b' } }))).to.throw(ObjectValidationError, /status\.nodeInfo\.architecture/);
  });

  it('the node group view carries the infrastructure reference in v1beta2 and v1beta1 form; keys match the object', () => {
    const v2 = group({}, { apiGroup: 'infrastructure.cluster.x-k8s.io', kind: 'DockerMachineTemplate', name: 'tpl' });
    const v1 = group({}, { apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1', kind: 'DockerMachineTemplate', name: 'tpl', namespace: 'ns' }, 'cluster.x-k8s.io/v1beta1');
    for (const g of [v2, v1]) {
      expect(g.template.infrastructureRef).to.deep.equal({ group: 'infrastructure.cluster.x-k8s.io', kind: 'DockerMachineTemplate', name: 'tpl' });
      expect(infrastructureRefKey(g.namespace, g.template.infrastructureRef!)).to.equal(infrastructureObjectKey(template(undefined)));
    }
    expect(group({}).template.infrastructureRef).to.equal(undefined);
  });

  it('with no annotations the template alone makes the shape complete', () => {
    const g = group({});
    const merged = withInfrastructureTemplate(parseCapacityAnnotations(g), g.annotations,
      parseInfrastructureTemplateCapacity(template({ capacity: { cpu: '8', memory: '32Gi' }, nodeInfo: { architecture: 'arm64' } })));
    expect(merged.complete).to.equal(true);
    expect(merged.allocatable).to.deep.equal({ cpu: 8000, memory: 32 * GIB, pods: 110 });
    expect(merged.labels).to.deep.equal({ 'kubernetes.io/arch': 'arm64' });
  });

  it('the annotations override the template key by key, as in Cluster Autoscaler', () => {
    const g = group({ [`${P}memory`]: '8Gi', [`${P}labels`]: 'kubernetes.io/arch=amd64,team=a' });
    const merged = withInfrastructureTemplate(parseCapacityAnnotations(g), g.annotations,
      parseInfrastructureTemplateCapacity(template({ capacity: { cpu: '8', memory: '32Gi', pods: '40' }, nodeInfo: { architecture: 'arm64', operatingSystem: 'linux' } })));
    expect(merged.allocatable).to.deep.equal({ cpu: 8000, memory: 8 * GIB, pods: 40 });
    expect(merged.labels).to.deep.equal({ 'kubernetes.io/arch': 'amd64', 'kubernetes.io/os': 'linux', team: 'a' });
  });

  it('the default of 110 pods yields to the template\'s pods; an explicit maxPods annotation does not', () => {
    const tpl = parseInfrastructureTemplateCapacity(template({ capacity: { cpu: '2', memory: '4Gi', pods: '30' } }));
    const defaulted = group({ [`${P}cpu`]: '2', [`${P}memory`]: '4Gi' });
    expect(withInfrastructureTemplate(parseCapacityAnnotations(defaulted), defaulted.annotations, tpl).allocatable.pods).to.equal(30);
    const explicit = group({ [`${P}cpu`]: '2', [`${P}memory`]: '4Gi', [`${P}maxPods`]: '110' });
    expect(withInfrastructureTemplate(parseCapacityAnnotations(explicit), explicit.annotations, tpl).allocatable.pods).to.equal(110);
  });

  it('a template with cpu only leaves the shape incomplete unless the annotations add memory', () => {
    const tpl = parseInfrastructureTemplateCapacity(template({ capacity: { cpu: '2' } }));
    const bare = group({});
    expect(withInfrastructureTemplate(parseCapacityAnnotations(bare), bare.annotations, tpl).complete).to.equal(false);
    const withMemory = group({ [`${P}memory`]: '4Gi' });
    expect(withInfrastructureTemplate(parseCapacityAnnotations(withMemory), withMemory.annotations, tpl).complete).to.equal(true);
  });
});
