import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { buildSnapshot, type SnapshotIssue } from '../../../src/cluster/build-snapshot.js';
import { loadObjects } from '../../../src/cluster/load-objects.js';

/** The example clusters in test/fixtures: the good ones model cleanly, the bad ones fail with one line naming object and field. */
const read = (name: string) => ({ source: name, text: readFileSync(new URL(`../../fixtures/${name}`, import.meta.url), 'utf8') });

function build(name: string) {
  const issues: SnapshotIssue[] = [];
  const snapshot = buildSnapshot(loadObjects(read(name)), { onIssue: (i) => issues.push(i) });
  return { snapshot, issues };
}

describe('fixtures', () => {
  it('example-cluster.yaml builds without issues', () => {
    const { snapshot, issues } = build('example-cluster.yaml');
    expect(issues).to.deep.equal([]);
    expect(snapshot.groups).to.have.length(4);
  });

  it('scale-from-zero.yaml: every group at zero, shapes from annotations, unpriced pool priced by size', () => {
    const { snapshot, issues } = build('scale-from-zero.yaml');
    expect(issues).to.deep.equal([]);
    expect(snapshot.nodes).to.deep.equal([]);
    expect(snapshot.groups.map((g) => [g.name, g.replicas, g.template.labels['topology.kubernetes.io/zone']])).to.deep.equal([
      ['general-2x8', 0, 'eu-west-1a'], ['general-2x8-b', 0, 'eu-west-1b'], ['highmem-4x32', 0, 'eu-west-1a'], ['big-pool', 0, 'eu-west-1a'],
    ]);
    const big = snapshot.groups[3]!;
    expect(big.template.allocatable).to.deep.equal({ cpu: 32000, memory: 128 * 2 ** 30, pods: 250 });
    expect(big.pricePerHour).to.be.greaterThan(4 * snapshot.groups[0]!.pricePerHour);
    expect(snapshot.pendingPods.map((p) => p.name)).to.deep.equal(['api-5f7c-0', 'api-5f7c-1', 'cache-0', 'zonal-b']);
  });

  it('gpu-cluster.yaml: GPUs as an extended resource on a tainted group; device plugin overhead only there', () => {
    const { snapshot, issues } = build('gpu-cluster.yaml');
    expect(issues).to.deep.equal([]);
    const [gpu, cpu] = snapshot.groups;
    expect(gpu!.template.allocatable['nvidia.com/gpu']).to.equal(1);
    expect(gpu!.template.taints).to.deep.equal([{ key: 'nvidia.com/gpu', value: 'present', effect: 'NoSchedule' }]);
    expect(gpu!.daemonSetOverhead).to.deep.equal({ cpu: 50, memory: 64 * 2 ** 20, pods: 1 });
    expect(cpu!.daemonSetOverhead).to.deep.equal({});
    expect(snapshot.pendingPods.find((p) => p.name === 'train-0')!.requests['nvidia.com/gpu']).to.equal(1);
    expect(snapshot.pendingPods.find((p) => p.name === 'train-big')!.requests['nvidia.com/gpu']).to.equal(2);
  });

  const bad: [string, string][] = [
    ['bad/bad-quantity.yaml', 'MachineDeployment default/small: annotation capacity.cluster-autoscaler.kubernetes.io/memory: invalid quantity "12Qi"'],
    ['bad/bad-annotation.yaml', 'MachineDeployment default/workers: annotation cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size: must be a non-negative integer, got "ten"'],
    ['bad/bad-taints.yaml', 'MachinePool default/pool: annotation capacity.cluster-autoscaler.kubernetes.io/taints: taint "dedicated=infra:NoScheduleEver": effect must be one of NoSchedule, PreferNoSchedule, NoExecute'],
    ['bad/bad-pod-quantity.yaml', 'Pod default/web: spec.containers[0].resources.requests.cpu: invalid quantity "1.5 cores"'],
    ['bad/not-an-object.yaml', 'bad/not-an-object.yaml: document 1: not a Kubernetes object (got a list)'],
  ];
  for (const [name, message] of bad) {
    it(`${name} fails with: ${message}`, () => {
      expect(() => build(name)).to.throw(message);
    });
  }

  it('bad/broken.yaml fails with the document and line', () => {
    expect(() => build('bad/broken.yaml')).to.throw(/^bad\/broken\.yaml: document 2 \(line \d+, column \d+\): invalid YAML: /);
  });
});
