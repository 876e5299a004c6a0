import { stringify } from 'yaml';
import { buildSnapshot, type SnapshotIssue } from '../../../src/cluster/build-snapshot.js';
import { loadObjects } from '../../../src/cluster/load-objects.js';
import { ffd } from '../../../src/packing/ffd.js';
import { solve } from '../../../src/packing/solve.js';
import type { Plan } from '../../../src/packing/plan.js';

/** DRA objects as kubectl prints them, and both packers' plans for them (solve-dra and claim-units tests). */

export const DRIVER = 'gpu.example.com';
export const R = 'resource.k8s.io/v1';

export function md(name: string, annotations: Record<string, string>, replicas = 0): object {
  return {
    apiVersion: 'cluster.x-k8s.io/v1beta1', kind: 'MachineDeployment',
    metadata: {
      name, namespace: 'default',
      annotations: {
        'cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size': '0', 'cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size': '10',
        'capacity.cluster-autoscaler.kubernetes.io/cpu': '16', 'capacity.cluster-autoscaler.kubernetes.io/memory': '64Gi', ...annotations,
      },
    },
    spec: {
      clusterName: 'c', replicas, selector: { matchLabels: { 'cluster.x-k8s.io/deployment-name': name } },
      template: { metadata: { labels: { 'cluster.x-k8s.io/deployment-name': name } }, spec: { clusterName: 'c', bootstrap: {}, infrastructureRef: { apiGroup: 'infrastructure.cluster.x-k8s.io', kind: 'DockerMachineTemplate', name } } },
    },
  };
}
export const deviceClass = (name: string, expr = `device.driver == "${DRIVER}"`) => ({ apiVersion: R, kind: 'DeviceClass', metadata: { name }, spec: { selectors: [{ cel: { expression: expr } }] } });
export const template = (name: string, count: number, selectors: string[] = [], cls = 'gpu') => ({
  apiVersion: R, kind: 'ResourceClaimTemplate', metadata: { name, namespace: 'default' },
  spec: { spec: { devices: { requests: [{ name: 'gpu', exactly: { deviceClassName: cls, count, selectors: selectors.map((expression) => ({ cel: { expression } })) } }] } } },
});
export const claim = (name: string, count: number, status?: object) => ({
  apiVersion: R, kind: 'ResourceClaim', metadata: { name, namespace: 'default' },
  spec: { devices: { requests: [{ name: 'gpu', exactly: { deviceClassName: 'gpu', count } }] } }, ...(status ? { status } : {}),
});
export function pod(name: string, claims: Array<{ name: string; resourceClaimTemplateName?: string; resourceClaimName?: string }>, o: { cpu?: string; owner?: string; nodeName?: string } = {}): object {
  return {
    apiVersion: 'v1', kind: 'Pod',
    metadata: { name, namespace: 'default', uid: `uid-${name}`, ...(o.owner ? { ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: o.owner, uid: o.owner, controller: true }] } : {}) },
    spec: { ...(o.nodeName ? { nodeName: o.nodeName } : {}), containers: [{ name: 'c', image: 'x', resources: { requests: { cpu: o.cpu ?? '1', memory: '1Gi' } } }], resourceClaims: claims },
    status: { phase: o.nodeName ? 'Running' : 'Pending' },
  };
}
export function node(name: string, cpu = '16'): object {
  return {
    apiVersion: 'v1', kind: 'Node', metadata: { name, labels: { 'kubernetes.io/hostname': name } },
    status: { allocatable: { cpu, memory: '64Gi', pods: '110' }, conditions: [{ type: 'Ready', status: 'True' }] },
  };
}
export function slice(nodeName: string, devices: Array<{ name: string; model?: string; memory?: string }>, o: { name?: string; pool?: string } = {}): object {
  return {
    apiVersion: R, kind: 'ResourceSlice', metadata: { name: o.name ?? `${nodeName}-${DRIVER}` },
    spec: {
      driver: DRIVER, nodeName, pool: { name: o.pool ?? nodeName, generation: 1, resourceSliceCount: 1 },
      devices: devices.map((d) => ({
        name: d.name,
        attributes: d.model ? { model: { string: d.model } } : {},
        capacity: d.memory ? { memory: { value: d.memory } } : {},
      })),
    },
  };
}
export const gpus = (n: number, model?: string, memory?: string) => Array.from({ length: n }, (_, i) => ({ name: `gpu-${i}`, ...(model ? { model } : {}), ...(memory ? { memory } : {}) }));

export function plan(objects: object[], packer: 'solve' | 'ffd' = 'solve'): { plan: Plan; issues: SnapshotIssue[] } {
  const issues: SnapshotIssue[] = [];
  const s = buildSnapshot(loadObjects(objects.map((o) => stringify(o)).join('---\n')), { strict: false, onIssue: (i) => issues.push(i) });
  return { plan: packer === 'solve' ? solve(s) : ffd(s), issues };
}
export const scaled = (p: Plan) => Object.fromEntries(p.scaleUps.map((u) => [u.name, u.to - u.from]));
export const placedOn = (p: Plan) => Object.fromEntries(p.placements.map((x) => [x.pod, 'node' in x ? x.node : `${x.group.split('/').pop()}#${x.newNode}`]));

