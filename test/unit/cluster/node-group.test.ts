import { expect } from 'chai';
import type { V1DaemonSet } from '@kubernetes/client-node';
import type { NodeGroup } from '../../../src/cluster/snapshot.js';
import { parseCapacityAnnotations, parseScalingBounds } from '../../../src/api/capacity-annotations.js';
import { parseNodeGroupObject } from '../../../src/api/capi.js';
import {
  buildNodeGroup, buildNodeTemplate, daemonSetPodsFor, daemonSetTemplatePod, learnNodeShape,
} from '../../../src/cluster/node-group.js';

const P = 'capacity.cluster-autoscaler.kubernetes.io/';
const GiB = 2 ** 30;

function view(annotations: Record<string, string>, templateLabels: Record<string, string> = {}, extra: Record<string, unknown> = {}) {
  return parseNodeGroupObject({
    apiVersion: 'cluster.x-k8s.io/v1beta2', kind: 'MachineDeployment',
    metadata: { name: 'g', namespace: 'default', labels: { pool: 'general' }, annotations: { 'cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size': '5', ...annotations } },
    spec: { clusterName: 'c', template: { metadata: { labels: templateLabels }, spec: { failureDomain: 'zone-a', ...extra } } },
  } as never);
}

function ds(name: string, spec: Record<string, unknown>, cpu = '100m'): V1DaemonSet {
  return {
    apiVersion: 'apps/v1', kind: 'DaemonSet', metadata: { name, namespace: 'kube-system' },
    spec: { selector: {}, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', resources: { requests: { cpu, memory: '100Mi' } } }], ...spec } } },
  } as V1DaemonSet;
}

describe('node groups', () => {
  it('learns the shape common to Ready nodes: min allocatable, shared labels, non-lifecycle shared taints', () => {
    const learned = learnNodeShape([
      { allocatable: { cpu: 3900, memory: 15 * GiB, pods: 58, 'nvidia.com/gpu': 1 }, labels: { 'kubernetes.io/hostname': 'a', zone: 'x', type: 'm5' }, taints: [{ key: 'dedicated', value: 'ml', effect: 'NoSchedule' }, { key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' }] },
      { allocatable: { cpu: 3920, memory: 14 * GiB, pods: 58 }, labels: { 'kubernetes.io/hostname': 'b', zone: 'y', type: 'm5' }, taints: [{ key: 'dedicated', value: 'ml', effect: 'NoSchedule' }, { key: 'ToBeDeletedByClusterAutoscaler', effect: 'NoSchedule' }] },
    ]);
    expect(learned).to.deep.equal({
      allocatable: { cpu: 3900, memory: 14 * GiB, pods: 58 },
      labels: { type: 'm5' },
      taints: [{ key: 'dedicated', value: 'ml', effect: 'NoSchedule' }],
    });
    expect(learnNodeShape([])).to.equal(undefined);
  });

  it('builds a template from annotations: labels layered, zone from the failure domain, os/arch defaults', () => {
    const v = view(
      { [`${P}cpu`]: '4', [`${P}memory`]: '16Gi', [`${P}labels`]: 'tier=gold', [`${P}taints`]: 'a=b:NoSchedule' },
      { 'node-role.kubernetes.io/worker': '', 'node.cluster.x-k8s.io/tier': 'silver', 'cluster.x-k8s.io/deployment-name': 'g' },
      { taints: [{ key: 'capi', effect: 'PreferNoSchedule' }] },
    );
    const t = buildNodeTemplate(v, parseCapacityAnnotations(v));
    expect(t).to.deep.equal({
      allocatable: { cpu: 4000, memory: 16 * GiB, pods: 110 },
      labels: {
        'node-role.kubernetes.io/worker': '', 'node.cluster.x-k8s.io/tier': 'silver', tier: 'gold',
        'topology.kubernetes.io/zone': 'zone-a', 'kubernetes.io/os': 'linux', 'kubernetes.io/arch': 'amd64',
      },
      taints: [{ key: 'capi', effect: 'PreferNoSchedule' }, { key: 'a', value: 'b', effect: 'NoSchedule' }],
    });
  });

  it('carries only the template labels CAPI copies to Nodes (v1.14 GetManagedLabels); the labels annotation declares the rest', () => {
    const templateLabels = {
      'node-role.kubernetes.io/worker': '',
      'node-restriction.kubernetes.io/pool': 'a',
      'team.node-restriction.kubernetes.io/owner': 'b',
      'node.cluster.x-k8s.io/size': 'small',
      'gpu.node.cluster.x-k8s.io/model': 'a100',
      'node.headroom.dev/size': 'small',
      'xnode.cluster.x-k8s.io/no': 'c',
      'node-role.kubernetes.io.example.com/no': 'd',
      role: 'worker',
      'cluster.x-k8s.io/deployment-name': 'g',
    };
    const v = view({ [`${P}cpu`]: '4', [`${P}memory`]: '16Gi' }, templateLabels);
    const labels = buildNodeTemplate(v, parseCapacityAnnotations(v))!.labels;
    expect(Object.keys(labels).sort()).to.deep.equal([
      'gpu.node.cluster.x-k8s.io/model', 'kubernetes.io/arch', 'kubernetes.io/os', 'node-restriction.kubernetes.io/pool',
      'node-role.kubernetes.io/worker', 'node.cluster.x-k8s.io/size', 'team.node-restriction.kubernetes.io/owner', 'topology.kubernetes.io/zone',
    ]);
    // A label the kubelet or the infrastructure sets is declared, as for Cluster Autoscaler.
    const declared = view({ [`${P}cpu`]: '4', [`${P}memory`]: '16Gi', [`${P}labels`]: 'node.headroom.dev/size=small' }, templateLabels);
    expect(buildNodeTemplate(declared, parseCapacityAnnotations(declared))!.labels['node.headroom.dev/size']).to.equal('small');
    // Labels Ready nodes really carry are learned whatever their domain.
    const learned = { allocatable: { cpu: 4000, memory: 16 * GiB, pods: 110 }, labels: { role: 'worker' }, taints: [] };
    expect(buildNodeTemplate(v, parseCapacityAnnotations(v), learned)!.labels.role).to.equal('worker');
  });

  it('an explicit zone label wins over the failure domain', () => {
    const v = view({ [`${P}cpu`]: '4', [`${P}memory`]: '16Gi', [`${P}labels`]: 'topology.kubernetes.io/zone=eu-1b' });
    expect(buildNodeTemplate(v, parseCapacityAnnotations(v))?.labels['topology.kubernetes.io/zone']).to.equal('eu-1b');
  });

  it('annotations win per resource over the learned shape; without either there is no template', () => {
    const v = view({ [`${P}cpu`]: '8' });
    const learned = { allocatable: { cpu: 3900, memory: 15 * GiB, pods: 58 }, labels: { 'kubernetes.io/arch': 'arm64' }, taints: [] };
    const t = buildNodeTemplate(v, parseCapacityAnnotations(v), learned);
    expect(t?.allocatable).to.deep.equal({ cpu: 8000, memory: 15 * GiB, pods: 58 });
    expect(t?.labels['kubernetes.io/arch']).to.equal('arm64');
    expect(buildNodeTemplate(v, parseCapacityAnnotations(v))).to.equal(undefined);
  });

  it('DaemonSet overhead counts only DaemonSets that would run on the template', () => {
    const v = view({ [`${P}cpu`]: '4', [`${P}memory`]: '16Gi', [`${P}taints`]: 'gpu=true:NoSchedule' }, { 'node.cluster.x-k8s.io/accel': 'nvidia' });
    const template = buildNodeTemplate(v, parseCapacityAnnotations(v))!;
    const pods = [
      ds('everywhere', { tolerations: [{ operator: 'Exists' }] }, '100m'),
      ds('untolerant', {}, '200m'),
      ds('gpu-only', { nodeSelector: { 'node.cluster.x-k8s.io/accel': 'nvidia' }, tolerations: [{ key: 'gpu', operator: 'Exists' }] }, '50m'),
      ds('amd-only', { nodeSelector: { 'node.cluster.x-k8s.io/accel': 'amd' }, tolerations: [{ operator: 'Exists' }] }, '70m'),
      ds('affinity', { tolerations: [{ operator: 'Exists' }], affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/arch', operator: 'In', values: ['arm64'] }] }] } } } }, '30m'),
    ].map(daemonSetTemplatePod);
    expect(daemonSetPodsFor(template, pods).map((p) => p.name)).to.deep.equal(['everywhere-template', 'gpu-only-template']);
    const g = buildNodeGroup({ view: v, bounds: parseScalingBounds(v)!, capacity: parseCapacityAnnotations(v), daemonSetPods: pods, pools: [] }) as NodeGroup;
    expect(g.daemonSetOverhead).to.deep.equal({ cpu: 150, memory: 200 * 2 ** 20, pods: 2 });
  });

  it('DaemonSet pods get the controller tolerations (not-ready, unschedulable, ...)', () => {
    const p = daemonSetTemplatePod(ds('x', {}));
    expect(p.tolerations.map((t) => t.key)).to.include.members(['node.kubernetes.io/not-ready', 'node.kubernetes.io/unschedulable']);
    expect(p.owner).to.equal('DaemonSet/kube-system/x');
  });

  it('builds the NodeGroup: price from the annotation or derived, replicas default to min, pool and weight', () => {
    const v = view({ [`${P}cpu`]: '2', [`${P}memory`]: '8Gi', 'cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size': '2' });
    const pool = { name: 'general', weight: 30, nodeGroupSelector: { matchLabels: { pool: 'general' } }, requirements: [], limits: {}, disruption: { consolidationPolicy: 'WhenEmpty' as const, consolidateAfterMs: 0, expireAfterMs: null, budgets: [] } };
    const g = buildNodeGroup({ view: v, bounds: parseScalingBounds(v)!, capacity: parseCapacityAnnotations(v), daemonSetPods: [], pools: [pool] }) as NodeGroup;
    expect(g).to.include({ id: 'MachineDeployment/default/g', minSize: 2, maxSize: 5, replicas: 2, capacityType: 'on-demand', nodePool: 'general', weight: 30, clusterName: 'c' });
    expect(g.pricePerHour).to.be.closeTo(2 * 0.0316 + 8 * 0.0042, 1e-6);
    const priced = view({ [`${P}cpu`]: '2', [`${P}memory`]: '8Gi', 'headroom.dev/price': '0.5', [`${P}labels`]: 'karpenter.sh/capacity-type=spot' });
    const g2 = buildNodeGroup({ view: priced, bounds: parseScalingBounds(priced)!, capacity: parseCapacityAnnotations(priced), daemonSetPods: [], pools: [pool] }) as NodeGroup;
    expect(g2.pricePerHour).to.equal(0.5);
    expect(g2.capacityType).to.equal('spot');
    expect(g2.replicas).to.equal(0);
  });
});
