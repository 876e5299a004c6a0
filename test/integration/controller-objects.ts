import type { UnstructuredObject } from '../../src/api/unstructured-object.js';

/** CAPI v1beta2 objects for the controller integration tests. */

export const CAPI = 'cluster.x-k8s.io/v1beta2';
export const MIN = 'cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size';
export const MAX = 'cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size';

const machineSpec = (clusterName: string) => ({
  clusterName,
  bootstrap: { dataSecretName: 'bootstrap-data' },
  infrastructureRef: { apiGroup: 'infrastructure.test.headroom.dev', kind: 'FakeMachineTemplate', name: 'fake' },
});

export interface GroupOptions {
  namespace: string;
  name: string;
  clusterName?: string;
  replicas: number;
  min: number;
  max: number;
  /** capacity.cluster-autoscaler.kubernetes.io/* shape for scale from zero. */
  cpu?: string;
  memory?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

function groupMeta(o: GroupOptions) {
  return {
    name: o.name, namespace: o.namespace,
    labels: { 'cluster.x-k8s.io/cluster-name': o.clusterName ?? 'test', ...o.labels },
    annotations: {
      [MIN]: String(o.min), [MAX]: String(o.max),
      'capacity.cluster-autoscaler.kubernetes.io/cpu': o.cpu ?? '4',
      'capacity.cluster-autoscaler.kubernetes.io/memory': o.memory ?? '16Gi',
      'capacity.cluster-autoscaler.kubernetes.io/maxPods': '110',
      ...o.annotations,
    },
  };
}

export function machineDeployment(o: GroupOptions): UnstructuredObject {
  const clusterName = o.clusterName ?? 'test';
  return {
    apiVersion: CAPI, kind: 'MachineDeployment', metadata: groupMeta(o),
    spec: {
      clusterName, replicas: o.replicas,
      selector: { matchLabels: { 'cluster.x-k8s.io/deployment-name': o.name } },
      template: {
        metadata: { labels: { 'cluster.x-k8s.io/deployment-name': o.name } },
        spec: machineSpec(clusterName),
      },
    },
  };
}

export function machinePool(o: GroupOptions): UnstructuredObject {
  const clusterName = o.clusterName ?? 'test';
  return {
    apiVersion: CAPI, kind: 'MachinePool', metadata: groupMeta(o),
    spec: { clusterName, replicas: o.replicas, template: { spec: machineSpec(clusterName) } },
  };
}

export function machine(namespace: string, name: string, owner: { kind: string; name: string; uid: string }, clusterName = 'test'): UnstructuredObject {
  return {
    apiVersion: CAPI, kind: 'Machine',
    metadata: {
      name, namespace,
      labels: { 'cluster.x-k8s.io/cluster-name': clusterName, 'cluster.x-k8s.io/deployment-name': owner.name },
      ownerReferences: [{ apiVersion: CAPI, kind: owner.kind, name: owner.name, uid: owner.uid, controller: true }],
    },
    spec: machineSpec(clusterName),
  };
}

export function pendingPod(namespace: string, name: string, cpu: string, memory = '128Mi', labels: Record<string, string> = {}) {
  return {
    apiVersion: 'v1', kind: 'Pod',
    metadata: { name, namespace, labels: { app: 'burst', ...labels } },
    spec: {
      containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.10', resources: { requests: { cpu, memory } } }],
      tolerations: [{ key: 'kwok.x-k8s.io/node', operator: 'Exists', effect: 'NoSchedule' }],
    },
  };
}

/** A Deployment of kwok-tolerating pods with `cpu` each (kube-controller-manager recreates what is evicted). */
export function deployment(namespace: string, name: string, replicas: number, cpu: string) {
  return {
    apiVersion: 'apps/v1', kind: 'Deployment', metadata: { namespace, name },
    spec: {
      replicas, selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: {
          terminationGracePeriodSeconds: 1,
          tolerations: [{ key: 'kwok.x-k8s.io/node', operator: 'Exists', effect: 'NoSchedule' }],
          containers: [{ name: 'c', image: 'fake', resources: { requests: { cpu, memory: '64Mi' } } }],
        },
      },
    },
  };
}
