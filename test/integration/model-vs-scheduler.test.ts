import { expect } from 'chai';
import type { KubeConfig, V1Node, V1Pod } from '@kubernetes/client-node';
import { stringify } from 'yaml';
import { buildSnapshot } from '../../src/cluster/build-snapshot.js';
import { loadObjects } from '../../src/cluster/load-objects.js';
import { solve } from '../../src/packing/solve.js';
import { kubeRequest } from '../harness/kube-request.js';
import { createTestNamespace, deleteTestNamespace } from '../harness/namespace.js';
import { eventually, isNodeReady } from '../harness/wait.js';
import { sharedControlPlane } from './hooks.js';

/**
 * Cross-check of the whole model (buildSnapshot + the solver) with the real
 * kube-scheduler 1.36 on what Kubernetes 1.36 clusters run: DRA devices, CSI attach
 * limits, pod-level requests, a resize in progress, and preemption. Each scenario is one
 * kwok node (fenced by a private taint) with its state (ResourceSlices written as a DRA
 * driver's kubelet plugin would, a CSINode as the kubelet would, bound pods), and one
 * new pod pinned to it. The model's verdict comes from the objects as listed just
 * before the pod is created, plus the pod: placed on the node, or not. For pods
 * kube-scheduler places by preemption, the model's answer is read once the scheduler
 * has nominated the node: left alone as nominated (no new node), which is agreement.
 */

const R = 'resource.k8s.io/v1';
const FENCE = 'crosscheck.headroom.dev/fence';
const HOSTNAME = 'kubernetes.io/hostname';
const PAUSE = 'registry.k8s.io/pause:3.10';
const HOLD = 'crosscheck.headroom.dev/hold';

interface Scenario {
  name: string;
  /** Node allocatable cpu (memory 16Gi, pods 110). */
  cpu?: string;
  /** Devices of the node's ResourceSlice (driver DRIVER), with a `model` attribute. */
  gpus?: { count: number; model: string };
  /** CSINode limit for the EBS-like driver. */
  csiLimit?: number;
  /** State before the pod: bound pods (created through the scheduler when `scheduled`). */
  before?: Array<{ name: string; spec: Record<string, unknown>; scheduled?: boolean; hold?: boolean; resizeTo?: string }>;
  pod: Record<string, unknown>;
  /** Both verdicts must be this, so each scenario means something on its own. */
  expect: boolean;
  /** kube-scheduler places it by preemption: compare once it is nominated. */
  preempts?: boolean;
}

const c = (cpu: string, extra: Record<string, unknown> = {}) => ({ name: 'c', image: PAUSE, resources: { requests: { cpu, memory: '64Mi' } }, ...extra });

