import { expect } from 'chai';
import { loadObjects } from '../../../src/cluster/load-objects.js';
import type { ClusterObjects } from '../../../src/cluster/objects.js';
import { BUFFER_PRIORITY, capacityBufferPods, resolveCapacityBuffers } from '../../../src/provisioning/capacity-buffers.js';

const shape = (cpu: string) => `{containers: [{name: c, image: x, resources: {requests: {cpu: "${cpu}", memory: 1Gi}}}]}`;
const workload = (apiVersion: string, kind: string, name: string, extra: string) => `
apiVersion: ${apiVersion}
kind: ${kind}
metadata: {name: ${name}, namespace: ns}
spec:
  ${extra}
  selector: {matchLabels: {app: ${name}}}
  template:
    metadata: {labels: {app: ${name}}}
    spec: ${shape('1')}
`;
const buffer = (name: string, spec: string) => `
apiVersion: autoscaling.x-k8s.io/v1beta1
kind: CapacityBuffer
metadata: {name: ${name}, namespace: ns, uid: uid-${name}, generation: 2}
spec: ${spec}
`;
const load = (...docs: string[]): ClusterObjects => loadObjects(docs.join('\n---\n'));
const byName = (objects: ClusterObjects) => new Map(resolveCapacityBuffers(objects).map((b) => [b.name, b]));

