import { expect } from 'chai';
import type { KubeConfig, V1Node, V1Pod } from '@kubernetes/client-node';
import { Registry } from 'prom-client';
import type { UnstructuredObject } from '../../src/api/unstructured-object.js';
import { Controller } from '../../src/controller/controller.js';
import type { CycleReport } from '../../src/provisioning/cycle-report.js';
import { Informer } from '../../src/kube/informer.js';
import type { KubeClient } from '../../src/kube/kube-client.js';
import { MachineFixture, fixtureNodeSelector } from '../harness/machine-fixture.js';
import { createTestNamespace, deleteTestNamespace } from '../harness/namespace.js';
import { eventually, isNodeReady } from '../harness/wait.js';
import { sharedClient } from './hooks.js';
import { machineDeployment, pendingPod } from './controller-objects.js';

/**
 * DRA on the real control plane: pods whose ResourceClaimTemplates ask for GPUs get
 * nodes from a GPU group scaled from zero on Cluster Autoscaler's dra-driver +
 * gpu-count annotations; the test publishes each new node's ResourceSlice as the
 * driver's kubelet plugin would; the real kube-scheduler allocates the claims (the
 * resourceclaim controller makes them from the templates) and binds the pods; kwok
 * runs them. A claim for a device no group offers, and one Headroom cannot model,
 * scale nothing and get an Event saying why.
 */

const R = 'resource.k8s.io/v1';
const GPUS_PER_NODE = 4;

