import { expect } from 'chai';
import type { KubeConfig, V1Node, V1Pod } from '@kubernetes/client-node';
import { Registry } from 'prom-client';
import type { KubeClient } from '../../src/kube/kube-client.js';
import { MachineFixture, fixtureNodeSelector } from '../harness/machine-fixture.js';
import { createTestNamespace, deleteTestNamespace } from '../harness/namespace.js';
import { eventually } from '../harness/wait.js';
import { sharedClient } from './hooks.js';
import { Controller, type ControllerOptions } from '../../src/controller/controller.js';
import type { DisruptionReport } from '../../src/disruption/disruption-report.js';
import type { CycleReport } from '../../src/provisioning/cycle-report.js';
import { machineDeployment } from './controller-objects.js';

/**
 * SIG Autoscaling's capacity APIs end to end, on the real control plane with the
 * upstream CRDs (Cluster Autoscaler 1.36.1): CapacityBuffers (scalableRef to a
 * Deployment with percentage, limits, ResourceQuota, refill, consolidation, v1alpha1)
 * and ProvisioningRequests (check-capacity, atomic scale-up, booking expiry), invalid
 * objects among valid ones. The machine fixture turns replicas into kwok Nodes; the
 * real kube-scheduler binds real pods.
 */

const GROUP = 'autoscaling.x-k8s.io';
const TOLERATE_KWOK = [{ key: 'kwok.x-k8s.io/node', operator: 'Exists', effect: 'NoSchedule' }];
const podSpec = (cpu: string) => ({
  containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.10', resources: { requests: { cpu, memory: '128Mi' } } }],
  tolerations: TOLERATE_KWOK,
});

interface Condition { type: string; status: string; reason: string; message: string; observedGeneration?: number }
interface WithStatus { metadata: { generation?: number }; status?: { replicas?: number; podTemplateRef?: { name: string }; podTemplateGeneration?: number; conditions?: Condition[] } }
const condition = (o: WithStatus, type: string) => o.status?.conditions?.find((c) => c.type === type);

