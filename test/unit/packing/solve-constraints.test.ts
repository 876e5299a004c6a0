import type { V1PodAffinityTerm, V1TopologySpreadConstraint } from '@kubernetes/client-node';
import { expect } from 'chai';
import { ffd } from '../../../src/packing/ffd.js';
import { solve } from '../../../src/packing/solve.js';
import { HOSTNAME, ZONE, group, groupOf, newNodes, node, pod, replicas, snapshot, where } from './snapshot-builders.js';

const zones = (price = 0.1, o: Parameters<typeof group>[1] = {}) =>
  ['zone-a', 'zone-b', 'zone-c'].map((z) => group(`g-${z}`, { zone: z, price, cpu: '8', memory: '32Gi', ...o }));

function zoneCounts(plan: ReturnType<typeof solve>, s: ReturnType<typeof snapshot>): Record<string, number> {
  const nodeZone = new Map(s.nodes.map((n) => [n.name, n.labels[ZONE]!]));
  const groupZone = new Map(s.groups.map((g) => [g.id, g.template.labels[ZONE]!]));
  const out: Record<string, number> = {};
  for (const p of plan.placements) {
    const z = 'node' in p ? nodeZone.get(p.node)! : groupZone.get(p.group)!;
    out[z] = (out[z] ?? 0) + 1;
  }
  return out;
}

const anti = (key: string, labels: Record<string, string>, extra: Partial<V1PodAffinityTerm> = {}) => ({
  podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey: key, labelSelector: { matchLabels: labels }, ...extra }] },
});
const spread = (key: string, labels: Record<string, string>, extra: Partial<V1TopologySpreadConstraint> = {}): V1TopologySpreadConstraint => ({
  maxSkew: 1, topologyKey: key, whenUnsatisfiable: 'DoNotSchedule', labelSelector: { matchLabels: labels }, ...extra,
});

describe('solve: node selection and taints', () => {
  it('honours nodeSelector', () => {
    const s = snapshot({
      groups: [group('cheap', { price: 0.1 }), group('ssd', { price: 0.5, labels: { disk: 'ssd' } })],
      pendingPods: [pod('db', { spec: { nodeSelector: { disk: 'ssd' } } })],
    });
    expect(where(solve(s))['default/db']).to.equal('ssd#0');
  });

  it('honours required node affinity as an OR of terms, with all operators', () => {
    const gs = [
      group('a', { zone: 'zone-a', price: 0.3, labels: { gen: '5' } }),
      group('b', { zone: 'zone-b', price: 0.2, labels: { gen: '6' } }),
      group('c', { zone: 'zone-c', price: 0.1, labels: { gen: '7', spot: 'true' } }),
    ];
    const aff = (terms: object[]) => ({ nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: terms } } });
    const s = snapshot({
      groups: gs,
      // Each pod fills a node (4 cpu), so every pod's own choice shows.
      pendingPods: [
        // zone-a OR zone-b: the cheaper of the two.
        pod('or', { cpu: '4', spec: { affinity: aff([{ matchExpressions: [{ key: ZONE, operator: 'In', values: ['zone-a'] }] }, { matchExpressions: [{ key: ZONE, operator: 'In', values: ['zone-b'] }] }]) } }),
        pod('notin', { cpu: '4', spec: { affinity: aff([{ matchExpressions: [{ key: ZONE, operator: 'NotIn', values: ['zone-c', 'zone-b'] }] }]) } }),
        pod('dne', { cpu: '4', spec: { affinity: aff([{ matchExpressions: [{ key: 'spot', operator: 'DoesNotExist' }] }]) } }),
        pod('exists', { cpu: '4', spec: { affinity: aff([{ matchExpressions: [{ key: 'spot', operator: 'Exists' }] }]) } }),
        pod('lt', { cpu: '4', spec: { affinity: aff([{ matchExpressions: [{ key: 'gen', operator: 'Lt', values: ['6'] }] }]) } }),
        pod('gt', { cpu: '4', spec: { affinity: aff([{ matchExpressions: [{ key: 'gen', operator: 'Gt', values: ['6'] }] }]) } }),
      ],
    });
    const plan = solve(s);
    expect(groupOf(plan, 'default/or')).to.equal('b');
    expect(groupOf(plan, 'default/notin')).to.equal('a');
    expect(groupOf(plan, 'default/dne')).to.equal('b');
    expect(groupOf(plan, 'default/exists')).to.equal('c');
    expect(groupOf(plan, 'default/lt')).to.equal('a');
    expect(groupOf(plan, 'default/gt')).to.equal('c');
  });

  it('honours preferred node affinity when possible, then relaxes it', () => {
    const pref = { nodeAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 50, preference: { matchExpressions: [{ key: ZONE, operator: 'In', values: ['zone-b'] }] } }] } };
    const p = pod('p', { spec: { affinity: pref } });
    const open = snapshot({ groups: [group('a', { zone: 'zone-a', price: 0.1 }), group('b', { zone: 'zone-b', price: 0.5 })], pendingPods: [p] });
    expect(groupOf(solve(open), 'default/p')).to.equal('b');
    const full = snapshot({ groups: [group('a', { zone: 'zone-a', price: 0.1 }), group('b', { zone: 'zone-b', price: 0.5, max: 0 })], pendingPods: [p] });
    const plan = solve(full);
    expect(groupOf(plan, 'default/p')).to.equal('a');
    expect(plan.unschedulable).to.deep.equal([]);
    expect(groupOf(solve(open, { ignorePreferences: true }), 'default/p')).to.equal('a');
  });

  it('treats NoSchedule and NoExecute taints as hard', () => {
    for (const effect of ['NoSchedule', 'NoExecute']) {
      const s = snapshot({
        groups: [group('tainted', { price: 0.1, taints: [{ key: 'dedicated', value: 'infra', effect }] }), group('plain', { price: 0.5 })],
        // Each pod fills a node, so sharing one is not an option.
        pendingPods: [pod('app', { cpu: '4' }), pod('infra', { cpu: '4', spec: { tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'infra', effect }] } })],
      });
      const plan = solve(s);
      expect(groupOf(plan, 'default/app'), effect).to.equal('plain');
      expect(groupOf(plan, 'default/infra'), effect).to.equal('tainted');
    }
  });

  it('treats PreferNoSchedule as soft: avoided when possible, used when not', () => {
    const soft = [{ key: 'spot', value: 'true', effect: 'PreferNoSchedule' }];
    const both = snapshot({ groups: [group('soft', { price: 0.1, taints: soft }), group('plain', { price: 0.5 })], pendingPods: [pod('p')] });
    expect(groupOf(solve(both), 'default/p')).to.equal('plain');
    const only = snapshot({ groups: [group('soft', { price: 0.1, taints: soft })], pendingPods: [pod('p')] });
    expect(groupOf(solve(only), 'default/p')).to.equal('soft');
  });
});