describe('DRA: GPU pods on the real control plane', function () {
  let kc: KubeConfig;
  let client: KubeClient;
  before(async function () { ({ kc, client } = await sharedClient(this)); });
  after(() => client.close());

  it('scales a GPU group from zero on dra-driver + gpu-count for GPU claims, the pods run; a claim no group can serve scales nothing and says why', async function () {
    this.timeout(240_000);
    const ns = await createTestNamespace(kc, 'dra');
    // Cluster-scoped names are per test namespace, so other files never see them.
    const driver = `gpu.${ns}.example.com`;
    const gpuClass = `gpu-${ns}`;
    const tpuClass = `tpu-${ns}`;
    const fixture = await MachineFixture.start({ kubeConfig: kc, namespace: ns, bootDelayMs: 0, intervalMs: 100 });
    const cycles: CycleReport[] = [];
    const logs: string[] = [];
    let ctl: Controller | undefined;
    const slices: string[] = [];
    let nodeWatch: Informer<V1Node> | undefined;
    const post = <T = UnstructuredObject>(path: string, body: unknown) => client.request<T>('POST', path, { body });
    try {
      await post(`/apis/${R}/deviceclasses`, { apiVersion: R, kind: 'DeviceClass', metadata: { name: gpuClass }, spec: { selectors: [{ cel: { expression: `device.driver == "${driver}"` } }] } });
      await post(`/apis/${R}/deviceclasses`, { apiVersion: R, kind: 'DeviceClass', metadata: { name: tpuClass }, spec: { selectors: [{ cel: { expression: 'device.driver == "tpu.nowhere.example.com"' } }] } });
      const template = (name: string, deviceClassName: string, count: number, selectors: string[] = []) => post(`/apis/${R}/namespaces/${ns}/resourceclaimtemplates`, {
        apiVersion: R, kind: 'ResourceClaimTemplate', metadata: { name },
        spec: { spec: { devices: { requests: [{ name: 'dev', exactly: { deviceClassName, count, ...(selectors.length ? { selectors: selectors.map((expression) => ({ cel: { expression } })) } : {}) } }] } } },
      });
      await template('two-gpus', gpuClass, 2);
      await template('one-tpu', tpuClass, 1);
      // A selector kube-apiserver accepts (Kubernetes' IP library) but Headroom's CEL lacks.
      // 4 GPUs: were it planned as a GPU pod, a third GPU node would be added. False on every device: it stays pending.
      await template('odd-gpu', gpuClass, GPUS_PER_NODE, ['isIP("not-an-ip")']);

      // A cheaper CPU group the GPU pods must not land on, and the GPU group, both at zero.
      await post(`/apis/cluster.x-k8s.io/v1beta2/namespaces/${ns}/machinedeployments`, machineDeployment({ namespace: ns, name: 'cpu', replicas: 0, min: 0, max: 5, cpu: '8', memory: '32Gi' }));
      await post(`/apis/cluster.x-k8s.io/v1beta2/namespaces/${ns}/machinedeployments`, machineDeployment({
        namespace: ns, name: 'gpu', replicas: 0, min: 0, max: 5, cpu: '8', memory: '32Gi',
        annotations: { 'capacity.cluster-autoscaler.kubernetes.io/dra-driver': driver, 'capacity.cluster-autoscaler.kubernetes.io/gpu-count': String(GPUS_PER_NODE) },
      }));

      // The driver's kubelet plugin: one ResourceSlice per new GPU node, once it is Ready.
      nodeWatch = new Informer<V1Node>(client, { group: '', version: 'v1', plural: 'nodes', labelSelector: fixtureNodeSelector({ namespace: ns, kind: 'MachineDeployment', name: 'gpu' }) });
      const published = new Set<string>();
      nodeWatch.onChange((ch) => {
        const n = ch.object as V1Node | undefined;
        const name = n?.metadata?.name;
        if (!name || !isNodeReady(n) || published.has(name)) return;
        published.add(name);
        const slice = `${name}-${driver}`;
        slices.push(slice);
        void post(`/apis/${R}/resourceslices`, {
          apiVersion: R, kind: 'ResourceSlice', metadata: { name: slice },
          spec: {
            driver, nodeName: name, pool: { name, generation: 1, resourceSliceCount: 1 },
            devices: Array.from({ length: GPUS_PER_NODE }, (_, i) => ({ name: `gpu-${i}`, attributes: { type: { string: 'gpu' } } })),
          },
        }).catch((err: unknown) => logs.push(`slice ${slice}: ${(err as Error).message}`));
      });
      nodeWatch.start();
      await nodeWatch.waitForSync();

      ctl = new Controller({
        workload: kc,
        discovery: [{ namespace: ns, labels: {} }],
        workloadScope: { namespace: ns, nodeLabelSelector: fixtureNodeSelector({ namespace: ns }) },
        batch: { idleMs: 1000, maxMs: 10_000 },
        registry: new Registry(),
        log: (m) => logs.push(`${new Date().toISOString()} ${m}`),
        onCycle: (r) => cycles.push(r),
      });
      await ctl.start();

      const claimPod = (name: string, templateName: string) => {
        const p = pendingPod(ns, name, '1', '1Gi') as ReturnType<typeof pendingPod> & { spec: Record<string, unknown> };
        return { ...p, spec: { ...p.spec, resourceClaims: [{ name: 'dev', resourceClaimTemplateName: templateName }], containers: [{ ...p.spec.containers[0], resources: { requests: { cpu: '1', memory: '1Gi' }, claims: [{ name: 'dev' }] } }] } };
      };
      // 3 pods x 2 GPUs on 4-GPU nodes: 2 GPU nodes, none of the CPU group.
      for (let i = 0; i < 3; i++) await post(`/api/v1/namespaces/${ns}/pods`, claimPod(`train-${i}`, 'two-gpus'));
      await post(`/api/v1/namespaces/${ns}/pods`, claimPod('wants-tpu', 'one-tpu'));
      await post(`/api/v1/namespaces/${ns}/pods`, claimPod('odd', 'odd-gpu'));

      const running = await eventually('the 3 GPU pods Running on GPU nodes', async () => {
        const { items } = await client.get<{ items: V1Pod[] }>(`/api/v1/namespaces/${ns}/pods`);
        const train = items.filter((p) => p.metadata!.name!.startsWith('train-'));
        return train.length === 3 && train.every((p) => p.status?.phase === 'Running') ? train : false;
      }, { timeoutMs: 150_000, intervalMs: 500 });
      const md = async (name: string) => (await client.get<{ spec: { replicas: number } }>(`/apis/cluster.x-k8s.io/v1beta2/namespaces/${ns}/machinedeployments/${name}`)).spec.replicas;
      expect(await md('gpu'), 'GPU nodes: 6 GPUs on 4-GPU nodes').to.equal(2);
      expect(await md('cpu'), 'no CPU node for GPU pods').to.equal(0);
      for (const p of running) expect(p.spec!.nodeName).to.match(/^gpu-/);
      // The scheduler really allocated the devices the test's slices published.
      const { items: claims } = await client.get<{ items: Array<{ metadata: { name: string }; status?: { allocation?: { devices?: { results?: Array<{ driver: string; device: string }> } } } }> }>(`/apis/${R}/namespaces/${ns}/resourceclaims`);
      const allocated = claims.flatMap((c) => c.status?.allocation?.devices?.results ?? []);
      expect(allocated.filter((r) => r.driver === driver)).to.have.length(6);

      // The two pods that cannot be helped: pending, no scale-up for them, one Event each saying why.
      const events = await eventually('NotTriggerScaleUp events on wants-tpu and odd', async () => {
        const { items } = await client.get<{ items: Array<{ reason?: string; note?: string; type?: string; regarding?: { name?: string } }> }>(`/apis/events.k8s.io/v1/namespaces/${ns}/events`);
        const of = (pod: string) => items.filter((e) => e.reason === 'NotTriggerScaleUp' && e.regarding?.name === pod);
        return of('wants-tpu').length && of('odd').length ? { tpu: of('wants-tpu'), odd: of('odd') } : false;
      }, { timeoutMs: 60_000, intervalMs: 500 });
      console.log(`      [events] wants-tpu: ${events.tpu.map((e) => e.note).join(' | ')}\n      [events] odd: ${events.odd.map((e) => e.note).join(' | ')}`);
      expect(events.tpu.map((e) => e.note).join('\n')).to.match(new RegExp(`insufficient DRA devices .*${tpuClass}`));
      expect(events.odd.map((e) => e.note).join('\n')).to.match(/cannot model DRA claim: .*isIP/);
      for (const e of [...events.tpu, ...events.odd]) expect(e.type).to.equal('Warning');
      // The events come from a cycle that planned the two pods and scaled nothing; a while later, still nothing more.
      await new Promise((r) => setTimeout(r, 5000));
      expect(await md('gpu'), 'no third GPU node for the pod Headroom cannot model').to.equal(2);
      expect(await md('cpu'), 'no CPU node for the TPU pod').to.equal(0);
      const { items: pods } = await client.get<{ items: V1Pod[] }>(`/api/v1/namespaces/${ns}/pods`);
      for (const name of ['wants-tpu', 'odd']) expect(pods.find((p) => p.metadata!.name === name)!.spec!.nodeName, name).to.equal(undefined);
    } catch (err) {
      console.log(logs.slice(-60).join('\n'));
      throw err;
    } finally {
      nodeWatch?.stop();
      await ctl?.stop().catch(() => {});
      await client.request('DELETE', `/api/v1/namespaces/${ns}/pods`, { query: { gracePeriodSeconds: 0 } }).catch(() => {});
      await fixture.stop();
      for (const s of slices) await client.request('DELETE', `/apis/${R}/resourceslices/${s}`).catch(() => {});
      for (const c of [gpuClass, tpuClass]) await client.request('DELETE', `/apis/${R}/deviceclasses/${c}`).catch(() => {});
      await deleteTestNamespace(kc, ns).catch(() => {});
    }
  });
});