describe('capacity APIs (CapacityBuffer, ProvisioningRequest) on a real control plane', function () {
  let kc: KubeConfig;
  let client: KubeClient;

  before(async function () { ({ kc, client } = await sharedClient(this)); });
  after(() => client.close());

  async function scenario(prefix: string) {
    const ns = await createTestNamespace(kc, prefix);
    const fixture = await MachineFixture.start({ kubeConfig: kc, namespace: ns, bootDelayMs: 0, intervalMs: 100 });
    const controllers: Controller[] = [];
    const cycles: CycleReport[] = [];
    const disruptions: DisruptionReport[] = [];
    const logs: string[] = [];
    const registry = new Registry();
    const selector = fixtureNodeSelector({ namespace: ns });
    const start = async (extra: Partial<ControllerOptions> = {}) => {
      const c = new Controller({
        workload: kc,
        discovery: [{ namespace: ns, labels: {} }],
        workloadScope: { namespace: ns, nodeLabelSelector: selector },
        batch: { idleMs: 200, maxMs: 2000 },
        capacityStatusIntervalMs: 500,
        disruption: false,
        registry,
        log: (m) => logs.push(`${new Date().toISOString()} ${m}`),
        onCycle: (r) => cycles.push(r),
        onDisruption: (r) => disruptions.push(r),
        ...extra,
      });
      controllers.push(c);
      await c.start();
      return c;
    };
    const group = (name: string, max: number, replicas = 0) => client.request('POST', `/apis/cluster.x-k8s.io/v1beta2/namespaces/${ns}/machinedeployments`, {
      body: machineDeployment({ namespace: ns, name, replicas, min: 0, max, cpu: '4', memory: '16Gi' }),
    });
    const replicas = async (name: string) => (await client.get<{ spec: { replicas: number } }>(`/apis/cluster.x-k8s.io/v1beta2/namespaces/${ns}/machinedeployments/${name}`)).spec.replicas;
    const nodes = async () => (await client.get<{ items: V1Node[] }>('/api/v1/nodes', { labelSelector: selector })).items;
    const pods = async () => (await client.get<{ items: V1Pod[] }>(`/api/v1/namespaces/${ns}/pods`)).items;
    const podTemplate = (name: string, cpu: string) => client.request('POST', `/api/v1/namespaces/${ns}/podtemplates`, {
      body: { apiVersion: 'v1', kind: 'PodTemplate', metadata: { name, namespace: ns }, template: { metadata: { labels: { shape: name } }, spec: podSpec(cpu) } },
    });
    const create = (plural: string, version: string, kind: string, name: string, spec: unknown) => client.request('POST', `/apis/${GROUP}/${version}/namespaces/${ns}/${plural}`, {
      body: { apiVersion: `${GROUP}/${version}`, kind, metadata: { name, namespace: ns }, spec },
    });
    const buffer = (name: string, spec: unknown, version = 'v1beta1') => create('capacitybuffers', version, 'CapacityBuffer', name, spec);
    const request = (name: string, cls: string, podSets: unknown) => create('provisioningrequests', 'v1', 'ProvisioningRequest', name, { provisioningClassName: cls, podSets });
    const get = (plural: string, name: string, version = 'v1beta1') => client.get<WithStatus>(`/apis/${GROUP}/${version}/namespaces/${ns}/${plural}/${name}`);
    /** Waits until the object's condition matches. */
    const waitCondition = (plural: string, name: string, type: string, want: Partial<Condition>, version?: string) =>
      eventually(`${plural}/${name} ${type}=${JSON.stringify(want)}`, async () => {
        const o = await get(plural, name, version);
        const c = condition(o, type);
        return c && Object.entries(want).every(([k, v]) => (c as unknown as Record<string, unknown>)[k] === v) ? o : false;
      }, { timeoutMs: 30_000, intervalMs: 250 });
    const readyNodes = (count: number, timeoutMs = 30_000) => eventually(`${count} Ready nodes in ${ns}`, async () => {
      const items = (await nodes()).filter((n) => !n.spec?.unschedulable);
      return items.length === count ? items : false;
    }, { timeoutMs, intervalMs: 250 });
    const cleanup = async () => {
      for (const c of controllers) await c.stop().catch(() => {});
      await client.request('DELETE', `/api/v1/namespaces/${ns}/pods`, { query: { gracePeriodSeconds: 0 } }).catch(() => {});
      await fixture.stop();
      await deleteTestNamespace(kc, ns).catch(() => {});
    };
    return { ns, start, group, replicas, nodes, pods, podTemplate, buffer, request, get, waitCondition, readyNodes, cycles, disruptions, logs, registry, cleanup };
  }

  const deployment = (ns: string, name: string, count: number) => ({
    apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name, namespace: ns },
    // Paused: the Deployment's replicas are what the buffer reads; the test keeps its pods
    // out of the picture so the nodes follow the buffer alone.
    spec: { replicas: count, paused: true, selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: podSpec('2') } },
  });

  describe('CapacityBuffer', () => {
    it('scalableRef to a Deployment with percentage 20: 10 -> 30 replicas grows the buffer 2 -> 6 chunks, and nodes follow', async function () {
      this.timeout(120_000);
      const s = await scenario('cb-pct');
      try {
        await s.group('md', 10);
        await client.request('POST', `/apis/apps/v1/namespaces/${s.ns}/deployments`, { body: deployment(s.ns, 'web', 10) });
        await s.start();
        await s.buffer('web-spare', { scalableRef: { apiGroup: 'apps', kind: 'Deployment', name: 'web' }, percentage: 20 });
        // 2 chunks of 2 CPU: one 4-CPU node.
        let b = await s.waitCondition('capacitybuffers', 'web-spare', 'ReadyForProvisioning', { status: 'True', reason: 'AttributesSetSuccessfully' });
        await eventually('status.replicas 2', async () => ((b = await s.get('capacitybuffers', 'web-spare')).status?.replicas === 2 ? b : false), { timeoutMs: 20_000 });
        expect(b.status!.podTemplateRef).to.deep.equal({ name: 'capacitybuffer-web-spare-pod-template' });
        const tpl = await client.get<{ metadata: { generation: number; ownerReferences: Array<{ kind: string; name: string }> }; template: { spec: { containers: Array<{ resources: { requests: { cpu: string } } }> } } }>(
          `/api/v1/namespaces/${s.ns}/podtemplates/capacitybuffer-web-spare-pod-template`);
        expect(tpl.template.spec.containers[0]!.resources.requests.cpu).to.equal('2');
        expect(tpl.metadata.ownerReferences.map((r) => `${r.kind}/${r.name}`)).to.deep.equal(['CapacityBuffer/web-spare']);
        expect(b.status!.podTemplateGeneration).to.equal(tpl.metadata.generation);
        for (const c of b.status!.conditions!) expect(c.observedGeneration, c.type).to.equal(b.metadata.generation);
        await s.readyNodes(1);
        await s.waitCondition('capacitybuffers', 'web-spare', 'Provisioning', { status: 'True' });
        // Scale the Deployment to 30: 6 chunks, three nodes.
        await client.request('PATCH', `/apis/apps/v1/namespaces/${s.ns}/deployments/web`, { contentType: 'application/merge-patch+json', body: { spec: { replicas: 30 } } });
        await eventually('status.replicas 6', async () => ((await s.get('capacitybuffers', 'web-spare')).status?.replicas === 6), { timeoutMs: 20_000 });
        await s.readyNodes(3);
        await new Promise((r) => setTimeout(r, 1500));
        expect(await s.replicas('md')).to.equal(3);
        // Chunks are never real pods.
        expect(await s.pods()).to.deep.equal([]);
      } finally {
        await s.cleanup();
      }
    });

    it('limits cap a buffer; a ResourceQuota gives LimitedByQuotas; invalid buffers get one line and do not stop the others; v1alpha1 is read', async function () {
      this.timeout(90_000);
      const s = await scenario('cb-caps');
      try {
        await s.group('md', 10);
        await s.podTemplate('one-cpu', '1');
        await s.start();
        // limits: 10 chunks wanted, 3 CPU of 1-CPU chunks allowed -> 3; written through v1alpha1.
        await s.buffer('capped', { podTemplateRef: { name: 'one-cpu' }, replicas: 10, limits: { cpu: '3' } }, 'v1alpha1');
        await s.buffer('missing-template', { podTemplateRef: { name: 'nope' }, replicas: 2 });
        await s.buffer('not-scalable', { scalableRef: { apiGroup: '', kind: 'ConfigMap', name: 'cm' }, replicas: 1 });
        const capped = await s.waitCondition('capacitybuffers', 'capped', 'ReadyForProvisioning', { status: 'True' }, 'v1alpha1');
        await eventually('capped: 3 chunks', async () => (await s.get('capacitybuffers', 'capped', 'v1alpha1')).status?.replicas === 3, { timeoutMs: 15_000 });
        expect(capped.status!.podTemplateRef).to.deep.equal({ name: 'one-cpu' });
        const missing = await s.waitCondition('capacitybuffers', 'missing-template', 'ReadyForProvisioning', { status: 'False', reason: 'TemplateNotFound' });
        expect(condition(missing, 'ReadyForProvisioning')!.message).to.equal(`podTemplateRef: PodTemplate ${s.ns}/nope not found`);
        const notScalable = await s.waitCondition('capacitybuffers', 'not-scalable', 'ReadyForProvisioning', { status: 'False', reason: 'NoScaleSubresource' });
        expect(condition(notScalable, 'ReadyForProvisioning')!.message).to.equal('scalableRef: ConfigMap has no scale subresource');
        // 3 CPU of chunks: one 4-CPU node.
        await s.readyNodes(1);
        // A quota with 2 CPU left caps the buffer at 2 (the quota controller's status, as it would publish it).
        await client.request('POST', `/api/v1/namespaces/${s.ns}/resourcequotas`, {
          body: { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'team', namespace: s.ns }, spec: { hard: { 'requests.cpu': '2' } } },
        });
        await client.request('PATCH', `/api/v1/namespaces/${s.ns}/resourcequotas/team/status`, {
          contentType: 'application/merge-patch+json', body: { status: { hard: { 'requests.cpu': '2' }, used: { 'requests.cpu': '0' } } },
        });
        const limited = await s.waitCondition('capacitybuffers', 'capped', 'LimitedByQuotas', { status: 'True', reason: 'ResourceQuotasAllocated' });
        expect(condition(limited, 'LimitedByQuotas')!.message).to.equal('Buffer replicas limited from 3 to 2 due to quotas: team');
        await eventually('capped: 2 chunks', async () => (await s.get('capacitybuffers', 'capped')).status?.replicas === 2, { timeoutMs: 15_000 });
      } finally {
        await s.cleanup();
      }
    });

    it('emptiness consolidation never removes a node holding buffer capacity; a burst consumes the buffer and it refills', async function () {
      this.timeout(120_000);
      const s = await scenario('cb-refill');
      try {
        await s.group('md', 10);
        await s.podTemplate('two-cpu', '2');
        await s.start({ disruption: { intervalMs: 500, defaultConsolidateAfterMs: 1000 } });
        await s.buffer('spare', { podTemplateRef: { name: 'two-cpu' }, replicas: 2 });
        const [held] = await s.readyNodes(1);
        // Empty of real pods well past consolidateAfter, over many disruption passes: kept.
        const passes = s.disruptions.length;
        await new Promise((r) => setTimeout(r, 5000));
        expect(s.disruptions.length - passes).to.be.at.least(4);
        expect(s.disruptions.flatMap((d) => d.removals)).to.deep.equal([]);
        expect((await s.nodes()).map((n) => n.metadata!.name)).to.deep.equal([held!.metadata!.name]);
        // A burst of two 2-CPU pods runs at once on the buffer's node ...
        for (const i of [0, 1]) {
          await client.request('POST', `/api/v1/namespaces/${s.ns}/pods`, {
            body: { apiVersion: 'v1', kind: 'Pod', metadata: { name: `burst-${i}`, namespace: s.ns }, spec: podSpec('2') },
          });
        }
        const running = await eventually('burst Running', async () => {
          const items = await s.pods();
          return items.length === 2 && items.every((p) => p.status?.phase === 'Running') ? items : false;
        }, { timeoutMs: 30_000, intervalMs: 200 });
        expect(running.map((p) => p.spec!.nodeName)).to.deep.equal([held!.metadata!.name, held!.metadata!.name]);
        // ... and the buffer refills: a second node for its two chunks.
        await s.readyNodes(2);
        expect(await s.replicas('md')).to.equal(2);
      } finally {
        await s.cleanup();
      }
    });
  });

  describe('ProvisioningRequest', () => {
    it('check-capacity: Provisioned=True when the pods fit, False when they do not, and no scale-up either way', async function () {
      this.timeout(90_000);
      const s = await scenario('pr-check');
      try {
        await s.group('md', 5, 1);
        await s.readyNodes(1);
        await s.podTemplate('one-cpu', '1');
        await s.start();
        await s.request('fits', 'check-capacity.autoscaling.x-k8s.io', [{ podTemplateRef: { name: 'one-cpu' }, count: 2 }]);
        await s.request('too-big', 'check-capacity.autoscaling.x-k8s.io', [{ podTemplateRef: { name: 'one-cpu' }, count: 6 }]);
        const fits = await s.waitCondition('provisioningrequests', 'fits', 'Provisioned', { status: 'True', reason: 'CapacityIsFound', message: 'Capacity is found in the cluster' }, 'v1');
        expect(condition(fits, 'Accepted')).to.include({ status: 'True', reason: 'Accepted' });
        const tooBig = await s.waitCondition('provisioningrequests', 'too-big', 'Provisioned', { status: 'False', reason: 'CapacityIsNotFound' }, 'v1');
        expect(condition(tooBig, 'Provisioned')!.message).to.equal('Capacity is not found in the cluster: 4 of 6 pod(s) do not fit on the existing nodes');
        await new Promise((r) => setTimeout(r, 3000));
        expect(await s.replicas('md')).to.equal(1);
        expect(s.cycles.flatMap((c) => c.scaleUps)).to.deep.equal([]);
      } finally {
        await s.cleanup();
      }
    });

    it('atomic: a request that fits within max sizes scales every group it needs in one decision, and its pods then schedule at once', async function () {
      this.timeout(120_000);
      const s = await scenario('pr-atomic');
      try {
        await s.group('md-a', 2);
        await s.group('md-b', 2);
        await s.podTemplate('three-cpu', '3');
        await s.start();
        await s.request('train', 'best-effort-atomic-scale-up.autoscaling.x-k8s.io', [{ podTemplateRef: { name: 'three-cpu' }, count: 3 }]);
        await s.waitCondition('provisioningrequests', 'train', 'Provisioned', { status: 'True', reason: 'CapacityIsProvisioned' }, 'v1');
        await s.readyNodes(3);
        // One cycle wrote every group (3 one-pod nodes over two groups of max 2).
        const writing = s.cycles.filter((c) => c.scaleUps.some((u) => u.result?.written));
        expect(writing).to.have.length(1);
        expect(writing[0]!.scaleUps.filter((u) => u.result?.written).reduce((n, u) => n + (u.result!.replicas - u.from), 0)).to.equal(3);
        expect(new Set(writing[0]!.scaleUps.map((u) => u.name))).to.deep.equal(new Set(['md-a', 'md-b']));
        // The pods arrive and schedule at once onto the booked nodes: no further scale-up.
        const writesBefore = s.cycles.flatMap((c) => c.scaleUps).filter((u) => u.result?.written).length;
        for (const i of [0, 1, 2]) {
          await client.request('POST', `/api/v1/namespaces/${s.ns}/pods`, {
            body: { apiVersion: 'v1', kind: 'Pod', metadata: { name: `train-${i}`, namespace: s.ns, annotations: { 'autoscaling.x-k8s.io/consume-provisioning-request': 'train' } }, spec: podSpec('3') },
          });
        }
        await eventually('3 consumers Running', async () => {
          const items = await s.pods();
          return items.length === 3 && items.every((p) => p.status?.phase === 'Running');
        }, { timeoutMs: 20_000, intervalMs: 200 });
        await new Promise((r) => setTimeout(r, 1500));
        expect(s.cycles.flatMap((c) => c.scaleUps).filter((u) => u.result?.written).length).to.equal(writesBefore);
        const metrics = await s.registry.getSingleMetricAsString('headroom_provisioning_requests_total');
        expect(metrics).to.include('class="best-effort-atomic-scale-up.autoscaling.x-k8s.io",outcome="provisioned"} 1');
        const events = await client.get<{ items: Array<{ reason: string; regarding: { kind: string; name: string } }> }>(`/apis/events.k8s.io/v1/namespaces/${s.ns}/events`);
        expect(events.items.filter((e) => e.regarding.kind === 'ProvisioningRequest' && e.regarding.name === 'train').map((e) => e.reason)).to.include('CapacityIsProvisioned');
      } finally {
        await s.cleanup();
      }
    });

    it('atomic: a request that cannot fit completely scales nothing and is marked Provisioned=False with the reason; others are still served', async function () {
      this.timeout(90_000);
      const s = await scenario('pr-nofit');
      try {
        await s.group('md-a', 2);
        await s.group('md-b', 2);
        await s.podTemplate('three-cpu', '3');
        await s.start();
        await s.request('huge', 'best-effort-atomic-scale-up.autoscaling.x-k8s.io', [{ podTemplateRef: { name: 'three-cpu' }, count: 5 }]);
        await s.request('broken', 'best-effort-atomic-scale-up.autoscaling.x-k8s.io', [{ podTemplateRef: { name: 'nope' }, count: 1 }]);
        const huge = await s.waitCondition('provisioningrequests', 'huge', 'Provisioned', { status: 'False', reason: 'CapacityIsNotFound' }, 'v1');
        expect(condition(huge, 'Provisioned')!.message).to.match(/^Capacity is not found, nothing was scaled: 1 of 5 pod\(s\) cannot be placed: .*max/);
        const broken = await s.waitCondition('provisioningrequests', 'broken', 'Failed', { status: 'True', reason: 'FailedToCreatePods' }, 'v1');
        expect(condition(broken, 'Failed')!.message).to.equal('podSets[0]: PodTemplate ' + s.ns + '/nope not found');
        await new Promise((r) => setTimeout(r, 3000));
        expect([await s.replicas('md-a'), await s.replicas('md-b')]).to.deep.equal([0, 0]);
        expect(s.cycles.flatMap((c) => c.scaleUps)).to.deep.equal([]);
      } finally {
        await s.cleanup();
      }
    });

    it('an unconsumed booking expires (BookingExpired) and its capacity is then consolidated', async function () {
      this.timeout(120_000);
      const s = await scenario('pr-expire');
      try {
        await s.group('md', 3);
        await s.podTemplate('three-cpu', '3');
        await s.start({ provisioningRequestBookingMs: 6000, disruption: { intervalMs: 500, defaultConsolidateAfterMs: 1000 } });
        await s.request('job', 'best-effort-atomic-scale-up.autoscaling.x-k8s.io', [{ podTemplateRef: { name: 'three-cpu' }, count: 1 }]);
        await s.waitCondition('provisioningrequests', 'job', 'Provisioned', { status: 'True' }, 'v1');
        await s.readyNodes(1);
        // Held while booked, although empty past consolidateAfter.
        await new Promise((r) => setTimeout(r, 2500));
        expect(s.disruptions.flatMap((d) => d.removals)).to.deep.equal([]);
        const expired = await s.waitCondition('provisioningrequests', 'job', 'BookingExpired', { status: 'True', reason: 'CapacityReservationTimeExpired' }, 'v1');
        expect(condition(expired, 'BookingExpired')!.message).to.equal('Capacity reservation time is expired');
        await eventually('the booked node consolidated', async () => (await s.replicas('md')) === 0, { timeoutMs: 30_000, intervalMs: 250 });
        expect(s.disruptions.flatMap((d) => d.removals).length).to.be.at.least(1);
      } finally {
        await s.cleanup();
      }
    });
  });
});
