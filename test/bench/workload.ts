import type { V1PodAffinityTerm, V1TopologySpreadConstraint } from '@kubernetes/client-node';
import type { ClusterSnapshot, NodeGroup } from '../../src/cluster/snapshot.js';
import { CPU, MEMORY, PODS, type Resources } from '../../src/scheduling/resources.js';
import type { SchedulingPod } from '../../src/scheduling/scheduling-pod.js';

/**
 * The benchmark's inputs, mirroring Karpenter's scheduling benchmark
 * (kubernetes-sigs/karpenter pkg/controllers/provisioning/scheduling/scheduling_benchmark_test.go
 * and cloudprovider/fake InstanceTypes): 400 fake instance types, type i with
 * i+1 vCPU, 2(i+1) GiB and 10(i+1) pods, priced 0.1/vCPU + 0.1/GB (decimal),
 * offered as spot in zones 1-2 and on-demand in zones 1-3 at the same price.
 * Each offering is one CAPI node group here.
 */
export const ZONE = 'topology.kubernetes.io/zone';
export const HOSTNAME = 'kubernetes.io/hostname';
export const CAPACITY_TYPE = 'karpenter.sh/capacity-type';
export const INSTANCE_TYPE = 'node.kubernetes.io/instance-type';
const GiB = 2 ** 30;
const MiB = 2 ** 20;

export function instanceTypeGroups(count = 400): NodeGroup[] {
  const groups: NodeGroup[] = [];
  for (let i = 0; i < count; i++) {
    const cpu = i + 1;
    const mem = 2 * (i + 1) * GiB;
    const price = 0.1 * cpu + 0.1 * (mem / 1e9);
    const offerings: Array<['spot' | 'on-demand', string]> = [
      ['spot', 'test-zone-1'], ['spot', 'test-zone-2'],
      ['on-demand', 'test-zone-1'], ['on-demand', 'test-zone-2'], ['on-demand', 'test-zone-3'],
    ];
    for (const [capacityType, zone] of offerings) {
      const name = `fake-it-${i}-${capacityType}-${zone}`;
      groups.push({
        id: `MachineDeployment/bench/${name}`, kind: 'MachineDeployment', namespace: 'bench', name, clusterName: 'bench',
        minSize: 0, maxSize: 1_000_000, replicas: 0,
        template: {
          allocatable: { [CPU]: cpu * 1000, [MEMORY]: mem, [PODS]: 10 * (i + 1) },
          labels: { [ZONE]: zone, [CAPACITY_TYPE]: capacityType, [INSTANCE_TYPE]: `fake-it-${i}` },
          taints: [],
        },
        pricePerHour: price, capacityType, daemonSetOverhead: {}, weight: 0,
      });
    }
  }
  return groups;
}

/** mulberry32: a small seeded PRNG so every run (and every child process) sees the same pods. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const CPUS = [100, 250, 500, 1000, 1500];
const MEMS = [100, 256, 512, 1024, 2048, 4096];
const VALUES = ['a', 'b', 'c', 'd', 'e', 'f', 'g'];

export type Mix = 'mixed' | 'plain';
type Kind = 'plain' | 'zone-spread' | 'hostname-spread' | 'zone-affinity' | 'hostname-anti-affinity';
const KINDS: Kind[] = ['plain', 'zone-spread', 'hostname-spread', 'zone-affinity', 'hostname-anti-affinity'];

/**
 * `mixed`: equal fifths of plain pods, zone spread, hostname spread, zone
 * self-affinity and hostname anti-affinity (the last fifth takes the remainder);
 * `plain`: all plain. Labels and selectors are drawn as Karpenter draws them.
 */
export function benchPods(count: number, mix: Mix, seed = 42): SchedulingPod[] {
  const r = rng(seed);
  const pick = <T>(xs: T[]): T => xs[Math.floor(r() * xs.length)]!;
  const pods: SchedulingPod[] = [];
  const fifth = Math.floor(count / 5);
  for (let i = 0; i < count; i++) {
    const kind: Kind = mix === 'plain' ? 'plain' : KINDS[Math.min(4, Math.floor(i / Math.max(1, fifth)))]!;
    const requests: Resources = { [CPU]: pick(CPUS), [MEMORY]: pick(MEMS) * MiB, [PODS]: 1 };
    let labels: Record<string, string>;
    const pod: Partial<SchedulingPod> = { topologySpreadConstraints: [] };
    if (kind === 'plain') {
      labels = { 'my-label': pick(VALUES) };
    } else if (kind === 'zone-spread' || kind === 'hostname-spread') {
      labels = { 'my-label': pick(VALUES) };
      const c: V1TopologySpreadConstraint = {
        maxSkew: 1, topologyKey: kind === 'zone-spread' ? ZONE : HOSTNAME, whenUnsatisfiable: 'DoNotSchedule',
        labelSelector: { matchLabels: { 'my-label': pick(VALUES) } },
      };
      pod.topologySpreadConstraints = [c];
    } else if (kind === 'zone-affinity') {
      const v = pick(VALUES);
      labels = { 'my-affinity': v };
      const term: V1PodAffinityTerm = { topologyKey: ZONE, labelSelector: { matchLabels: { 'my-affinity': v } } };
      pod.affinity = { podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term] } };
    } else {
      labels = { app: 'nginx' };
      const term: V1PodAffinityTerm = { topologyKey: HOSTNAME, labelSelector: { matchLabels: { app: 'nginx' } } };
      pod.affinity = { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term] } };
    }
    const name = `pod-${i}`;
    pods.push({
      key: `bench/${name}`, namespace: 'bench', name, uid: `uid-${i}`, labels,
      equivalenceKey: JSON.stringify([kind, requests, labels, pod.topologySpreadConstraints, pod.affinity ?? null]),
      requests, priority: 0, nodeSelector: {}, tolerations: [], topologySpreadConstraints: pod.topologySpreadConstraints!,
      hostPorts: [], claims: [], ...(pod.affinity ? { affinity: pod.affinity } : {}),
    });
  }
  return pods;
}

export function benchSnapshot(count: number, mix: Mix, seed = 42): ClusterSnapshot {
  return {
    groups: instanceTypeGroups(), nodes: [], pendingPods: benchPods(count, mix, seed),
    volumes: { persistentVolumes: {}, claims: {}, storageClasses: {} }, namespaceLabels: { bench: {} }, limits: {}, disruption: {}, templates: {},
  };
}

/**
 * The lower bound on cost: for each resource, its total demand priced at the
 * cheapest per-unit rate any group offers (price / capacity); the bound is the
 * largest of these, since every node pays for each of its resources at once.
 */
export function lowerBound(s: ClusterSnapshot): number {
  let bound = 0;
  for (const r of [CPU, MEMORY]) {
    let demand = 0;
    for (const p of s.pendingPods) demand += p.requests[r] ?? 0;
    let rate = Infinity;
    for (const g of s.groups) {
      const cap = (g.template.allocatable[r] ?? 0) - (g.daemonSetOverhead[r] ?? 0);
      if (cap > 0) rate = Math.min(rate, g.pricePerHour / cap);
    }
    if (Number.isFinite(rate)) bound = Math.max(bound, demand * rate);
  }
  return bound;
}
