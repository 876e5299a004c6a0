import { stringify } from 'yaml';
import type { Trace } from '../../../src/sim/trace.js';
import { parseTrace } from '../../../src/sim/trace-parse.js';

export interface GroupSpec {
  name: string;
  cpu: string;
  memory: string;
  price: string;
  min?: number;
  max?: number;
  replicas?: number;
  boot?: string;
  /** Labels the group's nodes get (its capacity labels annotation). */
  labels?: Record<string, string>;
  taints?: string;
}

/** A MachineDeployment node group for a test trace. */
export function group(g: GroupSpec): Record<string, unknown> {
  const annotations: Record<string, string> = {
    'cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size': String(g.min ?? 0),
    'cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size': String(g.max ?? 50),
    'capacity.cluster-autoscaler.kubernetes.io/cpu': g.cpu,
    'capacity.cluster-autoscaler.kubernetes.io/memory': g.memory,
    'headroom.dev/price': g.price,
  };
  if (g.taints) annotations['capacity.cluster-autoscaler.kubernetes.io/taints'] = g.taints;
  // Node labels the way a CAPI cluster gets them (the kubelet's --node-labels), declared
  // as Cluster Autoscaler reads them: CAPI copies no plain template label to Nodes.
  if (g.labels) annotations['capacity.cluster-autoscaler.kubernetes.io/labels'] = Object.entries(g.labels).map(([k, v]) => `${k}=${v}`).join(',');
  return {
    bootDelay: g.boot ?? '60s',
    object: {
      apiVersion: 'cluster.x-k8s.io/v1beta2', kind: 'MachineDeployment',
      metadata: { name: g.name, namespace: 'default', annotations },
      spec: { clusterName: 'sim', replicas: g.replicas ?? 0, template: { metadata: { labels: { pool: g.name } } } },
    },
  };
}

export function podTemplate(app: string, cpu: string, memory: string, spec: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    metadata: { labels: { app } },
    spec: { ...spec, containers: [{ name: app, resources: { requests: { cpu, memory } } }] },
  };
}

export function trace(name: string, duration: string, nodeGroups: Record<string, unknown>[], workloads: Record<string, unknown>[], extra: Record<string, unknown> = {}): Trace {
  return parseTrace(stringify({ name, duration, nodeGroups, workloads, ...extra }), name);
}
