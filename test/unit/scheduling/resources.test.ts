import type { V1Pod } from '@kubernetes/client-node';
import { expect } from 'chai';
import { fits, podRequests } from '../../../src/scheduling/resources.js';

function pod(spec: V1Pod['spec']): V1Pod {
  return { metadata: { name: 'p', namespace: 'default' }, spec };
}

describe('podRequests', () => {
  it('sums app containers and counts one pod', () => {
    const r = podRequests(pod({ containers: [
      { name: 'a', resources: { requests: { cpu: '100m', memory: '64Mi' } } },
      { name: 'b', resources: { requests: { cpu: '1', memory: '1G', 'nvidia.com/gpu': '1' } } },
    ] }));
    expect(r).to.deep.equal({ cpu: 1100, memory: 64 * 2 ** 20 + 1e9, 'nvidia.com/gpu': 1, pods: 1 });
  });

  it('takes the larger of an init container and the app phase', () => {
    const r = podRequests(pod({
      initContainers: [{ name: 'init', resources: { requests: { cpu: '2', memory: '128Mi' } } }],
      containers: [{ name: 'app', resources: { requests: { cpu: '500m', memory: '1Gi' } } }],
    }));
    expect(r.cpu).to.equal(2000);
    expect(r.memory).to.equal(2 ** 30);
  });

  it('runs sidecar init containers alongside the app and later init containers', () => {
    const r = podRequests(pod({
      initContainers: [
        { name: 'proxy', restartPolicy: 'Always', resources: { requests: { cpu: '200m' } } },
        { name: 'migrate', resources: { requests: { cpu: '1' } } },
      ],
      containers: [{ name: 'app', resources: { requests: { cpu: '300m' } } }],
    }));
    // init phase: 200m sidecar + 1 migrate = 1200m; app phase: 300m + 200m = 500m
    expect(r.cpu).to.equal(1200);
  });

  it('adds pod overhead and falls back to limits', () => {
    const r = podRequests(pod({
      overhead: { cpu: '250m' },
      containers: [{ name: 'app', resources: { limits: { cpu: '1', memory: '1Gi' } } }],
    }));
    expect(r.cpu).to.equal(1250);
    expect(r.memory).to.equal(2 ** 30);
  });
});

describe('podRequests: pod-level resources (KEP 2837)', () => {
  it('pod-level requests replace the containers\' cpu and memory, and only those', () => {
    const r = podRequests(pod({
      resources: { requests: { cpu: '2', memory: '1Gi' } },
      containers: [
        { name: 'a', resources: { requests: { cpu: '100m', memory: '64Mi', 'ephemeral-storage': '1Gi' } } },
        { name: 'b', resources: { limits: { 'nvidia.com/gpu': '1' } } },
      ],
    }));
    expect(r).to.deep.equal({ cpu: 2000, memory: 2 ** 30, 'ephemeral-storage': 2 ** 30, 'nvidia.com/gpu': 1, pods: 1 });
  });

  it('counts pod-level requests when no container requests anything', () => {
    const r = podRequests(pod({ resources: { requests: { cpu: '1500m' } }, containers: [{ name: 'a' }, { name: 'b' }] }));
    expect(r).to.deep.equal({ cpu: 1500, pods: 1 });
  });

  it('adds overhead on top of pod-level requests', () => {
    const r = podRequests(pod({ overhead: { cpu: '250m', memory: '120Mi' }, resources: { requests: { cpu: '1', memory: '1Gi' } }, containers: [{ name: 'a' }] }));
    expect(r.cpu).to.equal(1250);
    expect(r.memory).to.equal(2 ** 30 + 120 * 2 ** 20);
  });

  it('a pod-level request replaces the init-container peak too', () => {
    const r = podRequests(pod({
      resources: { requests: { cpu: '1' } },
      initContainers: [{ name: 'init', resources: { requests: { cpu: '3', memory: '2Gi' } } }],
      containers: [{ name: 'a', resources: { requests: { cpu: '100m', memory: '64Mi' } } }],
    }));
    expect(r.cpu).to.equal(1000);
    // memory is not set at pod level: the containers' figure (the init peak) stays
    expect(r.memory).to.equal(2 * 2 ** 30);
  });

  it('a pod-level limit stands in for an unset pod-level request; other resources at pod level are ignored', () => {
    const r = podRequests(pod({ resources: { limits: { memory: '2Gi' }, requests: { 'ephemeral-storage': '5Gi' } }, containers: [{ name: 'a', resources: { requests: { memory: '1Gi', 'ephemeral-storage': '1Gi' } } }] }));
    expect(r.memory).to.equal(2 * 2 ** 30);
    expect(r['ephemeral-storage']).to.equal(2 ** 30);
  });
});

