/**
 * Proves the test harness against the real binaries: CRD schema validation, RBAC,
 * kwok node lifecycle, the real kube-scheduler, kube-controller-manager, and an
 * extra scheduler with its own configuration.
 */
import { AppsV1Api, CoreV1Api, type KubeConfig, type V1Node, type V1Pod } from '@kubernetes/client-node';
import { expect } from 'chai';
import type { ControlPlane } from '../harness/control-plane.js';
import { KubeRequestError, kubeRequest } from '../harness/kube-request.js';
import { createTestNamespace, deleteTestNamespace } from '../harness/namespace.js';
import { eventually, isNodeReady } from '../harness/wait.js';
import { sharedControlPlane } from './hooks.js';

const MD_PATH = (ns: string) => `/apis/cluster.x-k8s.io/v1beta2/namespaces/${ns}/machinedeployments`;

function machineDeployment(ns: string, name: string, spec: Record<string, unknown>): object {
  return { apiVersion: 'cluster.x-k8s.io/v1beta2', kind: 'MachineDeployment', metadata: { name, namespace: ns }, spec };
}

function validMdSpec(): Record<string, unknown> {
  return {
    clusterName: 'test',
    replicas: 2,
    selector: { matchLabels: { pool: 'a' } },
    template: {
      metadata: { labels: { pool: 'a' } },
      spec: {
        clusterName: 'test',
        bootstrap: { dataSecretName: 'bootstrap' },
        infrastructureRef: { apiGroup: 'infrastructure.cluster.x-k8s.io', kind: 'DockerMachineTemplate', name: 'tmpl' },
      },
    },
  };
}

function kwokNode(name: string, labels: Record<string, string>, fake = true): V1Node {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name, labels: { 'kubernetes.io/hostname': name, ...labels }, annotations: fake ? { 'kwok.x-k8s.io/node': 'fake' } : {} },
    status: { capacity: { cpu: '4', memory: '8Gi', pods: '110' }, allocatable: { cpu: '4', memory: '8Gi', pods: '110' } },
  };
}

