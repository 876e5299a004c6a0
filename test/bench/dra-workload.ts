import type { KubernetesObject } from '@kubernetes/client-node';
import { applyDra, TEMPLATE_RESOURCE_SLICES_ANNOTATION, type DraIssue } from '../../src/cluster/dra-snapshot.js';
import type { ClusterSnapshot, NodeGroup, SnapshotNode } from '../../src/cluster/snapshot.js';
import { DRA_DRIVER_ANNOTATION, GPU_COUNT_ANNOTATION } from '../../src/api/capacity-annotations.js';
import { CPU, MEMORY, PODS, type Resources } from '../../src/scheduling/resources.js';
import type { PodClaimRef, SchedulingPod } from '../../src/scheduling/scheduling-pod.js';
import { CAPACITY_TYPE, HOSTNAME, INSTANCE_TYPE, ZONE, instanceTypeGroups, rng } from './workload.js';

/**
 * The `dra` mix of `npm run bench`: a GPU cluster as a DRA driver (NVIDIA's, whose
 * attribute names it uses) and the resourceclaim controller leave it, in the objects
 * kube-apiserver serves, resolved by the snapshot builder's DRA step (applyDra: the CEL
 * selectors are evaluated there) and then packed. The pending pods all claim GPUs:
 *
 * - 40% one GPU of DeviceClass `gpu.nvidia.com` (selector on the driver), from a template;
 * - 20% one A100 with at least 80Gi (request selectors on productName and capacity);
 * - 15% four GPUs of DeviceClass `hopper` (class selectors on the driver and architecture);
 * - 15% two GPUs whose driverVersion is above 550 (a semver selector);
 * - 10% in fives sharing one ResourceClaim (one GPU of `gpu.nvidia.com`), as inference replicas
 *   of one workload share a GPU (the five have the same requests).
 *
 * Half the template pods' claims exist already (generated, named in status), half not yet.
 * Node groups: Karpenter's 2,000 CPU-only groups (workload.ts) and five GPU types offered
 * as Karpenter's are (spot in zones 1-2, on-demand in 1-3): three with a template
 * ResourceSlice (`headroom.dev/template-resource-slices`), two with only Cluster
 * Autoscaler's `dra-driver` + `gpu-count` (whose devices no attribute selector matches).
 * Existing nodes: one GPU node per 25 pending pods (A100, H100 and L4), each with its
 * ResourceSlice of devices with unique uuid/index/minor, half their GPUs held by running
 * pods' allocated claims.
 */

const DRIVER = 'gpu.nvidia.com';
const R = 'resource.k8s.io/v1';
const GiB = 2 ** 30;
const NS = 'bench';

interface GpuType {
  name: string; cpu: number; memGiB: number; price: number; gpus: number;
  /** Absent: only CA's dra-driver + gpu-count annotations describe its devices. */
  device?: { productName: string; architecture: string; memory: string; cc: string };
}
const GPU_TYPES: GpuType[] = [
  { name: 'p4d', cpu: 96, memGiB: 1152, price: 32.77, gpus: 8, device: { productName: 'NVIDIA A100-SXM4-80GB', architecture: 'Ampere', memory: '80Gi', cc: '8.0.0' } },
  { name: 'p5', cpu: 192, memGiB: 2048, price: 98.32, gpus: 8, device: { productName: 'NVIDIA H100 80GB HBM3', architecture: 'Hopper', memory: '80Gi', cc: '9.0.0' } },
  { name: 'g6', cpu: 48, memGiB: 192, price: 6.68, gpus: 4, device: { productName: 'NVIDIA L4', architecture: 'Ada Lovelace', memory: '24Gi', cc: '8.9.0' } },
  { name: 'g5', cpu: 48, memGiB: 192, price: 8.14, gpus: 4 },
  { name: 'g4dn', cpu: 8, memGiB: 32, price: 1.2, gpus: 1 },
];
const OFFERINGS: Array<['spot' | 'on-demand', string]> = [
  ['spot', 'test-zone-1'], ['spot', 'test-zone-2'], ['on-demand', 'test-zone-1'], ['on-demand', 'test-zone-2'], ['on-demand', 'test-zone-3'],
];

function device(t: GpuType, node: string, i: number): object {
  const d = t.device!;
  return {
    name: `gpu-${i}`,
    attributes: {
      type: { string: 'gpu' }, uuid: { string: `GPU-${node}-${i}` }, index: { int: i }, minor: { int: i },
      productName: { string: d.productName }, brand: { string: 'Nvidia' }, architecture: { string: d.architecture },
      cudaComputeCapability: { version: d.cc }, driverVersion: { version: '560.35.3' }, cudaDriverVersion: { version: '12.6.0' },
    },
    capacity: { memory: { value: d.memory } },
  };
}

function slice(name: string, nodeName: string, t: GpuType): KubernetesObject {
  return {
    apiVersion: R, kind: 'ResourceSlice', metadata: { name },
    spec: { driver: DRIVER, nodeName, pool: { name: nodeName, generation: 1, resourceSliceCount: 1 }, devices: Array.from({ length: t.gpus }, (_, i) => device(t, nodeName, i)) },
  } as KubernetesObject;
}

