import { expect } from 'chai';
import { nodeUse } from '../../../src/packing/node-use.js';
import { node, pod, solverView, snapshot } from './snapshot-builders.js';

const ZONE = 'topology.kubernetes.io/zone';

function solverNode(bound: ReturnType<typeof pod>[]) {
  return solverView(snapshot({ nodes: [node('n1', { cpu: '4', memory: '16Gi', bound })] })).nodes[0]!;
}

describe('nodeUse', () => {
  it('leaves allocatable less every bound pod request, and leaves the node untouched', () => {
    const n = solverNode([pod('a', { cpu: '1500m', memory: '2Gi' }), pod('b', { cpu: '500m', memory: '1Gi' })]);
    const before = { ...n.allocatable };
    const use = nodeUse(n);
    expect(use.free.cpu).to.equal(before.cpu! - 2000);
    expect(use.free.memory).to.equal(before.memory! - 3 * 2 ** 30);
    expect(use.free.pods).to.equal(before.pods! - 2);
    expect(n.allocatable).to.deep.equal(before);
  });

  it('collects host ports and the required anti-affinity owners with their topology keys', () => {
    const anti = pod('anti', {
      labels: { app: 'db' },
      spec: {
        containers: [{ name: 'c', image: 'x', ports: [{ containerPort: 80, hostPort: 8080 }], resources: { requests: { cpu: '1' } } }],
        affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [
          { topologyKey: ZONE, labelSelector: { matchLabels: { app: 'db' } } },
        ] } },
      },
    });
    const n = solverNode([anti, pod('plain')]);
    const use = nodeUse(n);
    expect(use.ports.map((p) => p.port)).to.deep.equal([8080]);
    expect(use.antiOwners).to.have.length(1);
    expect(use.antiOwners[0]).to.equal(n.pods[0]);
    expect(use.antiTopologyKeys).to.deep.equal([ZONE]);
  });

  it('is computed once per pod list and allocatable, and afresh when either is another object', () => {
    const n = solverNode([pod('a')]);
    expect(nodeUse(n)).to.equal(nodeUse(n));
    // A later build's node object with the same pod list and allocatable (pods unchanged).
    expect(nodeUse({ ...n })).to.equal(nodeUse(n));
    const empty = { ...n, pods: [] };
    expect(nodeUse(empty)).to.not.equal(nodeUse(n));
    expect(nodeUse(empty).free.cpu).to.equal(n.allocatable.cpu);
    // The same (shared) pod list on a node of another size.
    const bigger = { ...empty, allocatable: { ...n.allocatable, cpu: 2 * n.allocatable.cpu! } };
    expect(nodeUse(bigger).free.cpu).to.equal(2 * n.allocatable.cpu!);
    expect(nodeUse(empty).free.cpu).to.equal(n.allocatable.cpu);
  });
});
