import { expect } from 'chai';
import { stringify } from 'yaml';
import { buildSnapshot } from '../../../src/cluster/build-snapshot.js';
import { loadObjects } from '../../../src/cluster/load-objects.js';
import { cannotMovePods } from '../../../src/disruption/expiry.js';
import { solve } from '../../../src/packing/solve.js';

/**
 * The what-if of disruption counts DRA devices: a node's GPU pods move only where free
 * devices wait for them (their claims are regenerated from their templates when their
 * ReplicaSet makes them again), never onto devices other pods' allocated claims hold.
 */

const DRIVER = 'gpu.example.com';
const R = 'resource.k8s.io/v1';

const deviceClass = { apiVersion: R, kind: 'DeviceClass', metadata: { name: 'gpu' }, spec: { selectors: [{ cel: { expression: `device.driver == "${DRIVER}"` } }] } };
const template = {
  apiVersion: R, kind: 'ResourceClaimTemplate', metadata: { name: 'one-gpu', namespace: 'default' },
  spec: { spec: { devices: { requests: [{ name: 'gpu', exactly: { deviceClassName: 'gpu', count: 1 } }] } } },
};
const node = (name: string) => ({
  apiVersion: 'v1', kind: 'Node', metadata: { name, labels: { 'kubernetes.io/hostname': name } },
  status: { allocatable: { cpu: '16', memory: '64Gi', pods: '110' }, conditions: [{ type: 'Ready', status: 'True' }] },
});
const slice = (nodeName: string, gpus: number) => ({
  apiVersion: R, kind: 'ResourceSlice', metadata: { name: `${nodeName}-gpus` },
  spec: { driver: DRIVER, nodeName, pool: { name: nodeName, generation: 1, resourceSliceCount: 1 }, devices: Array.from({ length: gpus }, (_, i) => ({ name: `gpu-${i}` })) },
});
/** A running pod on `nodeName` holding device `gpu-<i>` there through a claim generated from the template. */
function running(name: string, nodeName: string, i: number): object[] {
  return [{
    apiVersion: R, kind: 'ResourceClaim',
    metadata: { name: `${name}-gpu`, namespace: 'default', annotations: { 'resource.kubernetes.io/pod-claim-name': 'gpu' }, ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name, uid: `uid-${name}`, controller: true }] },
    spec: template.spec.spec,
    status: {
      allocation: {
        devices: { results: [{ request: 'gpu', driver: DRIVER, pool: nodeName, device: `gpu-${i}` }] },
        nodeSelector: { nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: [nodeName] }] }] },
      },
      reservedFor: [{ resource: 'pods', name, uid: `uid-${name}` }],
    },
  }, {
    apiVersion: 'v1', kind: 'Pod',
    metadata: { name, namespace: 'default', uid: `uid-${name}`, ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'train', uid: 'rs', controller: true }] },
    spec: { nodeName, containers: [{ name: 'c', image: 'x', resources: { requests: { cpu: '1', memory: '1Gi' } } }], resourceClaims: [{ name: 'gpu', resourceClaimTemplateName: 'one-gpu' }] },
    status: { phase: 'Running', resourceClaimStatuses: [{ name: 'gpu', resourceClaimName: `${name}-gpu` }] },
  }];
}

function snapshotOf(objects: object[]) {
  return buildSnapshot(loadObjects(objects.map((o) => stringify(o)).join('---\n')), { strict: false });
}

describe('disruption what-if with DRA devices', () => {
  it('a GPU pod moves to another node with a free GPU', async () => {
    const s = snapshotOf([deviceClass, template, node('n1'), node('n2'), slice('n1', 2), slice('n2', 2), ...running('a', 'n1', 0), ...running('b', 'n2', 0)]);
    expect(await cannotMovePods(s, 'n1', solve)).to.equal(undefined);
  });

  it('a GPU pod does not move onto GPUs that other pods\' allocated claims hold, whatever the cpu left', async () => {
    const s = snapshotOf([deviceClass, template, node('n1'), node('n2'), slice('n1', 2), slice('n2', 2),
      ...running('a', 'n1', 0), ...running('b', 'n2', 0), ...running('c', 'n2', 1)]);
    expect(await cannotMovePods(s, 'n1', solve)).to.equal('1 pod(s) would not fit anywhere');
    // The other way round: n2's two pods need two free GPUs; n1 has one.
    expect(await cannotMovePods(s, 'n2', solve)).to.equal('1 pod(s) would not fit anywhere');
  });

  it('a node without any device takes no GPU pod', async () => {
    const s = snapshotOf([deviceClass, template, node('n1'), node('cpu-only'), slice('n1', 2), ...running('a', 'n1', 0)]);
    expect(await cannotMovePods(s, 'n1', solve)).to.equal('1 pod(s) would not fit anywhere');
  });
});