describe('CapacityBuffers resolved into chunks', () => {
  it('podTemplateRef + replicas: that many lowest-priority virtual pods of the template\'s shape', () => {
    const objects = load(
      `apiVersion: v1\nkind: PodTemplate\nmetadata: {name: shape, namespace: ns}\ntemplate: {metadata: {labels: {app: buffer}}, spec: ${shape('1')}}`,
      buffer('b', '{podTemplateRef: {name: shape}, replicas: 3}'),
    );
    const pods = capacityBufferPods(objects);
    expect(pods).to.have.length(3);
    for (const p of pods) {
      expect(p).to.deep.include({ predicted: true, namespace: 'ns', equivalenceKey: 'CapacityBuffer/ns/b', owner: 'CapacityBuffer/ns/b', priority: BUFFER_PRIORITY });
      expect(p.requests).to.include({ cpu: 1000, memory: 2 ** 30 });
      expect(p.labels).to.deep.equal({ app: 'buffer' });
      // Spare, not demand on its way: capacity added for a buffer does not hold consolidation back.
      expect(p.predictedDemand).to.equal(undefined);
    }
    expect(new Set(pods.map((p) => p.key)).size).to.equal(3);
    expect(byName(objects).get('b')).to.include({ replicas: 3, podTemplateName: 'shape' });
  });

  it('scalableRef to a Deployment with percentage 20: 10 -> 30 replicas grows 2 -> 6 chunks of the Deployment\'s pod shape', () => {
    const b = buffer('web-spare', '{scalableRef: {apiGroup: apps, kind: Deployment, name: web}, percentage: 20}');
    const at10 = load(workload('apps/v1', 'Deployment', 'web', 'replicas: 10'), b);
    const at30 = load(workload('apps/v1', 'Deployment', 'web', 'replicas: 30'), b);
    expect(capacityBufferPods(at10)).to.have.length(2);
    const pods = capacityBufferPods(at30);
    expect(pods).to.have.length(6);
    expect(pods[0]!.labels).to.deep.equal({ app: 'web' });
    expect(pods[0]!.owner).to.equal('CapacityBuffer/ns/web-spare');
    expect(byName(at30).get('web-spare')).to.include({ replicas: 6, podTemplateName: 'capacitybuffer-web-spare-pod-template' });
  });

  it('reads StatefulSets, ReplicaSets (replicas) and Jobs (parallelism)', () => {
    const objects = load(
      workload('apps/v1', 'StatefulSet', 'db', 'replicas: 4'), workload('apps/v1', 'ReplicaSet', 'rs', 'replicas: 5'), workload('batch/v1', 'Job', 'job', 'parallelism: 8'),
      buffer('s', '{scalableRef: {apiGroup: apps, kind: StatefulSet, name: db}, percentage: 50}'),
      buffer('r', '{scalableRef: {apiGroup: apps, kind: ReplicaSet, name: rs}, percentage: 100}'),
      buffer('j', '{scalableRef: {apiGroup: batch, kind: Job, name: job}, percentage: 25}'),
    );
    const m = byName(objects);
    expect([m.get('s')!.replicas, m.get('r')!.replicas, m.get('j')!.replicas]).to.deep.equal([2, 5, 2]);
  });

  it('limits cap the chunk count; with only limits, as many chunks as fit', () => {
    const objects = load(workload('apps/v1', 'Deployment', 'web', 'replicas: 30'),
      buffer('capped', '{scalableRef: {apiGroup: apps, kind: Deployment, name: web}, percentage: 20, limits: {cpu: "4"}}'),
      buffer('fill', '{scalableRef: {apiGroup: apps, kind: Deployment, name: web}, limits: {memory: 3Gi}}'));
    const m = byName(objects);
    expect(m.get('capped')!.replicas).to.equal(4);
    expect(m.get('fill')!.replicas).to.equal(3);
  });

  it('a namespace ResourceQuota caps buffers in name order, after what is used (LimitedByQuotas)', () => {
    const objects = load(workload('apps/v1', 'Deployment', 'web', 'replicas: 10'),
      buffer('a', '{scalableRef: {apiGroup: apps, kind: Deployment, name: web}, replicas: 3}'),
      buffer('b', '{scalableRef: {apiGroup: apps, kind: Deployment, name: web}, replicas: 3}'),
      'apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: q, namespace: ns}\nspec: {hard: {requests.cpu: "6"}}\nstatus: {hard: {requests.cpu: "6", limits.cpu: "1"}, used: {requests.cpu: 1500m}}');
    const m = byName(objects);
    expect(m.get('a')).to.include({ replicas: 3 });
    expect(m.get('a')!.quota).to.equal(undefined);
    expect(m.get('b')).to.deep.include({ replicas: 1, quota: { from: 3, to: 1, quotas: ['q'] } });
    expect(capacityBufferPods(objects)).to.have.length(4);
  });

  it('invalid or unresolvable buffers carry one clear line and do not stop the others', () => {
    const objects = load(
      workload('apps/v1', 'Deployment', 'web', 'replicas: 10'),
      buffer('ok', '{scalableRef: {apiGroup: apps, kind: Deployment, name: web}, replicas: 2}'),
      buffer('both', '{podTemplateRef: {name: t}, scalableRef: {apiGroup: apps, kind: Deployment, name: web}, replicas: 1}'),
      buffer('no-template', '{podTemplateRef: {name: missing}, replicas: 1}'),
      buffer('no-deploy', '{scalableRef: {apiGroup: apps, kind: Deployment, name: gone}, replicas: 1}'),
      buffer('no-scale', '{scalableRef: {apiGroup: "", kind: ConfigMap, name: cm}, replicas: 1}'),
      buffer('standby', '{scalableRef: {apiGroup: apps, kind: Deployment, name: web}, replicas: 1, provisioningStrategy: buffer.gke.io/standby-capacity}'),
    );
    objects.scales = [{ apiGroup: '', kind: 'ConfigMap', namespace: 'ns', name: 'cm', error: 'ConfigMap has no scale subresource' }];
    const m = byName(objects);
    expect(m.get('ok')).to.include({ replicas: 2 });
    expect(m.get('ok')!.problem).to.equal(undefined);
    expect(m.get('both')!.problem).to.deep.equal({ reason: 'InvalidSpec', message: 'spec: set exactly one of podTemplateRef and scalableRef, not both' });
    expect(m.get('no-template')!.problem).to.deep.equal({ reason: 'TemplateNotFound', message: 'podTemplateRef: PodTemplate ns/missing not found' });
    expect(m.get('no-deploy')!.problem).to.deep.equal({ reason: 'ScalableNotFound', message: 'scalableRef: Deployment.apps ns/gone not found' });
    expect(m.get('no-scale')!.problem).to.deep.equal({ reason: 'NoScaleSubresource', message: 'scalableRef: ConfigMap has no scale subresource' });
    expect(m.get('standby')!.problem!.reason).to.equal('UnsupportedProvisioningStrategy');
    expect(capacityBufferPods(objects).map((p) => p.owner)).to.deep.equal(['CapacityBuffer/ns/ok', 'CapacityBuffer/ns/ok']);
  });

  it('a custom scalable: replicas from its scale subresource, the chunk shape from one of its running pods', () => {
    const objects = load(
      buffer('roll', '{scalableRef: {apiGroup: argoproj.io, kind: Rollout, name: r}, percentage: 50}'),
      `apiVersion: v1\nkind: Pod\nmetadata: {name: r-1, namespace: ns, labels: {app: r}}\nspec: {nodeName: n1, containers: [{name: c, image: x, resources: {requests: {cpu: 700m}}}]}\nstatus: {phase: Running}`,
    );
    objects.scales = [{ apiGroup: 'argoproj.io', kind: 'Rollout', namespace: 'ns', name: 'r', replicas: 4, selector: 'app=r' }];
    const pods = capacityBufferPods(objects);
    expect(pods).to.have.length(2);
    expect(pods[0]!.requests.cpu).to.equal(700);
    expect(pods[0]!.nodeName).to.equal(undefined);
  });
});
