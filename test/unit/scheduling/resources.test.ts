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

describe('fits', () => {
  it('compares every requested resource', () => {
    expect(fits({ cpu: 1000, pods: 1 }, { cpu: 1000, pods: 1 })).to.equal(true);
    expect(fits({ cpu: 1001 }, { cpu: 1000 })).to.equal(false);
    expect(fits({ 'nvidia.com/gpu': 1 }, { cpu: 1000 })).to.equal(false);
  });
});
