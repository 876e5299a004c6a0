import { expect } from 'chai';
import { ffd } from '../../../src/packing/ffd.js';
import { solve } from '../../../src/packing/solve.js';
import { group, newNodes, node, pod, replicas, snapshot, where } from './snapshot-builders.js';

describe('solve: resources, existing capacity, limits and cost', () => {
  it('uses free room on existing nodes before adding any', () => {
    const s = snapshot({
      groups: [group('small', { cpu: '2', memory: '8Gi', price: 0.1 })],
      nodes: [node('n1', { cpu: '4', bound: [pod('busy', { cpu: '1' })] })],
      pendingPods: replicas('web', 3, { cpu: '1' }),
    });
    const plan = solve(s);
    expect(plan.scaleUps).to.deep.equal([]);
    expect(Object.values(where(plan))).to.deep.equal(['n1', 'n1', 'n1']);
    expect(plan.cost.addedPerHour).to.equal(0);
  });

  it('uses in-flight capacity (minus DaemonSet overhead) before new nodes', () => {
    const g = group('small', { cpu: '2', memory: '8Gi', price: 0.1, replicas: 1, overhead: { cpu: '500m' } });
    const s = snapshot({
      groups: [g],
      nodes: [node('pending-replica', { cpu: '2', memory: '8Gi', inFlight: true, groupId: g.id })],
      pendingPods: replicas('web', 2, { cpu: '750m', memory: '1Gi' }),
    });
    const plan = solve(s);
    // 2 cpu - 500m overhead = 1500m: both 750m pods fit on the replica already on its way.
    expect(plan.scaleUps).to.deep.equal([]);
    expect(Object.values(where(plan))).to.deep.equal(['pending-replica', 'pending-replica']);
  });

  it('lists only groups whose replicas change, from the observed replicas', () => {
    const s = snapshot({
      groups: [group('a', { cpu: '2', price: 0.1, replicas: 3 }), group('b', { cpu: '2', price: 0.5, replicas: 1 })],
      pendingPods: replicas('web', 3, { cpu: '1' }),
    });
    const plan = solve(s);
    expect(plan.scaleUps).to.deep.equal([{ kind: 'MachineDeployment', namespace: 'default', name: 'a', from: 3, to: 5 }]);
    expect(plan.cost.addedPerHour).to.be.closeTo(0.2, 1e-9);
  });

  it('distinguishes decimal and binary quantities (1G < 1Gi)', () => {
    const s = snapshot({
      groups: [group('g1', { memory: '1G', price: 0.1 }), group('gi1', { memory: '1Gi', price: 0.2 })],
      pendingPods: [pod('binary', { cpu: '100m', memory: '1Gi' }), pod('decimal', { cpu: '100m', memory: '1G' })],
    });
    const plan = solve(s);
    expect(where(plan)['default/binary']).to.equal('gi1#0');
    expect(where(plan)['default/decimal']).to.equal('g1#0');
  });

  it('sizes a pod by its init container when that is larger than the app', () => {
    const spec = {
      initContainers: [{ name: 'migrate', image: 'x', resources: { requests: { cpu: '3', memory: '1Gi' } } }],
      containers: [{ name: 'app', image: 'x', resources: { requests: { cpu: '500m', memory: '1Gi' } } }],
    };
    const s = snapshot({
      groups: [group('two', { cpu: '2', price: 0.1 }), group('four', { cpu: '4', price: 0.3 })],
      pendingPods: [pod('init-heavy', { spec })],
    });
    expect(where(solve(s))['default/init-heavy']).to.equal('four#0');
    const onlySmall = snapshot({ groups: [group('two', { cpu: '2', price: 0.1 })], pendingPods: [pod('init-heavy', { spec })] });
    const plan = solve(onlySmall);
    expect(plan.unschedulable).to.have.length(1);
    expect(plan.unschedulable[0]!.reason).to.contain('Insufficient cpu').and.contain('MachineDeployment/default/two');
  });

  it('packs extended resources and the pod count', () => {
    const s = snapshot({
      groups: [
        group('cpu', { cpu: '16', memory: '64Gi', pods: 2, price: 0.1 }),
        group('gpu', { cpu: '16', memory: '64Gi', extra: { 'nvidia.com/gpu': '1' }, price: 3 }),
      ],
      pendingPods: [...replicas('web', 5, { cpu: '100m', memory: '100Mi' }), ...replicas('train', 2, { extra: { 'nvidia.com/gpu': '1' } })],
    });
    const plan = solve(s);
    // maxPods 2 -> 3 cpu nodes for 5 tiny pods; one GPU each -> 2 gpu nodes (the web pods may share those).
    expect(newNodes(plan).gpu).to.equal(2);
    const w = where(plan);
    expect(w['default/train-0']).to.match(/^gpu#/);
    expect(w['default/train-1']).to.match(/^gpu#/);
    expect(w['default/train-0']).not.to.equal(w['default/train-1']);
    const perNode = new Map<string, number>();
    for (const v of Object.values(w)) perNode.set(v, (perNode.get(v) ?? 0) + 1);
    for (const [n, c] of perNode) if (n.startsWith('cpu#')) expect(c).to.be.at.most(2);
  });

  it('leaves room for DaemonSet overhead on new nodes', () => {
    const s = snapshot({
      groups: [group('ds', { cpu: '2', overhead: { cpu: '500m' }, price: 0.1 }), group('big', { cpu: '4', price: 0.3 })],
      pendingPods: [pod('p', { cpu: '1800m' })],
    });
    expect(where(solve(s))['default/p']).to.equal('big#0');
  });

  it('never exceeds a group max size, then spills to the next group or reports it', () => {
    const s = snapshot({
      groups: [group('cheap', { cpu: '1', price: 0.1, max: 3, replicas: 1 }), group('dear', { cpu: '1', price: 0.5, max: 1 })],
      pendingPods: replicas('web', 4, { cpu: '1', memory: '1Gi' }),
    });
    const plan = solve(s);
    expect(newNodes(plan)).to.deep.equal({ cheap: 2, dear: 1 });
    expect(plan.unschedulable).to.have.length(1);
    expect(plan.unschedulable[0]!.reason).to.contain('max size 3 reached').and.contain('max size 1 reached');
  });

  it('gives scarce capacity to higher-priority pods first', () => {
    const s = snapshot({
      groups: [group('one', { cpu: '2', price: 0.1, max: 1 })],
      pendingPods: [pod('low', { cpu: '2', spec: { priority: 0 } }), pod('high', { cpu: '2', spec: { priority: 1000 } })],
    });
    const plan = solve(s);
    expect(where(plan)).to.deep.equal({ 'default/high': 'one#0', 'default/low': '-' });
  });

  it('never exceeds NodePool limits', () => {
    const s = snapshot({
      groups: [group('pooled', { cpu: '4', price: 0.1, nodePool: 'default' })],
      limits: { default: { cpu: 10_000, used: { cpu: 2000, memory: 0, nodes: 1 } } },
      pendingPods: replicas('web', 3, { cpu: '4', memory: '1Gi' }),
    });
    const plan = solve(s);
    // 2000m used + 4000m per node: two nodes reach exactly 10 cores, a third would exceed it.
    expect(newNodes(plan)).to.deep.equal({ pooled: 2 });
    expect(plan.unschedulable).to.have.length(1);
    expect(plan.unschedulable[0]!.reason).to.contain('NodePool default limits reached');
  });

  it('chooses many small nodes when they are cheaper than one big one; FFD does not', () => {
    const s = snapshot({
      groups: [group('small', { cpu: '2', memory: '8Gi', price: 0.1 }), group('big', { cpu: '16', memory: '64Gi', price: 1.0 })],
      pendingPods: replicas('web', 10, { cpu: '1', memory: '1Gi' }),
    });
    const plan = solve(s);
    expect(newNodes(plan)).to.deep.equal({ small: 5 });
    expect(plan.cost.addedPerHour).to.be.closeTo(0.5, 1e-9);
    const baseline = ffd(s);
    expect(baseline.cost.addedPerHour).to.be.greaterThan(plan.cost.addedPerHour);
  });

  it('prefers one node over two when the price is the same (fewest nodes)', () => {
    const s = snapshot({
      groups: [group('one', { cpu: '1', memory: '4Gi', price: 0.1 }), group('two', { cpu: '2', memory: '8Gi', price: 0.2 })],
      pendingPods: replicas('web', 2, { cpu: '1', memory: '1Gi' }),
    });
    const plan = solve(s);
    expect(plan.cost.addedPerHour).to.be.closeTo(0.2, 1e-9);
    expect(newNodes(plan)).to.deep.equal({ two: 1 });
  });

  it('right-sizes the last node to the cheapest group that holds it', () => {
    const s = snapshot({
      groups: [group('s', { cpu: '1', memory: '4Gi', price: 0.1 }), group('l', { cpu: '8', memory: '32Gi', price: 0.8 })],
      pendingPods: [...replicas('a', 8, { cpu: '1', memory: '1Gi' }), pod('extra', { cpu: '500m', memory: '1Gi' })],
    });
    const plan = solve(s);
    expect(plan.cost.addedPerHour).to.be.closeTo(0.9, 1e-9);
  });

  it('gives new nodes unique hostnames and is deterministic', () => {
    const s = snapshot({
      groups: [group('g', { cpu: '1', price: 0.1 })],
      pendingPods: replicas('web', 3, {
        cpu: '500m', labels: { app: 'web' },
        spec: { affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: { app: 'web' } } }] } } },
      }),
    });
    const a = solve(s);
    const b = solve(s);
    expect(a).to.deep.equal(b);
    // Hostname anti-affinity on new nodes only works if each new node is its own hostname domain.
    expect(new Set(Object.values(where(a))).size).to.equal(3);
  });
});

