/**
 * The machine-fulfilment fixture against the real control plane: CAPI objects in,
 * Ready kwok Nodes out.
 */
import { CoreV1Api, type KubeConfig, type V1Node } from '@kubernetes/client-node';
import { expect } from 'chai';
import { parseQuantity } from '../../src/scheduling/quantity.js';
import { MachineFixture, fixtureNodeSelector } from '../harness/machine-fixture.js';
import { kubeRequest } from '../harness/kube-request.js';
import { createTestNamespace, deleteTestNamespace } from '../harness/namespace.js';
import { eventually, waitForReadyNodes } from '../harness/wait.js';
import { sharedControlPlane } from './hooks.js';

const V1B2 = 'cluster.x-k8s.io/v1beta2';
const path = (ns: string, plural: string, name = '') => `/apis/${V1B2}/namespaces/${ns}/${plural}${name ? `/${name}` : ''}`;

interface Capi {
  metadata: { name: string; uid: string; annotations?: Record<string, string>; creationTimestamp?: string };
  spec: Record<string, unknown> & { providerID?: string; providerIDList?: string[]; replicas?: number };
  status?: Record<string, unknown> & { nodeRef?: { name: string }; replicas?: number; readyReplicas?: number; phase?: string; nodeRefs?: Array<{ name: string }> };
}

function machineSpec(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    clusterName: 'test',
    bootstrap: { dataSecretName: 'bootstrap' },
    infrastructureRef: { apiGroup: 'infrastructure.cluster.x-k8s.io', kind: 'DockerMachineTemplate', name: 'tmpl' },
    ...extra,
  };
}