const claimSpec = (count: number, deviceClassName: string, selectors: string[] = []) => ({
  devices: { requests: [{ name: 'gpu', exactly: { deviceClassName, count, ...(selectors.length ? { selectors: selectors.map((expression) => ({ cel: { expression } })) } : {}) } }] },
});

interface Kind { template?: string; spec: ReturnType<typeof claimSpec>; share?: number }
const KINDS: Array<[number, Kind]> = [
  [0.4, { template: 'one-gpu', spec: claimSpec(1, DRIVER) }],
  [0.2, { template: 'a100-80g', spec: claimSpec(1, DRIVER, [`device.attributes["${DRIVER}"].productName.startsWith("NVIDIA A100") && device.capacity["${DRIVER}"].memory.compareTo(quantity("80Gi")) >= 0`]) }],
  [0.15, { template: 'hopper-x4', spec: claimSpec(4, 'hopper') }],
  [0.15, { template: 'recent-driver-x2', spec: claimSpec(2, DRIVER, [`device.attributes["${DRIVER}"].driverVersion.isGreaterThan(semver("550.0.0"))`]) }],
  [0.1, { spec: claimSpec(1, DRIVER), share: 5 }],
];

export interface DraBenchInput {
  objects: { resourceClaims: KubernetesObject[]; resourceClaimTemplates: KubernetesObject[]; deviceClasses: KubernetesObject[]; resourceSlices: KubernetesObject[] };
  groups: NodeGroup[];
  nodes: SnapshotNode[];
  pendingPods: SchedulingPod[];
  groupAnnotations: Map<string, Record<string, string>>;
  readyNodesOfGroup: Map<string, string[]>;
}

const CPUS = [1000, 2000, 4000, 8000];
const MEMS = [4, 8, 16, 32];

function schedulingPod(name: string, requests: Resources, resourceClaims: PodClaimRef[], labels: Record<string, string>, kind: string): SchedulingPod {
  return {
    key: `${NS}/${name}`, namespace: NS, name, uid: `uid-${name}`, labels,
    equivalenceKey: JSON.stringify([kind, requests, labels]),
    requests, priority: 0, nodeSelector: {}, tolerations: [], topologySpreadConstraints: [], hostPorts: [], claims: [], resourceClaims,
  };
}

function generatedClaim(pod: string, spec: object, status?: object): KubernetesObject {
  return {
    apiVersion: R, kind: 'ResourceClaim',
    metadata: { name: `${pod}-gpu`, namespace: NS, annotations: { 'resource.kubernetes.io/pod-claim-name': 'gpu' }, ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: pod, uid: `uid-${pod}`, controller: true }] },
    spec, ...(status ? { status } : {}),
  } as KubernetesObject;
}