describe('podRequests: in-place resize', () => {
  const resized = (specCpu: string, statusCpu: string, allocatedCpu: string, conditions: NonNullable<V1Pod['status']>['conditions'] = []): V1Pod => ({
    metadata: { name: 'p', namespace: 'default' },
    spec: { nodeName: 'n', containers: [{ name: 'app', resources: { requests: { cpu: specCpu, memory: '1Gi' } } }, { name: 'other', resources: { requests: { cpu: '100m' } } }] },
    status: {
      conditions,
      containerStatuses: [{
        name: 'app', image: 'i', imageID: '', ready: true, restartCount: 0,
        resources: { requests: { cpu: statusCpu, memory: '1Gi' } }, allocatedResources: { cpu: allocatedCpu, memory: '1Gi' },
      }],
    },
  });

  it('counts the larger of desired and allocated: desired larger', () => {
    expect(podRequests(resized('3', '1', '1', [{ type: 'PodResizeInProgress', status: 'True' }])).cpu).to.equal(3100);
  });

  it('counts the larger of desired and allocated: desired smaller (the resize has not shrunk the container yet)', () => {
    expect(podRequests(resized('1', '3', '3', [{ type: 'PodResizeInProgress', status: 'True' }])).cpu).to.equal(3100);
    // allocated already lowered, actual not yet
    expect(podRequests(resized('1', '3', '1')).cpu).to.equal(3100);
  });

  it('an Infeasible pending resize counts what the container has, not what it asked for', () => {
    const p = resized('6', '1', '1', [{ type: 'PodResizePending', status: 'True', reason: 'Infeasible' }]);
    expect(podRequests(p).cpu).to.equal(1100);
    // Deferred: it may still happen, so the desired size counts.
    const d = resized('6', '1', '1', [{ type: 'PodResizePending', status: 'True', reason: 'Deferred' }]);
    expect(podRequests(d).cpu).to.equal(6100);
  });

  it('a container without status resources counts its spec; sidecars read their initContainerStatuses', () => {
    const p: V1Pod = {
      metadata: { name: 'p' },
      spec: {
        initContainers: [{ name: 'proxy', restartPolicy: 'Always', resources: { requests: { cpu: '100m' } } }],
        containers: [{ name: 'app', resources: { requests: { cpu: '1' } } }],
      },
      status: {
        containerStatuses: [{ name: 'app', image: 'i', imageID: '', ready: true, restartCount: 0 }],
        initContainerStatuses: [{ name: 'proxy', image: 'i', imageID: '', ready: true, restartCount: 0, resources: { requests: { cpu: '500m' } }, allocatedResources: { cpu: '500m' } }],
      },
    };
    expect(podRequests(p).cpu).to.equal(1500);
  });
});

describe('fits', () => {
  it('compares every requested resource', () => {
    expect(fits({ cpu: 1000, pods: 1 }, { cpu: 1000, pods: 1 })).to.equal(true);
    expect(fits({ cpu: 1001 }, { cpu: 1000 })).to.equal(false);
    expect(fits({ 'nvidia.com/gpu': 1 }, { cpu: 1000 })).to.equal(false);
  });
});
