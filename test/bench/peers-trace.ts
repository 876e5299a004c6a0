/**
 * bench:peers' scenarios (peers-scenarios.ts) as simulator traces (src/sim/trace.ts), for
 * the calibration of the `periodic` policy against the real Cluster Autoscaler
 * (peers-calibrate.ts, docs/simulation.md). Pure: a scenario in, a parsed trace out.
 *
 * - Each node group is the bench's MachineDeployment from 0 (min 0, its max, the zone as a
 *   capacity label, the same per-cpu price), its node shape less `reserved` (what an
 *   autoscaler sees taken on each new node: the bench's 100m/64Mi kube-proxy DaemonSet,
 *   and for Cluster Autoscaler the 100m kube-proxy its clusterapi provider adds to every
 *   scale-from-zero template; the simulator models no DaemonSets).
 * - A pod set becomes a Deployment stepped from 0 to its count at the step's time, and to 0
 *   at its delete step; a `replicas` step is a point of a Deployment's schedule; a CronJob
 *   keeps its schedule, with one pod per completion and a 1 s run (kwok completes Job pods
 *   once Running).
 * - Every step is shifted by `warmupS`: both autoscalers run that long before the first
 *   step (the loop's phase then matches the bench's). The boot is a constant `bootS`.
 * - The trace runs to the scenario's end: its durationS, or its window and settle time,
 *   plus its scale-down cap when demand goes away at the end.
 */

import { stringify } from 'yaml';
import type { Trace } from '../../src/sim/trace.js';
import { parseTrace } from '../../src/sim/trace-parse.js';
import { GPU_RESOURCE, finalDelete, podResources, groupPrice, lastCreateAt, type PeerGroup, type Scenario } from './peers-scenarios.js';

export const ZONE_LABEL = 'topology.kubernetes.io/zone';
/** The label every pod of a set carries (the spread constraint selects on it). */
export const SET_LABEL = 'bench.headroom.dev/set';

export interface TraceOptions {
  /** Machine created -> Node Ready, s. */
  bootS: number;
  /** Taken on every new node before workload pods: millicores and MiB. */
  reserved: { cpuMilli: number; memoryMi: number };
  /** The autoscaler's time up before the first step, s. Default 15 (the bench's). */
  warmupS?: number;
  /**
   * Added to every delete step, s. The bench deletes a pod set once all its pods ran
   * (at the step's time at the earliest), which a trace cannot say. Default 0.
   */
  deleteDelayS?: number;
}

/** A group's node as the autoscaler sees it: capacity less the reserved share. */
export function groupShape(g: PeerGroup, reserved: TraceOptions['reserved']): { cpu: string; memory: string } {
  return { cpu: `${g.cpu * 1000 - reserved.cpuMilli}m`, memory: `${g.memoryGi * 1024 - reserved.memoryMi}Mi` };
}

/** How long the trace runs, s (before the warm-up shift). */
export function scenarioDurationS(s: Scenario): number {
  const base = s.durationS ?? Math.max(s.windowS, lastCreateAt(s) + s.settleS);
  const down = finalDelete(s);
  return down ? Math.max(base, down.at + (s.scaleDownS ?? 0)) : base;
}

function nodeGroup(g: PeerGroup, o: TraceOptions): Record<string, unknown> {
  const shape = groupShape(g, o.reserved);
  return {
    bootDelay: `${o.bootS}s`,
    object: {
      apiVersion: 'cluster.x-k8s.io/v1beta2', kind: 'MachineDeployment',
      metadata: {
        name: g.name, namespace: 'peers',
        annotations: {
          'cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size': '0',
          'cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size': String(g.maxSize),
          'capacity.cluster-autoscaler.kubernetes.io/cpu': shape.cpu,
          'capacity.cluster-autoscaler.kubernetes.io/memory': shape.memory,
          'capacity.cluster-autoscaler.kubernetes.io/maxPods': '110',
          'headroom.dev/price': groupPrice(g).toFixed(4),
          ...(g.zone ? { 'capacity.cluster-autoscaler.kubernetes.io/labels': `${ZONE_LABEL}=${g.zone}` } : {}),
          ...(g.gpus ? { 'capacity.cluster-autoscaler.kubernetes.io/gpu-type': GPU_RESOURCE, 'capacity.cluster-autoscaler.kubernetes.io/gpu-count': String(g.gpus) } : {}),
        },
      },
      spec: { clusterName: 'peers', replicas: 0, template: { metadata: { labels: { 'cluster.x-k8s.io/deployment-name': g.name } } } },
    },
  };
}

function template(set: string, cpu: string, memory: string, spreadZones = false, gpus = 0): Record<string, unknown> {
  return {
    metadata: { labels: { [SET_LABEL]: set } },
    spec: {
      containers: [{ name: 'c', resources: podResources(cpu, memory, gpus) }],
      ...(spreadZones
        ? { topologySpreadConstraints: [{ maxSkew: 1, topologyKey: ZONE_LABEL, whenUnsatisfiable: 'DoNotSchedule', labelSelector: { matchLabels: { [SET_LABEL]: set } } }] }
        : {}),
    },
  };
}

/** The scenario as a trace. Throws on a scenario the trace format cannot say (none of the built-in ones). */
export function scenarioTrace(s: Scenario, o: TraceOptions): Trace {
  const warm = o.warmupS ?? 15;
  const at = (t: number) => `${t + warm}s`;
  const deletes = new Map(s.steps.filter((x) => x.kind === 'delete').map((x) => [x.name, x.at + (o.deleteDelayS ?? 0)]));
  const deployments = new Map<string, { points: Array<{ at: string; replicas: number }>; template: Record<string, unknown> }>();
  const workloads: Record<string, unknown>[] = [];
  for (const step of s.steps) {
    if (step.kind === 'pods') {
      const points = [{ at: '0s', replicas: 0 }, { at: at(step.at), replicas: step.count }];
      const gone = deletes.get(step.name);
      if (gone !== undefined) points.push({ at: at(gone), replicas: 0 });
      deployments.set(step.name, { points, template: template(step.name, step.cpu, step.memory, step.spreadZones, step.gpus) });
    } else if (step.kind === 'replicas') {
      const d = deployments.get(step.name) ?? { points: [{ at: '0s', replicas: 0 }], template: template(step.name, step.cpu, step.memory) };
      d.points.push({ at: at(step.at), replicas: step.replicas });
      deployments.set(step.name, d);
    } else if (step.kind === 'cronjob') {
      if (step.at !== 0) throw new Error(`scenario ${s.name}: a CronJob created after the start cannot be a trace workload`);
      workloads.push({
        kind: 'CronJob', name: step.name, namespace: 'peers', schedule: step.schedule,
        completions: step.parallelism, parallelism: step.parallelism, duration: '1s', template: template(step.name, step.cpu, step.memory),
      });
    }
  }
  for (const [name, d] of deployments) {
    const gone = deletes.get(name);
    if (gone !== undefined && !d.points.some((p) => p.at === at(gone))) d.points.push({ at: at(gone), replicas: 0 });
    workloads.unshift({ kind: 'Deployment', name, namespace: 'peers', replicas: { points: d.points, interpolation: 'step', every: '1s' }, template: d.template });
  }
  const doc = {
    name: `peers-${s.name}`, description: `bench:peers ${s.name}: ${s.description}`,
    duration: `${scenarioDurationS(s) + warm + (o.deleteDelayS ?? 0)}s`,
    nodeGroups: s.groups.map((g) => nodeGroup(g, o)),
    workloads,
  };
  return parseTrace(stringify(doc), doc.name);
}