describe('solve: pod affinity and anti-affinity', () => {
  it('keeps hostname anti-affinity replicas on separate nodes, on existing nodes too', () => {
    const s = snapshot({
      groups: [group('g', { price: 0.1 })],
      nodes: [node('n1', { bound: [pod('web-old', { labels: { app: 'web' } })] })],
      pendingPods: replicas('web', 3, { cpu: '100m', labels: { app: 'web' }, spec: { affinity: anti(HOSTNAME, { app: 'web' }) } }),
    });
    const plan = solve(s);
    const w = Object.values(where(plan));
    expect(new Set(w).size).to.equal(3);
    expect(w).not.to.include('n1');
    expect(newNodes(plan)).to.deep.equal({ g: 3 });
  });

  it('reports pods that zone anti-affinity cannot place, naming the constraint and the groups', () => {
    const s = snapshot({
      groups: [group('a', { zone: 'zone-a' }), group('b', { zone: 'zone-b' })],
      pendingPods: replicas('web', 3, { labels: { app: 'web' }, spec: { affinity: anti(ZONE, { app: 'web' }) } }),
    });
    const plan = solve(s);
    expect(plan.placements).to.have.length(2);
    expect(plan.unschedulable).to.have.length(1);
    expect(plan.unschedulable[0]!.reason).to.contain(`pod anti-affinity (${ZONE})`)
      .and.contain('MachineDeployment/default/a').and.contain('MachineDeployment/default/b');
  });

  it('honours the anti-affinity of pods already running (symmetry)', () => {
    const guard = pod('guard', { labels: { role: 'guard' }, spec: { affinity: anti(HOSTNAME, { app: 'web' }) } });
    const s = snapshot({
      groups: [group('g', { price: 0.1 })],
      nodes: [node('n1', { bound: [guard] }), node('n2')],
      pendingPods: replicas('web', 2, { cpu: '100m', labels: { app: 'web' } }),
    });
    expect(Object.values(where(solve(s)))).to.deep.equal(['n2', 'n2']);
  });

  it('applies namespaceSelector and namespaces to affinity terms', () => {
    const other = pod('other', { namespace: 'team-x', labels: { app: 'db' } });
    const mk = (term: Partial<V1PodAffinityTerm>) => snapshot({
      groups: [group('g', { price: 0.1 })],
      nodes: [node('n1', { bound: [other] })],
      namespaceLabels: { default: {}, 'team-x': { team: 'x' } },
      pendingPods: [pod('p', { cpu: '100m', spec: { affinity: anti(HOSTNAME, { app: 'db' }, term) } })],
    });
    expect(where(solve(mk({})))['default/p'], 'own namespace only').to.equal('n1');
    expect(where(solve(mk({ namespaceSelector: { matchLabels: { team: 'x' } } })))['default/p']).to.equal('g#0');
    expect(where(solve(mk({ namespaces: ['team-x'] })))['default/p']).to.equal('g#0');
    expect(where(solve(mk({ namespaceSelector: {} })))['default/p'], 'empty selector: all').to.equal('g#0');
  });

  it('places pods with zone affinity in the zone of the pods they follow', () => {
    const s = snapshot({
      groups: zones(),
      nodes: [node('db-node', { zone: 'zone-b', cpu: '1', bound: [pod('db', { cpu: '1', labels: { app: 'db' } })] })],
      pendingPods: replicas('api', 2, { spec: { affinity: { podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey: ZONE, labelSelector: { matchLabels: { app: 'db' } } }] } } } }),
    });
    const plan = solve(s);
    expect(zoneCounts(plan, s)).to.deep.equal({ 'zone-b': 2 });
  });

  it('lets the first pod of a self-affine group go anywhere and the rest follow', () => {
    const s = snapshot({
      groups: zones(),
      pendingPods: replicas('cache', 6, { cpu: '3', labels: { app: 'cache' }, spec: { affinity: { podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey: ZONE, labelSelector: { matchLabels: { app: 'cache' } } }] } } } }),
    });
    const plan = solve(s);
    expect(plan.unschedulable).to.deep.equal([]);
    expect(Object.keys(zoneCounts(plan, s))).to.have.length(1);
  });

  it('meets pod affinity to pods that are pending in the same solve (retry after others are placed)', () => {
    const aff = { podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey: ZONE, labelSelector: { matchLabels: { app: 'db' } } }] } };
    const s = snapshot({
      groups: zones(),
      // The api pods are larger, so they come first and find no db pod yet.
      pendingPods: [...replicas('api', 2, { cpu: '3', spec: { affinity: aff } }), pod('db', { cpu: '1', labels: { app: 'db' }, spec: { nodeSelector: { [ZONE]: 'zone-c' } } })],
    });
    for (const plan of [solve(s), ffd(s)]) {
      expect(plan.unschedulable).to.deep.equal([]);
      expect(zoneCounts(plan, s)).to.deep.equal({ 'zone-c': 3 });
    }
  });

  it('reports pod affinity to pods that do not exist', () => {
    const s = snapshot({
      groups: zones(),
      pendingPods: [pod('lonely', { spec: { affinity: { podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey: ZONE, labelSelector: { matchLabels: { app: 'ghost' } } }] } } } })],
    });
    const plan = solve(s);
    expect(plan.unschedulable).to.have.length(1);
    expect(plan.unschedulable[0]!.reason).to.contain('pod affinity');
  });

  it('honours preferred anti-affinity when it can, then relaxes it', () => {
    const pref = { podAntiAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 100, podAffinityTerm: { topologyKey: HOSTNAME, labelSelector: { matchLabels: { app: 'web' } } } }] } };
    const s = snapshot({ groups: [group('g', { price: 0.1, max: 2 })], pendingPods: replicas('web', 3, { cpu: '100m', labels: { app: 'web' }, spec: { affinity: pref } }) });
    const plan = solve(s);
    expect(plan.unschedulable).to.deep.equal([]);
    expect(newNodes(plan)).to.deep.equal({ g: 2 });
  });
});