function pod(ns: string, name: string, extra: Partial<NonNullable<V1Pod['spec']>> = {}, labels: Record<string, string> = {}): V1Pod {
  return {
    metadata: { name, namespace: ns, labels },
    spec: { containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.10', resources: { requests: { cpu: '100m', memory: '64Mi' } } }], ...extra },
  };
}

describe('harness: real control plane', function () {
  this.timeout(180_000);
  let cp: ControlPlane;
  let kc: KubeConfig;
  let core: CoreV1Api;
  let ns: string;
  const nodes: string[] = [];

  before(async function () {
    cp = await sharedControlPlane();
    kc = cp.kubeConfig();
    core = kc.makeApiClient(CoreV1Api);
    ns = await createTestNamespace(kc, 'harness');
  });

  after(async function () {
    if (!kc) return;
    await Promise.all(nodes.map((name) => core.deleteNode({ name }).catch(() => undefined)));
    await deleteTestNamespace(kc, ns);
  });

  async function createNode(suffix: string, fake = true): Promise<string> {
    const name = `${ns}-${suffix}`;
    nodes.push(name);
    await core.createNode({ body: kwokNode(name, { 'harness.headroom.dev/node': name }, fake) });
    return name;
  }

  it('serves TLS with client certificates and enforces RBAC', async () => {
    expect(cp.server).to.match(/^https:\/\/127\.0\.0\.1:\d+$/);
    const namespaces = await core.listNamespace();
    expect(namespaces.items.map((n) => n.metadata?.name)).to.include(ns);

    const nobody = cp.userKubeConfig({ user: 'nobody', groups: ['headroom:test'] });
    const err = await nobody.kubeConfig.makeApiClient(CoreV1Api).listNode().then(() => undefined, (e: { code?: number }) => e);
    expect(err?.code).to.equal(403);
  });

  it('accepts a valid v1beta2 MachineDeployment and the CRD schema rejects an invalid one', async () => {
    const created = await kubeRequest<{ metadata: { uid: string }; spec: { replicas: number } }>(
      kc, 'POST', MD_PATH(ns), machineDeployment(ns, 'valid', validMdSpec()),
    );
    expect(created.metadata.uid).to.be.a('string');
    expect(created.spec.replicas).to.equal(2);

    const bad = validMdSpec();
    delete bad.clusterName; // required
    bad.replicas = 'three'; // integer
    const err = await kubeRequest(kc, 'POST', MD_PATH(ns), machineDeployment(ns, 'invalid', bad)).then(() => undefined, (e: unknown) => e);
    expect(err).to.be.instanceOf(KubeRequestError);
    expect((err as KubeRequestError).code).to.equal(422);
    expect((err as KubeRequestError).message).to.include('spec.clusterName').and.to.include('spec.replicas');

    const infra = validMdSpec();
    (infra.template as { spec: Record<string, unknown> }).spec.infrastructureRef = { kind: 'DockerMachineTemplate', name: 'tmpl' }; // v1beta2 needs apiGroup
    const err2 = await kubeRequest(kc, 'POST', MD_PATH(ns), machineDeployment(ns, 'invalid2', infra)).then(() => undefined, (e: unknown) => e);
    expect((err2 as KubeRequestError).code).to.equal(422);
    expect((err2 as KubeRequestError).message).to.include('apiGroup');
  });

  it('kwok makes an annotated Node Ready and leaves other Nodes alone', async () => {
    const fake = await createNode('kwok');
    const other = await createNode('plain', false);
    const node = await eventually(`node ${fake} Ready`, async () => {
      const n = await core.readNode({ name: fake });
      return isNodeReady(n) ? n : false;
    }, { timeoutMs: 30_000 });
    expect(node.status?.allocatable?.cpu).to.equal('4');
    await new Promise((r) => setTimeout(r, 1000));
    expect(isNodeReady(await core.readNode({ name: other }))).to.equal(false);
  });

  it('the real kube-scheduler binds a pod and kwok runs it', async () => {
    const nodeName = await createNode('sched');
    await core.createNamespacedPod({ namespace: ns, body: pod(ns, 'p1', { nodeSelector: { 'harness.headroom.dev/node': nodeName } }) });
    const running = await eventually('pod p1 Running', async () => {
      const p = await core.readNamespacedPod({ name: 'p1', namespace: ns });
      return p.status?.phase === 'Running' ? p : false;
    });
    expect(running.spec?.nodeName).to.equal(nodeName);
    expect(running.status?.podIP).to.be.a('string');
    const events = await core.listNamespacedEvent({ namespace: ns, fieldSelector: 'involvedObject.name=p1' });
    expect(events.items.some((e) => e.reason === 'Scheduled' && e.source?.component === 'default-scheduler' || e.reportingComponent === 'default-scheduler')).to.equal(true);
  });

  it('a pod nothing fits stays Pending, unschedulable', async () => {
    await core.createNamespacedPod({ namespace: ns, body: pod(ns, 'nowhere', { nodeSelector: { 'harness.headroom.dev/node': 'does-not-exist' } }) });
    const p = await eventually('pod nowhere marked Unschedulable', async () => {
      const got = await core.readNamespacedPod({ name: 'nowhere', namespace: ns });
      return got.status?.conditions?.some((c) => c.type === 'PodScheduled' && c.reason === 'Unschedulable') ? got : false;
    });
    expect(p.spec?.nodeName).to.equal(undefined);
  });

  it('kube-controller-manager turns a scaled Deployment into pods', async () => {
    const nodeName = await createNode('deploy');
    const apps = kc.makeApiClient(AppsV1Api);
    const labels = { app: 'web' };
    await apps.createNamespacedDeployment({
      namespace: ns,
      body: {
        metadata: { name: 'web', namespace: ns },
        spec: { replicas: 1, selector: { matchLabels: labels }, template: { metadata: { labels }, spec: pod(ns, 'x', { nodeSelector: { 'harness.headroom.dev/node': nodeName } }).spec! } },
      },
    });
    await kubeRequest(kc, 'PATCH', `/apis/apps/v1/namespaces/${ns}/deployments/web/scale`, { spec: { replicas: 3 } });
    const pods = await eventually('3 running web pods', async () => {
      const list = await core.listNamespacedPod({ namespace: ns, labelSelector: 'app=web' });
      return list.items.length === 3 && list.items.every((p) => p.status?.phase === 'Running') ? list.items : false;
    });
    expect(pods.map((p) => p.spec?.nodeName)).to.deep.equal([nodeName, nodeName, nodeName]);
    expect(pods.every((p) => p.metadata?.ownerReferences?.[0]?.kind === 'ReplicaSet')).to.equal(true);
    const dep = await eventually('deployment status', async () => {
      const d = await apps.readNamespacedDeployment({ name: 'web', namespace: ns });
      return d.status?.readyReplicas === 3 ? d : false;
    });
    expect(dep.status?.replicas).to.equal(3);
  });

  it('runs an extra kube-scheduler with its own configuration alongside the default one', async () => {
    const nodeName = await createNode('extra');
    const sched = await cp.startScheduler({
      schedulerName: 'headroom-test-scheduler',
      config: { profiles: [{ schedulerName: 'headroom-test-scheduler', plugins: { score: { disabled: [{ name: 'NodeResourcesBalancedAllocation' }] } } }] },
    });
    try {
      await core.createNamespacedPod({
        namespace: ns,
        body: pod(ns, 'mine', { schedulerName: 'headroom-test-scheduler', nodeSelector: { 'harness.headroom.dev/node': nodeName } }),
      });
      const p = await eventually('pod mine bound', async () => {
        const got = await core.readNamespacedPod({ name: 'mine', namespace: ns });
        return got.spec?.nodeName ? got : false;
      });
      expect(p.spec?.nodeName).to.equal(nodeName);
      const events = await core.listNamespacedEvent({ namespace: ns, fieldSelector: 'involvedObject.name=mine,reason=Scheduled' });
      expect(events.items.map((e) => e.reportingComponent || e.source?.component)).to.include('headroom-test-scheduler');
    } finally {
      await sched.stop();
    }
    expect(sched.running).to.equal(false);
  });
});