describe('the model (snapshot + solver) agrees with the real kube-scheduler on DRA, CSI limits, pod-level requests, resize and preemption', function () {
  let kc: KubeConfig;
  let ns: string;
  let driver: string;
  const cluster: Array<[string, string]> = [];

  before(async function () {
    this.timeout(180_000);
    kc = (await sharedControlPlane()).kubeConfig();
    ns = await createTestNamespace(kc, 'crosscheck');
    driver = `gpu.${ns}.example.com`;
  });

  after(async function () {
    this.timeout(60_000);
    if (!kc) return;
    const pods = await kubeRequest<{ items: V1Pod[] }>(kc, 'GET', `/api/v1/namespaces/${ns}/pods`).catch(() => ({ items: [] as V1Pod[] }));
    for (const p of pods.items) if (p.metadata?.finalizers?.length) await kubeRequest(kc, 'PATCH', `/api/v1/namespaces/${ns}/pods/${p.metadata.name}`, { metadata: { finalizers: null } }).catch(() => undefined);
    await deleteTestNamespace(kc, ns);
    for (const [path, name] of cluster) await kubeRequest(kc, 'DELETE', `${path}/${name}`).catch(() => undefined);
  });

  it('agrees on every scenario', async function () {
    this.timeout(240_000);
    const post = <T = unknown>(path: string, body: unknown) => kubeRequest<T>(kc, 'POST', path, body);
    const cls = (suffix: string) => `${suffix}-${ns}`;
    const pc = (name: string, value: number) => post('/apis/scheduling.k8s.io/v1/priorityclasses', { metadata: { name: cls(name) }, value }).then(() => cluster.push(['/apis/scheduling.k8s.io/v1/priorityclasses', cls(name)]));
    await pc('low', 0);
    await pc('expendable', -100);
    await pc('high', 1000);
    await post(`/apis/${R}/deviceclasses`, { metadata: { name: cls('gpu') }, spec: { selectors: [{ cel: { expression: `device.driver == "${driver}"` } }] } });
    await post(`/apis/${R}/deviceclasses`, { metadata: { name: cls('nowhere') }, spec: { selectors: [{ cel: { expression: 'device.driver == "nothing.example.com"' } }] } });
    cluster.push([`/apis/${R}/deviceclasses`, cls('gpu')], [`/apis/${R}/deviceclasses`, cls('nowhere')]);
    const template = (name: string, count: number, selector?: string, deviceClassName = cls('gpu')) => post(`/apis/${R}/namespaces/${ns}/resourceclaimtemplates`, {
      metadata: { name }, spec: { spec: { devices: { requests: [{ name: 'g', exactly: { deviceClassName, count, ...(selector ? { selectors: [{ cel: { expression: selector } }] } : {}) } }] } } },
    });
    await template('two', 2);
    await template('three', 3);
    await template('a100', 1, `device.attributes["${driver}"].model == "a100"`);
    await template('h100', 1, `device.attributes["${driver}"].model == "h100"`);
    await template('elsewhere', 1, undefined, cls('nowhere'));
    await post(`/apis/${R}/namespaces/${ns}/resourceclaims`, { metadata: { name: 'shared' }, spec: { devices: { requests: [{ name: 'g', exactly: { deviceClassName: cls('gpu'), count: 2 } }] } } });
    const ebs = `ebs.${ns}.example.com`;
    await post('/apis/storage.k8s.io/v1/storageclasses', { metadata: { name: cls('ebs') }, provisioner: ebs, volumeBindingMode: 'WaitForFirstConsumer' });
    cluster.push(['/apis/storage.k8s.io/v1/storageclasses', cls('ebs')]);
    const boundClaim = async (name: string) => {
      const pv = `${ns}-${name}`;
      await post('/api/v1/persistentvolumes', {
        metadata: { name: pv },
        spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], storageClassName: '', csi: { driver: ebs, volumeHandle: `vol-${pv}` }, claimRef: { namespace: ns, name } },
      });
      cluster.push(['/api/v1/persistentvolumes', pv]);
      await post(`/api/v1/namespaces/${ns}/persistentvolumeclaims`, {
        metadata: { name, annotations: { 'pv.kubernetes.io/bind-completed': 'yes' } },
        spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, storageClassName: '', volumeName: pv },
      });
      return name;
    };
    const unboundClaim = async (name: string) => {
      await post(`/api/v1/namespaces/${ns}/persistentvolumeclaims`, { metadata: { name }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, storageClassName: cls('ebs') } });
      return name;
    };
    const vol = (claimName: string) => ({ volumes: [{ name: 'data', persistentVolumeClaim: { claimName } }] });
    const gpuPod = (claim: { template?: string; claim?: string }) => ({
      resourceClaims: [{ name: 'g', ...(claim.template ? { resourceClaimTemplateName: claim.template } : { resourceClaimName: claim.claim }) }],
      containers: [c('100m', { resources: { requests: { cpu: '100m', memory: '64Mi' }, claims: [{ name: 'g' }] } })],
    });

    const scenarios: Scenario[] = [
      // DRA: counts, attributes, a shared claim, and a claim no node can satisfy.
      { name: 'DRA: 2 GPUs of 2', gpus: { count: 2, model: 'a100' }, pod: gpuPod({ template: 'two' }), expect: true },
      { name: 'DRA: 3 GPUs of 2', gpus: { count: 2, model: 'a100' }, pod: gpuPod({ template: 'three' }), expect: false },
      { name: 'DRA: 2 GPUs, 1 taken by a bound pod', gpus: { count: 2, model: 'a100' }, before: [{ name: 'holder', spec: gpuPod({ template: 'a100' }), scheduled: true }], pod: gpuPod({ template: 'two' }), expect: false },
      { name: 'DRA: selector model == a100 on a100s', gpus: { count: 1, model: 'a100' }, pod: gpuPod({ template: 'a100' }), expect: true },
      { name: 'DRA: selector model == h100 on a100s', gpus: { count: 1, model: 'a100' }, pod: gpuPod({ template: 'h100' }), expect: false },
      { name: 'DRA: shared claim, allocated on the node to a bound pod, node has no free device', gpus: { count: 2, model: 'a100' }, before: [{ name: 'sharer', spec: gpuPod({ claim: 'shared' }), scheduled: true }], pod: gpuPod({ claim: 'shared' }), expect: true },
      { name: 'DRA: a class no node offers', gpus: { count: 2, model: 'a100' }, pod: gpuPod({ template: 'elsewhere' }), expect: false },
      // CSI attach limits (the CSINode's count).
      { name: 'CSI: second volume on a node that attaches 1', csiLimit: 1, before: [{ name: 'v1', spec: { containers: [c('100m')], ...vol('pvc-a1') } }], pod: { containers: [c('100m')], ...vol('pvc-a2') }, expect: false },
      { name: 'CSI: second volume on a node that attaches 2', csiLimit: 2, before: [{ name: 'v1', spec: { containers: [c('100m')], ...vol('pvc-b1') } }], pod: { containers: [c('100m')], ...vol('pvc-b2') }, expect: true },
      { name: 'CSI: unbound WaitForFirstConsumer claim on a full node', csiLimit: 1, before: [{ name: 'v1', spec: { containers: [c('100m')], ...vol('pvc-c1') } }], pod: { containers: [c('100m')], ...vol('pvc-c2') }, expect: false },
      // Pod-level requests (KEP 2837): the containers request nothing.
      { name: 'pod-level requests: 3 cpu beside 2 of 4', cpu: '4', before: [{ name: 'b', spec: { containers: [c('2')] } }], pod: { resources: { requests: { cpu: '3', memory: '64Mi' } }, containers: [{ name: 'c', image: PAUSE }] }, expect: false },
      { name: 'pod-level requests: 1 cpu beside 2 of 4', cpu: '4', before: [{ name: 'b', spec: { containers: [c('2')] } }], pod: { resources: { requests: { cpu: '1', memory: '64Mi' } }, containers: [{ name: 'c', image: PAUSE }] }, expect: true },
      // A resize down not yet done: the pod still holds 3 of 4 cpu.
      { name: 'resize in progress (3 -> 1 cpu): 2 more do not fit', cpu: '4', before: [{ name: 'r', spec: { containers: [c('3')] }, resizeTo: '1' }], pod: { containers: [c('2')] }, expect: false },
      // Preemption.
      { name: 'preemption of a priority-0 pod by a priority-1000 one', cpu: '4', before: [{ name: 'victim', spec: { priorityClassName: cls('low'), containers: [c('3')] }, hold: true }], pod: { priorityClassName: cls('high'), containers: [c('2')] }, expect: true, preempts: true },
      { name: 'preemptionPolicy Never does not preempt', cpu: '4', before: [{ name: 'victim', spec: { priorityClassName: cls('low'), containers: [c('3')] } }], pod: { priorityClassName: cls('high'), preemptionPolicy: 'Never', containers: [c('2')] }, expect: false },
      { name: 'an expendable (-100) pod is preempted by a priority-0 one', cpu: '4', before: [{ name: 'victim', spec: { priorityClassName: cls('expendable'), containers: [c('3')] } }], pod: { priorityClassName: cls('low'), containers: [c('2')] }, expect: true },
    ];
    // PriorityClasses with preemptionPolicy are set on the pod's class in 1.36, not the pod: use a class.
    await post('/apis/scheduling.k8s.io/v1/priorityclasses', { metadata: { name: cls('high-never') }, value: 1000, preemptionPolicy: 'Never' });
    cluster.push(['/apis/scheduling.k8s.io/v1/priorityclasses', cls('high-never')]);
    for (const s of scenarios) {
      if (s.pod.preemptionPolicy) { delete s.pod.preemptionPolicy; s.pod.priorityClassName = cls('high-never'); }
    }
    await boundClaim('pvc-a1'); await boundClaim('pvc-a2'); await boundClaim('pvc-b1'); await boundClaim('pvc-b2'); await boundClaim('pvc-c1');
    await unboundClaim('pvc-c2');

    // Nodes, their slices and CSINodes.
    const nodeName = (i: number) => `${ns}-${i}`;
    await Promise.all(scenarios.map(async (s, i) => {
      const name = nodeName(i);
      const allocatable = { cpu: s.cpu ?? '8', memory: '16Gi', pods: '110' };
      await post<V1Node>('/api/v1/nodes', {
        metadata: { name, labels: { [HOSTNAME]: name }, annotations: { 'kwok.x-k8s.io/node': 'fake' } },
        spec: { taints: [{ key: FENCE, value: ns, effect: 'NoSchedule' }] }, status: { allocatable, capacity: allocatable },
      });
      cluster.push(['/api/v1/nodes', name]);
      if (s.gpus) {
        await post(`/apis/${R}/resourceslices`, {
          metadata: { name: `${name}-gpu` },
          spec: {
            driver, nodeName: name, pool: { name, generation: 1, resourceSliceCount: 1 },
            devices: Array.from({ length: s.gpus.count }, (_, d) => ({ name: `gpu-${d}`, attributes: { model: { string: s.gpus!.model } } })),
          },
        });
        cluster.push([`/apis/${R}/resourceslices`, `${name}-gpu`]);
      }
      if (s.csiLimit !== undefined) {
        await post('/apis/storage.k8s.io/v1/csinodes', { metadata: { name }, spec: { drivers: [{ name: ebs, nodeID: name, allocatable: { count: s.csiLimit } }] } });
        cluster.push(['/apis/storage.k8s.io/v1/csinodes', name]);
      }
    }));
    await eventually('cross-check nodes Ready', async () => {
      const nodes = await Promise.all(scenarios.map((_, i) => kubeRequest<V1Node>(kc, 'GET', `/api/v1/nodes/${nodeName(i)}`)));
      return nodes.every(isNodeReady);
    }, { timeoutMs: 60_000 });

    // State before the pods: bound pods, through the scheduler (DRA allocation) or placed directly.
    const pinned = (spec: Record<string, unknown>, node: string) => ({
      ...spec, nodeSelector: { [HOSTNAME]: node }, tolerations: [{ key: FENCE, operator: 'Equal', value: ns, effect: 'NoSchedule' }],
    });
    for (const [i, s] of scenarios.entries()) {
      for (const b of s.before ?? []) {
        const name = `s${i}-${b.name}`;
        const spec = b.scheduled ? pinned(b.spec, nodeName(i)) : { ...pinned(b.spec, nodeName(i)), nodeName: nodeName(i) };
        await post(`/api/v1/namespaces/${ns}/pods`, { metadata: { name, ...(b.hold ? { finalizers: [HOLD] } : {}) }, spec });
      }
    }
    await eventually('the bound pods Running', async () => {
      const { items } = await kubeRequest<{ items: V1Pod[] }>(kc, 'GET', `/api/v1/namespaces/${ns}/pods`);
      return items.length === scenarios.reduce((n, s) => n + (s.before?.length ?? 0), 0) && items.every((p) => p.status?.phase === 'Running');
    }, { timeoutMs: 90_000, intervalMs: 500 });
    // The resize: the kubelet reports what the container still has, then the spec asks for less.
    for (const [i, s] of scenarios.entries()) {
      for (const b of s.before ?? []) {
        if (!b.resizeTo) continue;
        const name = `s${i}-${b.name}`;
        const live = await kubeRequest<V1Pod>(kc, 'GET', `/api/v1/namespaces/${ns}/pods/${name}`);
        const held = (b.spec.containers as Array<{ resources: { requests: Record<string, string> } }>)[0]!.resources.requests;
        const statuses = (live.status?.containerStatuses ?? []).map((cs) => ({ ...cs, allocatedResources: held, resources: { requests: held } }));
        await kubeRequest(kc, 'PATCH', `/api/v1/namespaces/${ns}/pods/${name}/status`, { status: { containerStatuses: statuses } }, 'application/strategic-merge-patch+json');
        await kubeRequest(kc, 'PATCH', `/api/v1/namespaces/${ns}/pods/${name}/resize`, { spec: { containers: [{ name: 'c', resources: { requests: { cpu: b.resizeTo } } }] } }, 'application/strategic-merge-patch+json');
        await eventually('the resize recorded', async () => {
          const p = await kubeRequest<V1Pod>(kc, 'GET', `/api/v1/namespaces/${ns}/pods/${name}`);
          return p.spec?.containers[0]?.resources?.requests?.cpu === b.resizeTo && p.status?.containerStatuses?.[0]?.resources?.requests?.cpu === held.cpu;
        }, { timeoutMs: 20_000 });
      }
    }
    // DRA claims of the bound pods allocated.
    await eventually('bound pods\' claims allocated', async () => {
      const { items } = await kubeRequest<{ items: Array<{ status?: { allocation?: unknown } }> }>(kc, 'GET', `/apis/${R}/namespaces/${ns}/resourceclaims`);
      const want = scenarios.filter((s) => s.before?.some((b) => b.scheduled)).length;
      return items.filter((x) => x.status?.allocation).length >= want;
    }, { timeoutMs: 60_000 });

    // What the model sees, just before the pods exist.
    const list = async (path: string) => (await kubeRequest<{ items: Array<Record<string, unknown>> }>(kc, 'GET', path)).items;
    const kinds: Array<[string, string, string]> = [
      ['v1', 'Node', '/api/v1/nodes'], ['v1', 'Pod', `/api/v1/namespaces/${ns}/pods`],
      ['v1', 'PersistentVolume', '/api/v1/persistentvolumes'], ['v1', 'PersistentVolumeClaim', `/api/v1/namespaces/${ns}/persistentvolumeclaims`],
      ['storage.k8s.io/v1', 'StorageClass', '/apis/storage.k8s.io/v1/storageclasses'], ['storage.k8s.io/v1', 'CSINode', '/apis/storage.k8s.io/v1/csinodes'],
      [R, 'ResourceSlice', `/apis/${R}/resourceslices`], [R, 'DeviceClass', `/apis/${R}/deviceclasses`],
      [R, 'ResourceClaim', `/apis/${R}/namespaces/${ns}/resourceclaims`], [R, 'ResourceClaimTemplate', `/apis/${R}/namespaces/${ns}/resourceclaimtemplates`],
    ];
    const ours = new Set(scenarios.map((_, i) => nodeName(i)));
    const listed: Array<Record<string, unknown>> = [];
    for (const [apiVersion, kind, path] of kinds) {
      for (const o of await list(path)) {
        const name = (o.metadata as { name?: string }).name ?? '';
        if ((kind === 'Node' || kind === 'CSINode') && !ours.has(name)) continue;
        listed.push({ ...o, apiVersion, kind });
      }
    }

    // The pods, with priorities resolved as admission resolves them.
    const created: V1Pod[] = [];
    for (const [i, s] of scenarios.entries()) {
      created.push(await post<V1Pod>(`/api/v1/namespaces/${ns}/pods`, { metadata: { name: `s${i}-pod` }, spec: pinned(s.pod, nodeName(i)) }));
    }
    const modelFits = (objects: Array<Record<string, unknown>>, pod: V1Pod, node: string) => {
      const snapshot = buildSnapshot(loadObjects(objects.map((o) => stringify(o)).join('---\n')), { strict: false });
      const key = `${ns}/${pod.metadata!.name}`;
      const placement = solve(snapshot).placements.find((p) => p.pod === key);
      const nominated = snapshot.leftAlone?.some((p) => p.key === key && p.kind === 'nominated' && pod.status?.nominatedNodeName === node);
      return (placement !== undefined && 'node' in placement && placement.node === node) || nominated === true;
    };

    const verdicts = await eventually('a kube-scheduler verdict for every pod', async () => {
      const { items } = await kubeRequest<{ items: V1Pod[] }>(kc, 'GET', `/api/v1/namespaces/${ns}/pods`);
      const out = new Map<number, { fits: boolean; pod: V1Pod }>();
      for (const [i, s] of scenarios.entries()) {
        const p = items.find((x) => x.metadata!.name === `s${i}-pod`);
        if (!p) continue;
        if (p.spec?.nodeName || p.status?.nominatedNodeName) out.set(i, { fits: true, pod: p });
        else if (!s.preempts && p.status?.conditions?.some((x) => x.type === 'PodScheduled' && x.status === 'False' && x.reason === 'Unschedulable')) out.set(i, { fits: false, pod: p });
      }
      return out.size === scenarios.length ? out : false;
    }, { timeoutMs: 120_000, intervalMs: 500 });

    const disagreements: string[] = [];
    for (const [i, s] of scenarios.entries()) {
      const node = nodeName(i);
      const theirs = verdicts.get(i)!;
      // A pod placed by preemption is judged as Headroom sees it then: nominated.
      const mine = s.preempts ? modelFits(listed.filter((o) => o.kind !== 'Pod' || (o.metadata as { name: string }).name !== theirs.pod.metadata!.name).concat([{ ...theirs.pod, apiVersion: 'v1', kind: 'Pod' } as Record<string, unknown>]), theirs.pod, node)
        : modelFits([...listed, { ...created[i]!, apiVersion: 'v1', kind: 'Pod' } as Record<string, unknown>], created[i]!, node);
      if (theirs.fits !== s.expect) disagreements.push(`${s.name}: kube-scheduler ${theirs.fits ? 'places it' : 'rejects it'}, the scenario expects otherwise`);
      if (mine !== theirs.fits) disagreements.push(`${s.name}: kube-scheduler ${theirs.fits ? 'places it' : 'rejects it'}, Headroom's model ${mine ? 'places it' : 'rejects it'}`);
    }
    // The preempted victims held by a finalizer may go now.
    for (const [i, s] of scenarios.entries()) {
      for (const b of s.before ?? []) if (b.hold) await kubeRequest(kc, 'PATCH', `/api/v1/namespaces/${ns}/pods/s${i}-${b.name}`, { metadata: { finalizers: null } }).catch(() => undefined);
    }
    console.log(`      [crosscheck] ${scenarios.length} scenarios, ${scenarios.filter((s) => s.expect).length} fit, ${disagreements.length} disagreements`);
    expect(disagreements).to.deep.equal([]);
  });
});
