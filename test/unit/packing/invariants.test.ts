import { expect } from 'chai';
import type { ClusterSnapshot } from '../../../src/cluster/snapshot.js';
import { ffd } from '../../../src/packing/ffd.js';
import type { Plan } from '../../../src/packing/plan.js';
import { solve } from '../../../src/packing/solve.js';
import type { SchedulingPod } from '../../../src/scheduling/scheduling-pod.js';
import { rng } from '../../bench/workload.js';
import { HOSTNAME, ZONE, group, node, pod, replicas, snapshot } from './snapshot-builders.js';

/** A random small cluster: a few groups (some capped, some tainted), nodes with pods, mixed constraints. */
export function randomSnapshot(seed: number): ClusterSnapshot {
  const r = rng(seed);
  const pick = <T>(xs: T[]): T => xs[Math.floor(r() * xs.length)]!;
  const zones = ['zone-a', 'zone-b', 'zone-c'];
  const groups = Array.from({ length: 2 + Math.floor(r() * 4) }, (_, i) => group(`g${i}`, {
    cpu: String(pick([1, 2, 4, 8])), memory: `${pick([2, 4, 8, 16])}Gi`, pods: pick([4, 20, 110]), zone: pick(zones),
    price: Math.round((0.05 + r()) * 100) / 100, max: Math.floor(r() * 6),
    taints: r() < 0.2 ? [{ key: 'dedicated', value: 'x', effect: 'NoSchedule' }] : [],
  }));
  const nodes = Array.from({ length: Math.floor(r() * 4) }, (_, i) => node(`n${i}`, {
    cpu: '4', memory: '8Gi', zone: pick(zones), bound: replicas(`run${i}`, Math.floor(r() * 3), { cpu: '500m', memory: '512Mi', labels: { app: pick(['web', 'db']) } }),
  }));
  const pending: SchedulingPod[] = [];
  for (let c = 0; c < 6; c++) {
    const app = pick(['web', 'db', 'cache']);
    const kind = pick(['plain', 'anti-host', 'anti-zone', 'spread-zone', 'spread-host', 'affinity-zone', 'tolerate', 'selector']);
    const spec: Record<string, unknown> = {};
    if (kind === 'anti-host' || kind === 'anti-zone') {
      spec.affinity = { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey: kind === 'anti-host' ? HOSTNAME : ZONE, labelSelector: { matchLabels: { app } } }] } };
    } else if (kind === 'affinity-zone') {
      spec.affinity = { podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey: ZONE, labelSelector: { matchLabels: { app } } }] } };
    } else if (kind.startsWith('spread')) {
      spec.topologySpreadConstraints = [{ maxSkew: 1, topologyKey: kind === 'spread-host' ? HOSTNAME : ZONE, whenUnsatisfiable: 'DoNotSchedule', labelSelector: { matchLabels: { app } } }];
    } else if (kind === 'tolerate') {
      spec.tolerations = [{ key: 'dedicated', operator: 'Exists' }];
    } else if (kind === 'selector') {
      spec.nodeSelector = { [ZONE]: pick(zones) };
    }
    pending.push(...replicas(`c${c}-${kind}`, 1 + Math.floor(r() * 6), { cpu: pick(['100m', '500m', '1', '3']), memory: pick(['128Mi', '1Gi', '3Gi']), labels: { app }, spec }));
  }
  pending.push(pod('giant', { cpu: '64' }));
  return snapshot({ groups, nodes, pendingPods: pending });
}

/** Checks what any valid plan must satisfy, from the snapshot alone. */
function checkPlan(s: ClusterSnapshot, plan: Plan): void {
  const pods = new Map(s.pendingPods.map((p) => [p.key, p]));
  const seen = new Set<string>();
  for (const k of [...plan.placements.map((p) => p.pod), ...plan.unschedulable.map((u) => u.pod)]) {
    expect(seen.has(k), `${k} twice`).to.equal(false);
    seen.add(k);
  }
  expect(seen.size).to.equal(pods.size);
  expect(plan.unschedulable.map((u) => u.pod)).to.include('default/giant');

  // Every node (existing or new) within its capacity, new nodes within their group's max size.
  const used = new Map<string, { cpu: number; memory: number; pods: number; members: SchedulingPod[]; zone: string; cap: Record<string, number> }>();
  const groups = new Map(s.groups.map((g) => [g.id, g]));
  for (const p of plan.placements) {
    const q = pods.get(p.pod)!;
    const key = 'node' in p ? p.node : `${p.group}#${p.newNode}`;
    let u = used.get(key);
    if (!u) {
      if ('node' in p) {
        const n = s.nodes.find((x) => x.name === p.node)!;
        const cap = { ...n.allocatable };
        for (const b of n.pods) for (const k in b.requests) cap[k] = (cap[k] ?? 0) - b.requests[k]!;
        u = { cpu: 0, memory: 0, pods: 0, members: [...n.pods], zone: n.labels[ZONE]!, cap };
      } else {
        const g = groups.get(p.group)!;
        expect(g.template.taints.length === 0 || q.tolerations.length > 0, `${p.pod} on tainted ${p.group}`).to.equal(true);
        u = { cpu: 0, memory: 0, pods: 0, members: [], zone: g.template.labels[ZONE]!, cap: g.template.allocatable };
      }
      used.set(key, u);
    }
    u.cpu += q.requests.cpu ?? 0;
    u.memory += q.requests.memory ?? 0;
    u.pods += 1;
    u.members.push(q);
  }
  for (const [key, u] of used) {
    expect(u.cpu, `${key} cpu`).to.be.at.most(u.cap.cpu ?? 0);
    expect(u.memory, `${key} memory`).to.be.at.most(u.cap.memory ?? 0);
    expect(u.pods, `${key} pods`).to.be.at.most(u.cap.pods ?? 0);
    // Hostname anti-affinity: no two pods of one app on a node when either forbids it.
    for (const a of u.members) {
      const terms = a.affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? [];
      for (const t of terms) {
        if (t.topologyKey !== HOSTNAME) continue;
        const others = u.members.filter((b) => b !== a && b.labels.app === t.labelSelector?.matchLabels?.app);
        expect(others, `${a.key} shares ${key} with its anti-affinity`).to.deep.equal([]);
      }
      if (a.nodeSelector[ZONE]) expect(u.zone, `${a.key} nodeSelector`).to.equal(a.nodeSelector[ZONE]);
    }
  }
  for (const up of plan.scaleUps) {
    const g = groups.get(`${up.kind}/${up.namespace}/${up.name}`)!;
    expect(up.from).to.equal(g.replicas);
    expect(up.to, `${g.id} max size`).to.be.at.most(g.maxSize);
    expect(up.to).to.be.greaterThan(up.from);
  }
}

describe('packing invariants on random clusters', () => {
  for (let seed = 1; seed <= 60; seed++) {
    it(`seed ${seed}: solve and ffd produce valid, deterministic plans`, () => {
      const s = randomSnapshot(seed);
      const a = solve(s);
      checkPlan(s, a);
      expect(solve(s)).to.deep.equal(a);
      const b = ffd(s);
      checkPlan(s, b);
      // Small inputs keep the better of the two: never fewer pods placed, never dearer.
      expect(a.unschedulable.length).to.be.at.most(b.unschedulable.length);
      if (a.unschedulable.length === b.unschedulable.length) expect(a.cost.addedPerHour).to.be.at.most(b.cost.addedPerHour + 1e-9);
    });
  }
});