describe('solve: topology spread', () => {
  it('spreads across the zones node groups can create, within maxSkew', () => {
    const s = snapshot({ groups: zones(), pendingPods: replicas('web', 7, { cpu: '100m', labels: { app: 'web' }, spec: { topologySpreadConstraints: [spread(ZONE, { app: 'web' })] } }) });
    const c = zoneCounts(solve(s), s);
    expect(Object.values(c).sort()).to.deep.equal([2, 2, 3]);
  });

  it('counts existing matching pods when spreading', () => {
    const s = snapshot({
      groups: zones(),
      nodes: [node('n-a', { zone: 'zone-a', bound: replicas('old', 2, { cpu: '100m', labels: { app: 'web' } }) })],
      pendingPods: replicas('web', 4, { cpu: '100m', labels: { app: 'web' }, spec: { topologySpreadConstraints: [spread(ZONE, { app: 'web' })] } }),
    });
    const c = zoneCounts(solve(s), s);
    // 2 already in zone-a: the 4 new ones go 2 / 2 to b and c (2/2/2 in the end).
    expect(c).to.deep.equal({ 'zone-b': 2, 'zone-c': 2 });
  });

  it('treats the global minimum as 0 below minDomains', () => {
    const two = ['zone-a', 'zone-b'].map((z) => group(`g-${z}`, { zone: z, price: 0.1 }));
    const mk = (minDomains?: number) => snapshot({
      groups: two,
      pendingPods: replicas('web', 4, { cpu: '100m', labels: { app: 'web' }, spec: { topologySpreadConstraints: [spread(ZONE, { app: 'web' }, minDomains ? { minDomains } : {})] } }),
    });
    expect(solve(mk()).placements).to.have.length(4);
    const plan = solve(mk(3));
    // Only 2 of 3 required domains exist: each zone may hold at most maxSkew pods.
    expect(plan.placements).to.have.length(2);
    expect(plan.unschedulable).to.have.length(2);
    expect(plan.unschedulable[0]!.reason).to.contain('topology spread');
  });

  it('spreads over hostnames: one matching pod per node at maxSkew 1', () => {
    const s = snapshot({ groups: [group('g', { price: 0.1 })], pendingPods: replicas('web', 3, { cpu: '100m', labels: { app: 'web' }, spec: { topologySpreadConstraints: [spread(HOSTNAME, { app: 'web' })] } }) });
    expect(newNodes(solve(s))).to.deep.equal({ g: 3 });
  });

  it('measures hostname skew against existing nodes once no group can add one', () => {
    const mk = (max: number) => snapshot({
      groups: [group('g', { price: 0.1, max })],
      nodes: [node('n1', { bound: [pod('old', { cpu: '100m', labels: { app: 'web' } })] }), node('n2')],
      pendingPods: replicas('web', 3, { cpu: '100m', labels: { app: 'web' }, spec: { topologySpreadConstraints: [spread(HOSTNAME, { app: 'web' })] } }),
    });
    // Groups full: domains are n1 (1) and n2 (0): n2, then one each, then stop at skew.
    const full = solve(mk(0));
    expect(Object.values(where(full)).sort()).to.deep.equal(['n1', 'n2', 'n2']);
    // A group can add nodes: every new node is an empty domain, so at most one per node.
    const open = solve(mk(10));
    expect(newNodes(open)).to.deep.equal({ g: 2 });
  });

  it('nodeAffinityPolicy Honor ignores domains the pod cannot use; Ignore counts them', () => {
    const mk = (nodeAffinityPolicy: 'Honor' | 'Ignore') => snapshot({
      groups: [group('a', { zone: 'zone-a', price: 0.1 }), group('b', { zone: 'zone-b', price: 0.1 }), group('c', { zone: 'zone-c', price: 0.1, labels: { pool: 'other' } })],
      pendingPods: replicas('web', 4, {
        cpu: '100m', labels: { app: 'web' },
        spec: {
          affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'pool', operator: 'DoesNotExist' }] }] } } },
          topologySpreadConstraints: [spread(ZONE, { app: 'web' }, { nodeAffinityPolicy })],
        },
      }),
    });
    expect(solve(mk('Honor')).placements).to.have.length(4);
    const ignored = solve(mk('Ignore'));
    expect(ignored.placements).to.have.length(2);
  });

  it('nodeTaintsPolicy Honor ignores tainted domains; Ignore (default) counts them', () => {
    const mk = (nodeTaintsPolicy?: 'Honor') => snapshot({
      groups: [group('a', { zone: 'zone-a' }), group('b', { zone: 'zone-b' }), group('c', { zone: 'zone-c', taints: [{ key: 'x', effect: 'NoSchedule' }] })],
      pendingPods: replicas('web', 4, { cpu: '100m', labels: { app: 'web' }, spec: { topologySpreadConstraints: [spread(ZONE, { app: 'web' }, nodeTaintsPolicy ? { nodeTaintsPolicy } : {})] } }),
    });
    expect(solve(mk('Honor')).placements).to.have.length(4);
    expect(solve(mk()).placements).to.have.length(2);
  });

  it('matchLabelKeys counts each revision separately', () => {
    const c = spread(ZONE, { app: 'web' }, { matchLabelKeys: ['pod-template-hash'] });
    const old = replicas('old', 2, { cpu: '100m', labels: { app: 'web', 'pod-template-hash': 'v1' } });
    const mk = (withKeys: boolean) => snapshot({
      groups: zones(),
      nodes: [node('n-a', { zone: 'zone-a', bound: old })],
      pendingPods: replicas('new', 3, { cpu: '100m', labels: { app: 'web', 'pod-template-hash': 'v2' }, spec: { topologySpreadConstraints: [withKeys ? c : spread(ZONE, { app: 'web' })] } }),
    });
    // With matchLabelKeys the old revision is not counted: one new pod per zone, zone-a (free room) included.
    const s1 = mk(true);
    expect(zoneCounts(solve(s1), s1)).to.deep.equal({ 'zone-a': 1, 'zone-b': 1, 'zone-c': 1 });
    const s2 = mk(false);
    expect(zoneCounts(solve(s2), s2)['zone-a'] ?? 0).to.equal(0);
  });

  it('treats ScheduleAnyway as a preference', () => {
    const s = snapshot({
      groups: [group('a', { zone: 'zone-a', price: 0.1 })],
      pendingPods: replicas('web', 3, { cpu: '100m', labels: { app: 'web' }, spec: { topologySpreadConstraints: [spread(HOSTNAME, { app: 'web' }, { whenUnsatisfiable: 'ScheduleAnyway' })] } }),
    });
    expect(newNodes(solve(s))).to.deep.equal({ a: 3 });
    const capped = snapshot({ ...s, groups: [group('a', { zone: 'zone-a', price: 0.1, max: 1 })] });
    const plan = solve(capped);
    expect(plan.unschedulable).to.deep.equal([]);
    expect(newNodes(plan)).to.deep.equal({ a: 1 });
  });
});