describe('solve: existing nodes at scale and reasons', () => {
  it('skips cordoned nodes and says why nothing fits', () => {
    const s = snapshot({
      nodes: [node('cordoned', { unschedulable: true }), node('full', { cpu: '1', bound: [pod('x', { cpu: '1' })] })],
      pendingPods: [pod('p', { cpu: '500m' })],
    });
    const plan = solve(s);
    expect(plan.placements).to.deep.equal([]);
    expect(plan.unschedulable[0]!.reason).to.contain('0/2 nodes available').and.contain('1 node unschedulable')
      .and.contain('1 insufficient free cpu').and.contain('no node groups');
  });

  it('places thousands of pods of a few classes on hundreds of existing nodes, filling them before any new node', () => {
    const nodes = Array.from({ length: 400 }, (_, i) => node(`n${i}`, { cpu: '8', memory: '32Gi', zone: `zone-${i % 3}` }));
    const pods = [
      ...replicas('a', 2000, { cpu: '500m', memory: '1Gi' }),
      ...replicas('b', 2000, { cpu: '1', memory: '2Gi' }),
      ...replicas('c', 1000, { cpu: '250m', memory: '256Mi' }),
    ];
    const s = snapshot({ nodes, groups: [group('g', { cpu: '8', memory: '32Gi', price: 1 })], pendingPods: pods });
    const plan = solve(s);
    // 400 x 8 cpu = 3200 cpu; demand 1000 + 2000 + 250 = 3250 cpu: the existing nodes fill up
    // completely and the last 50 cpu (200 of the 250m pods) need ceil(50 / 8) = 7 new nodes.
    expect(plan.placements).to.have.length(5000);
    const onExisting = plan.placements.filter((p) => 'node' in p).length;
    expect(onExisting).to.equal(4800);
    expect(newNodes(plan)).to.deep.equal({ g: 7 });
  });

  it('between groups equally priced for the demand, prefers the one observed to boot materially sooner', () => {
    const withBoot = (small?: number, large?: number) => [
      { ...group('small', { cpu: '2', memory: '8Gi', price: 0.1, max: 500 }), ...(small !== undefined ? { bootMs: small } : {}) },
      { ...group('large', { cpu: '16', memory: '64Gi', price: 0.8 }), ...(large !== undefined ? { bootMs: large } : {}) },
    ];
    // 320 pods (the cost-aware packer alone) and 96 (small inputs also run FFD and keep the better plan).
    for (const n of [320, 96]) {
      const pods = replicas(`w${n}`, n, { cpu: '1', memory: '2Gi' });
      const plan = (small?: number, large?: number) => solve(snapshot({ groups: withBoot(small, large), pendingPods: pods }));
      // Unknown boot times: the same price either way, so fewer nodes.
      expect(newNodes(plan()), `${n} pods, unknown`).to.deep.equal({ large: n / 16 });
      // Small nodes seen Ready 30 s sooner: the same price, the pods wait less.
      const faster = plan(90_000, 120_000);
      expect(newNodes(faster), `${n} pods, small faster`).to.deep.equal({ small: n / 2 });
      expect(faster.cost.addedPerHour).to.be.closeTo(plan().cost.addedPerHour, 1e-9);
      // Large ones faster, a difference within the batching window, or only one known: as before.
      expect(newNodes(plan(120_000, 90_000)), `${n} pods, large faster`).to.deep.equal({ large: n / 16 });
      expect(newNodes(plan(90_000, 95_000)), `${n} pods, 5 s apart`).to.deep.equal({ large: n / 16 });
      expect(newNodes(plan(90_000, undefined)), `${n} pods, large unknown`).to.deep.equal({ large: n / 16 });
    }
    // Never at a higher price: a dearer per-unit group is not chosen for booting sooner.
    const dear = [{ ...group('small', { cpu: '2', memory: '8Gi', price: 0.12 }), bootMs: 60_000 }, { ...group('large', { cpu: '16', memory: '64Gi', price: 0.8 }), bootMs: 180_000 }];
    expect(newNodes(solve(snapshot({ groups: dear, pendingPods: replicas('d', 320, { cpu: '1', memory: '2Gi' }) })))).to.deep.equal({ large: 20 });
  });
});
