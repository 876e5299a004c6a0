import { expect } from 'chai';
import fc from 'fast-check';
import type { ClusterSnapshot } from '../../../src/cluster/snapshot.js';
import { ffd } from '../../../src/packing/ffd.js';
import { boundPodView } from '../../../src/packing/solver-snapshot.js';
import { solve } from '../../../src/packing/solve.js';
import { HOSTNAME, ZONE, group, node, pod, snapshot, solverView } from './snapshot-builders.js';

const APPS = ['a', 'b', 'c'] as const;
const KEYS = [HOSTNAME, ZONE] as const;

/** A pod's shape: what could matter to a solver, on a node or pending. */
const podShape = fc.record({
  app: fc.constantFrom(...APPS), namespace: fc.constantFrom('default', 'other'), cpu: fc.constantFrom('100m', '500m', '1', '3'),
  hostPort: fc.option(fc.constantFrom(80, 443), { nil: undefined }),
  affinity: fc.option(fc.record({ kind: fc.constantFrom('podAffinity', 'podAntiAffinity'), app: fc.constantFrom(...APPS), key: fc.constantFrom(...KEYS) }), { nil: undefined }),
  spread: fc.option(fc.record({ key: fc.constantFrom(...KEYS), skew: fc.integer({ min: 1, max: 2 }) }), { nil: undefined }),
  // Fields the solvers never read of a pod on a node: they must make no difference there.
  selector: fc.boolean(), toleration: fc.boolean(), priority: fc.integer({ min: 0, max: 2 }),
});
type PodShape = typeof podShape extends fc.Arbitrary<infer T> ? T : never;

function podOf(name: string, s: PodShape, owner: string) {
  const term = s.affinity && { topologyKey: s.affinity.key, labelSelector: { matchLabels: { app: s.affinity.app } } };
  return pod(name, {
    cpu: s.cpu, namespace: s.namespace, labels: { app: s.app }, owner,
    spec: {
      containers: [{ name: 'c', image: 'x', resources: { requests: { cpu: s.cpu, memory: '1Gi' } }, ...(s.hostPort ? { ports: [{ containerPort: s.hostPort, hostPort: s.hostPort }] } : {}) }],
      priority: s.priority,
      ...(term ? { affinity: { [s.affinity!.kind]: { requiredDuringSchedulingIgnoredDuringExecution: [term] } } } : {}),
      ...(s.spread ? { topologySpreadConstraints: [{ topologyKey: s.spread.key, maxSkew: s.spread.skew, whenUnsatisfiable: 'DoNotSchedule', labelSelector: { matchLabels: { app: s.app } } }] } : {}),
      ...(s.selector ? { nodeSelector: { [ZONE]: 'zone-b' } } : {}),
      ...(s.toleration ? { tolerations: [{ key: 'dedicated', operator: 'Exists' }] } : {}),
    },
  });
}

const clusterShape = fc.record({
  nodes: fc.array(fc.record({ zone: fc.constantFrom('zone-a', 'zone-b'), cpu: fc.constantFrom('2', '4', '8'), pods: fc.array(podShape, { maxLength: 5 }), cordoned: fc.boolean() }), { maxLength: 6 }),
  pending: fc.array(fc.record({ shape: podShape, count: fc.integer({ min: 1, max: 4 }) }), { minLength: 1, maxLength: 5 }),
});

function clusterOf(c: typeof clusterShape extends fc.Arbitrary<infer T> ? T : never): ClusterSnapshot {
  return snapshot({
    groups: [group('small', { cpu: '2', price: 0.1, zone: 'zone-a', max: 6 }), group('big', { cpu: '8', price: 0.35, zone: 'zone-b', max: 4 })],
    nodes: c.nodes.map((n, i) => node(`n${i}`, { zone: n.zone, cpu: n.cpu, unschedulable: n.cordoned, bound: n.pods.map((s, k) => podOf(`b${i}-${k}`, s, `rs-${s.app}`)) })),
    pendingPods: c.pending.flatMap((p, i) => Array.from({ length: p.count }, (_, k) => podOf(`p${i}-${k}`, p.shape, `p${i}`))),
    namespaceLabels: { default: {}, other: {} },
  });
}

describe('SolverSnapshot: what the solvers read of a pod on a node', () => {
  it('keeps namespace, labels, requests, host ports and affinity, and nothing else', () => {
    const p = podOf('x', { app: 'a', namespace: 'other', cpu: '1', hostPort: 80, affinity: { kind: 'podAntiAffinity', app: 'a', key: HOSTNAME }, spread: undefined, selector: true, toleration: true, priority: 2 }, 'rs');
    const view = boundPodView(p);
    expect(Object.keys(view).sort()).to.deep.equal(['affinity', 'hostPorts', 'labels', 'namespace', 'requests']);
    expect(view.affinity).to.equal(p.affinity);
    expect(Object.keys(boundPodView({ ...p, affinity: undefined }))).to.not.include('affinity');
  });

  it('solve and ffd plan the views exactly as the whole pods, over seeded random clusters', function () {
    this.timeout(60_000);
    fc.assert(fc.property(clusterShape, (c) => {
      const s = clusterOf(c);
      const v = solverView(s);
      expect(solve(v)).to.deep.equal(solve(s));
      expect(solve(v, { ignorePreferences: true })).to.deep.equal(solve(s, { ignorePreferences: true }));
      expect(ffd(v)).to.deep.equal(ffd(s));
    }), { seed: 131, numRuns: 300 });
  });
});