describe('harness: machine fixture', function () {
  this.timeout(180_000);
  let kc: KubeConfig;
  let core: CoreV1Api;
  let ns: string;
  let fixture: MachineFixture | undefined;

  before(async function () {
    const cp = await sharedControlPlane();
    kc = cp.kubeConfig();
    core = kc.makeApiClient(CoreV1Api);
    ns = await createTestNamespace(kc, 'fixture');
    fixture = await MachineFixture.start({ kubeConfig: kc, namespace: ns, bootDelayMs: 300, drainTimeoutMs: 5000 });
  });

  after(async function () {
    await fixture?.stop();
    if (fixture) {
      const left = await core.listNode({ labelSelector: fixtureNodeSelector({ namespace: ns }) });
      expect(left.items, 'stop() removes the nodes it made').to.have.length(0);
    }
    if (kc) await deleteTestNamespace(kc, ns);
  });

  const list = async <T>(p: string) => (await kubeRequest<{ items: T[] }>(kc, 'GET', p)).items;

  it('a MachineDeployment scale-subresource update yields Ready nodes shaped by the annotations', async () => {
    await kubeRequest(kc, 'POST', path(ns, 'machinedeployments'), {
      apiVersion: V1B2,
      kind: 'MachineDeployment',
      metadata: {
        name: 'md-a',
        namespace: ns,
        annotations: {
          'capacity.cluster-autoscaler.kubernetes.io/cpu': '2',
          'capacity.cluster-autoscaler.kubernetes.io/memory': '8Gi',
          'capacity.cluster-autoscaler.kubernetes.io/maxPods': '30',
          'capacity.cluster-autoscaler.kubernetes.io/labels': 'node.kubernetes.io/instance-type=small,karpenter.sh/capacity-type=spot',
          'capacity.cluster-autoscaler.kubernetes.io/taints': 'dedicated=batch:NoSchedule',
        },
      },
      spec: {
        clusterName: 'test',
        replicas: 0,
        selector: { matchLabels: { pool: 'a' } },
        template: { metadata: { labels: { pool: 'a' } }, spec: machineSpec({ failureDomain: 'zone-a' }) },
      },
    });
    const scale = await kubeRequest<{ spec: { replicas: number } }>(kc, 'PATCH', `${path(ns, 'machinedeployments', 'md-a')}/scale`, { spec: { replicas: 3 } });
    expect(scale.spec.replicas).to.equal(3);

    const nodes = await waitForReadyNodes(kc, fixtureNodeSelector({ namespace: ns, kind: 'MachineDeployment', name: 'md-a' }), 3);
    for (const n of nodes) {
      expect(parseQuantity(n.status!.allocatable!.cpu!)).to.equal(2);
      expect(parseQuantity(n.status!.allocatable!.memory!)).to.equal(8 * 2 ** 30);
      expect(n.status!.allocatable!.pods).to.equal('30');
      expect(n.metadata!.labels).to.include({
        pool: 'a',
        'node.kubernetes.io/instance-type': 'small',
        'karpenter.sh/capacity-type': 'spot',
        'topology.kubernetes.io/zone': 'zone-a',
        'kubernetes.io/hostname': n.metadata!.name,
      });
      expect(n.spec!.taints).to.deep.include({ key: 'dedicated', value: 'batch', effect: 'NoSchedule' });
      expect(n.spec!.providerID).to.equal(`kwok://${n.metadata!.name}`);
      expect(n.metadata!.annotations).to.include({ 'cluster.x-k8s.io/cluster-namespace': ns, 'cluster.x-k8s.io/owner-kind': 'MachineDeployment', 'cluster.x-k8s.io/owner-name': 'md-a' });
    }

    // CAPI's object graph: MD -> one MachineSet -> 3 Machines, each pointing at its Node.
    const sets = await list<Capi>(path(ns, 'machinesets'));
    expect(sets).to.have.length(1);
    const machines = await eventually('machines report their nodes', async () => {
      const ms = await list<Capi>(path(ns, 'machines'));
      const ready = (m: Capi) => (m.status?.conditions as Array<{ type: string; status: string }> | undefined)?.some((c) => c.type === 'Ready' && c.status === 'True');
      return ms.length === 3 && ms.every((m) => m.status?.nodeRef && m.status.phase === 'Running' && ready(m)) ? ms : false;
    });
    expect(machines.map((m) => m.status!.nodeRef!.name).sort()).to.deep.equal(nodes.map((n) => n.metadata!.name).sort());
    expect(machines.every((m) => m.spec.providerID === `kwok://${m.status!.nodeRef!.name}`)).to.equal(true);
    const md = await eventually('MachineDeployment status', async () => {
      const got = await kubeRequest<Capi>(kc, 'GET', path(ns, 'machinedeployments', 'md-a'));
      return got.status?.readyReplicas === 3 ? got : false;
    });
    expect(md.status!.replicas).to.equal(3);
    const scaleNow = await kubeRequest<{ status: { replicas: number; selector?: string } }>(kc, 'GET', `${path(ns, 'machinedeployments', 'md-a')}/scale`);
    expect(scaleNow.status).to.deep.equal({ replicas: 3, selector: 'pool=a' });

    // Level-triggered but quiet: once settled, passes write nothing (no informer churn).
    const versions = async () => (await list<Capi & { metadata: { resourceVersion: string } }>(path(ns, 'machines'))).map((m) => m.metadata.resourceVersion).sort();
    const before = await versions();
    await new Promise((r) => setTimeout(r, 1500));
    expect(await versions()).to.deep.equal(before);
  });

  it('scale-down removes Machines annotated delete-machine first, and their Nodes', async () => {
    const machines = await list<Capi>(path(ns, 'machines'));
    expect(machines).to.have.length(3);
    const newest = [...machines].sort((a, b) => (b.metadata.creationTimestamp ?? '').localeCompare(a.metadata.creationTimestamp ?? '') || b.metadata.name.localeCompare(a.metadata.name))[0]!;
    const marked = machines.find((m) => m !== newest)!;
    await kubeRequest(kc, 'PATCH', path(ns, 'machines', marked.metadata.name), { metadata: { annotations: { 'cluster.x-k8s.io/delete-machine': 'yes' } } });
    await kubeRequest(kc, 'PATCH', `${path(ns, 'machinedeployments', 'md-a')}/scale`, { spec: { replicas: 1 } });

    const remaining = await eventually('one machine left', async () => {
      const ms = await list<Capi>(path(ns, 'machines'));
      return ms.length === 1 ? ms : false;
    });
    // marked goes first, then the newest of the rest
    expect(remaining[0]!.metadata.name).to.not.equal(marked.metadata.name);
    expect(remaining[0]!.metadata.name).to.not.equal(newest.metadata.name);
    const nodes = await waitForReadyNodes(kc, fixtureNodeSelector({ namespace: ns, kind: 'MachineDeployment', name: 'md-a' }), 1);
    expect(nodes[0]!.metadata!.name).to.equal(remaining[0]!.metadata.name);
  });

  it('drains a node through the Eviction API before deleting it', async () => {
    const [node] = await waitForReadyNodes(kc, fixtureNodeSelector({ namespace: ns, kind: 'MachineDeployment', name: 'md-a' }), 1);
    const name = node!.metadata!.name!;
    await core.createNamespacedPod({
      namespace: ns,
      body: {
        metadata: { name: 'on-node', namespace: ns },
        spec: {
          nodeName: name,
          tolerations: [{ key: 'dedicated', operator: 'Exists' }],
          containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.10' }],
        },
      },
    });
    await eventually('pod running', async () => (await core.readNamespacedPod({ name: 'on-node', namespace: ns })).status?.phase === 'Running');
    await kubeRequest(kc, 'PATCH', `${path(ns, 'machinedeployments', 'md-a')}/scale`, { spec: { replicas: 0 } });
    await eventually('node gone', async () => {
      const nodes = await core.listNode({ labelSelector: fixtureNodeSelector({ namespace: ns, kind: 'MachineDeployment', name: 'md-a' }) });
      return nodes.items.length === 0;
    });
    const pods = await core.listNamespacedPod({ namespace: ns, fieldSelector: 'metadata.name=on-node' });
    expect(pods.items, 'the pod was evicted before its node went').to.have.length(0);
  });

  it('a MachinePool gets Nodes spread over its failure domains, providerIDList and nodeRefs', async () => {
    await kubeRequest(kc, 'POST', path(ns, 'machinepools'), {
      apiVersion: V1B2,
      kind: 'MachinePool',
      metadata: { name: 'mp', namespace: ns, annotations: { 'capacity.cluster-autoscaler.kubernetes.io/cpu': '8', 'capacity.cluster-autoscaler.kubernetes.io/memory': '32Gi' } },
      spec: { clusterName: 'test', replicas: 2, failureDomains: ['zone-a', 'zone-b'], template: { metadata: { labels: { pool: 'mp' } }, spec: machineSpec() } },
    });
    const nodes = await waitForReadyNodes(kc, fixtureNodeSelector({ namespace: ns, kind: 'MachinePool', name: 'mp' }), 2);
    expect(nodes.map((n) => n.metadata!.labels!['topology.kubernetes.io/zone']).sort()).to.deep.equal(['zone-a', 'zone-b']);
    expect(nodes.every((n) => parseQuantity(n.status!.capacity!.cpu!) === 8)).to.equal(true);
    const mp = await eventually('MachinePool status', async () => {
      const got = await kubeRequest<Capi>(kc, 'GET', path(ns, 'machinepools', 'mp'));
      return got.status?.readyReplicas === 2 && got.spec.providerIDList?.length === 2 ? got : false;
    });
    expect(mp.spec.providerIDList!.sort()).to.deep.equal(nodes.map((n: V1Node) => n.spec!.providerID!).sort());
    expect(mp.status!.nodeRefs!.map((r) => r.name).sort()).to.deep.equal(nodes.map((n) => n.metadata!.name!).sort());

    await kubeRequest(kc, 'PATCH', `${path(ns, 'machinepools', 'mp')}/scale`, { spec: { replicas: 1 } });
    await waitForReadyNodes(kc, fixtureNodeSelector({ namespace: ns, kind: 'MachinePool', name: 'mp' }), 1);
    await eventually('providerIDList shrinks', async () => (await kubeRequest<Capi>(kc, 'GET', path(ns, 'machinepools', 'mp'))).spec.providerIDList?.length === 1);
  });

  it('a standalone Machine gets a Node after the boot delay', async () => {
    await kubeRequest(kc, 'POST', path(ns, 'machines'), {
      apiVersion: V1B2,
      kind: 'Machine',
      metadata: { name: 'solo', namespace: ns, labels: { role: 'solo' }, annotations: { 'capacity.cluster-autoscaler.kubernetes.io/cpu': '1500m', 'capacity.cluster-autoscaler.kubernetes.io/memory': '2Gi' } },
      spec: machineSpec({ failureDomain: 'zone-c' }),
    });
    const [node] = await waitForReadyNodes(kc, fixtureNodeSelector({ namespace: ns, kind: 'Machine', name: 'solo' }), 1);
    expect(node!.metadata!.name).to.equal('solo');
    expect(parseQuantity(node!.status!.allocatable!.cpu!)).to.equal(1.5);
    expect(node!.metadata!.labels).to.include({ role: 'solo', 'topology.kubernetes.io/zone': 'zone-c' });
    const m = await eventually('machine nodeRef', async () => {
      const got = await kubeRequest<Capi>(kc, 'GET', path(ns, 'machines', 'solo'));
      return got.status?.nodeRef ? got : false;
    });
    expect(m.spec.providerID).to.equal('kwok://solo');

    await kubeRequest(kc, 'DELETE', path(ns, 'machines', 'solo'));
    await eventually('node solo deleted', async () => (await core.listNode({ fieldSelector: 'metadata.name=solo' })).items.length === 0);
  });
});