describe('solve: host ports and volumes', () => {
  it('never puts two pods with the same hostPort on one node', () => {
    const ports = { containers: [{ name: 'c', image: 'x', ports: [{ containerPort: 80, hostPort: 8080 }], resources: { requests: { cpu: '100m' } } }] };
    const s = snapshot({ groups: [group('g', { price: 0.1 })], nodes: [node('n1')], pendingPods: replicas('proxy', 3, { spec: ports }) });
    const plan = solve(s);
    expect(new Set(Object.values(where(plan))).size).to.equal(3);
    expect(where(plan)['default/proxy-0']).to.equal('n1');
  });

  it('follows bound PV node affinity and WaitForFirstConsumer allowedTopologies', () => {
    const vol = (claim: string) => ({ volumes: [{ name: 'd', persistentVolumeClaim: { claimName: claim } }] });
    const s = snapshot({
      groups: zones(0.1),
      volumes: {
        persistentVolumes: { 'pv-1': { nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: ZONE, operator: 'In', values: ['zone-c'] }] }] } } } },
        claims: { 'default/bound': { volumeName: 'pv-1', bound: true }, 'default/wffc': { storageClassName: 'gp3', bound: false }, 'default/imm': { storageClassName: 'fast', bound: false } },
        storageClasses: { gp3: { waitForFirstConsumer: true, allowedTopologies: [{ matchLabelExpressions: [{ key: ZONE, values: ['zone-b'] }] }] }, fast: { waitForFirstConsumer: false } },
      },
      pendingPods: [pod('a', { spec: vol('bound') }), pod('b', { spec: vol('wffc') }), pod('c', { spec: vol('imm') }), pod('d', { spec: vol('missing') })],
    });
    const plan = solve(s);
    expect(groupOf(plan, 'default/a')).to.equal('g-zone-c');
    expect(groupOf(plan, 'default/b')).to.equal('g-zone-b');
    expect(plan.unschedulable.map((u) => u.pod)).to.deep.equal(['default/c', 'default/d']);
    expect(plan.unschedulable[0]!.reason).to.contain('volume topology');
  });
});