export function draBenchInput(count: number, seed = 42): DraBenchInput {
  const r = rng(seed);
  const pick = <T>(xs: T[]): T => xs[Math.floor(r() * xs.length)]!;
  const objects: DraBenchInput['objects'] = {
    resourceClaims: [], resourceClaimTemplates: [], resourceSlices: [],
    deviceClasses: [
      { apiVersion: R, kind: 'DeviceClass', metadata: { name: DRIVER }, spec: { selectors: [{ cel: { expression: `device.driver == "${DRIVER}"` } }] } },
      { apiVersion: R, kind: 'DeviceClass', metadata: { name: 'hopper' }, spec: { selectors: [{ cel: { expression: `device.driver == "${DRIVER}"` } }, { cel: { expression: `device.attributes["${DRIVER}"].architecture == "Hopper"` } }] } },
    ] as unknown as KubernetesObject[],
  };
  for (const [, k] of KINDS) {
    if (k.template) objects.resourceClaimTemplates.push({ apiVersion: R, kind: 'ResourceClaimTemplate', metadata: { name: k.template, namespace: NS }, spec: { spec: k.spec } } as KubernetesObject);
  }

  // Groups: Karpenter's CPU types, then the GPU types.
  const groups = instanceTypeGroups();
  const groupAnnotations = new Map<string, Record<string, string>>();
  const groupsOfType = new Map<string, NodeGroup[]>();
  for (const t of GPU_TYPES) {
    if (t.device) objects.resourceSlices.push(slice(`template-${t.name}`, `template-${t.name}`, t));
    for (const [capacityType, zone] of OFFERINGS) {
      const name = `${t.name}-${capacityType}-${zone}`;
      const g: NodeGroup = {
        id: `MachineDeployment/${NS}/${name}`, kind: 'MachineDeployment', namespace: NS, name, clusterName: 'bench',
        minSize: 0, maxSize: 1_000_000, replicas: 0,
        template: { allocatable: { [CPU]: t.cpu * 1000, [MEMORY]: t.memGiB * GiB, [PODS]: 110 }, labels: { [ZONE]: zone, [CAPACITY_TYPE]: capacityType, [INSTANCE_TYPE]: t.name }, taints: [] },
        pricePerHour: capacityType === 'spot' ? t.price * 0.4 : t.price, capacityType, daemonSetOverhead: {}, weight: 0,
      };
      groups.push(g);
      groupAnnotations.set(g.id, t.device ? { [TEMPLATE_RESOURCE_SLICES_ANNOTATION]: `template-${t.name}` } : { [DRA_DRIVER_ANNOTATION]: DRIVER, [GPU_COUNT_ANNOTATION]: String(t.gpus) });
      groupsOfType.set(t.name, [...(groupsOfType.get(t.name) ?? []), g]);
    }
  }

  // Existing GPU nodes: A100, H100, L4 in 2:1:1, half their GPUs held by running pods.
  const nodes: SnapshotNode[] = [];
  const readyNodesOfGroup = new Map<string, string[]>();
  const existing = Math.max(1, Math.floor(count / 25));
  for (let n = 0; n < existing; n++) {
    const t = GPU_TYPES[[0, 0, 1, 2][n % 4]!]!;
    const g = groupsOfType.get(t.name)![n % OFFERINGS.length]!;
    g.replicas++;
    const name = `${t.name}-node-${n}`;
    objects.resourceSlices.push(slice(`${name}-${DRIVER}`, name, t));
    readyNodesOfGroup.set(g.id, [...(readyNodesOfGroup.get(g.id) ?? []), name]);
    const pods: SchedulingPod[] = [];
    for (let i = 0; i < t.gpus / 2; i++) {
      const pod = `${name}-run-${i}`;
      const allocation = {
        devices: { results: [{ request: 'gpu', driver: DRIVER, pool: name, device: `gpu-${i}` }] },
        nodeSelector: { nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: [name] }] }] },
      };
      objects.resourceClaims.push(generatedClaim(pod, claimSpec(1, DRIVER), { allocation, reservedFor: [{ resource: 'pods', name: pod, uid: `uid-${pod}` }] }));
      const p = schedulingPod(pod, { [CPU]: 4000, [MEMORY]: 16 * GiB, [PODS]: 1 }, [{ name: 'gpu', template: 'one-gpu', claim: `${pod}-gpu` }], { app: 'running' }, 'running');
      pods.push({ ...p, nodeName: name });
    }
    nodes.push({
      name, groupId: g.id, labels: { ...g.template.labels, [HOSTNAME]: name }, taints: [], allocatable: { ...g.template.allocatable },
      pods, inFlight: false, unschedulable: false, machine: { namespace: NS, name: `${name}-machine`, leaving: false },
    });
  }

  // Pending pods.
  const pendingPods: SchedulingPod[] = [];
  let sharedClaim: { name: string; left: number; requests: Resources } | undefined;
  for (let i = 0; i < count; i++) {
    const x = (i + 0.5) / count;
    let acc = 0;
    let k = KINDS[KINDS.length - 1]![1];
    for (const [share, kind] of KINDS) { acc += share; if (x < acc) { k = kind; break; } }
    const name = `pod-${i}`;
    let requests: Resources = { [CPU]: pick(CPUS), [MEMORY]: pick(MEMS) * GiB, [PODS]: 1 };
    let ref: PodClaimRef;
    let kindName: string;
    if (k.template) {
      ref = { name: 'gpu', template: k.template };
      // The resourceclaim controller has made half the claims so far.
      if (r() < 0.5) {
        objects.resourceClaims.push(generatedClaim(name, k.spec));
        ref.claim = `${name}-gpu`;
      }
      kindName = k.template;
    } else {
      if (!sharedClaim || sharedClaim.left === 0) {
        // The pods of one claim are replicas of one workload: the same requests.
        sharedClaim = { name: `shared-${i}`, left: k.share!, requests };
        objects.resourceClaims.push({ apiVersion: R, kind: 'ResourceClaim', metadata: { name: sharedClaim.name, namespace: NS }, spec: k.spec } as KubernetesObject);
      }
      sharedClaim.left--;
      requests = sharedClaim.requests;
      ref = { name: 'gpu', claim: sharedClaim.name };
      kindName = 'shared';
    }
    pendingPods.push(schedulingPod(name, requests, [ref], { app: kindName }, kindName));
  }
  return { objects, groups, nodes, pendingPods, groupAnnotations, readyNodesOfGroup };
}

/** The snapshot builder's DRA step on the input: what the solvers get. Throws on any issue (the workload has none). */
export function draBenchSnapshot(input: DraBenchInput): ClusterSnapshot {
  const issues: DraIssue[] = [];
  const out = applyDra(input.objects, input, (i) => issues.push(i));
  if (issues.length) throw new Error(`dra bench workload: ${issues[0]!.message}`);
  return {
    groups: out.groups, nodes: out.nodes, pendingPods: out.pendingPods, ...(out.dra ? { dra: out.dra } : {}),
    volumes: { persistentVolumes: {}, claims: {}, storageClasses: {} }, namespaceLabels: { [NS]: {} }, limits: {}, disruption: {}, templates: {},
  };
}
