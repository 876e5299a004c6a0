import { expect } from 'chai';
import type { KubeConfig, V1Node, V1Pod, V1PodSpec } from '@kubernetes/client-node';
import { buildSnapshot } from '../../src/cluster/build-snapshot.js';
import { loadObjects } from '../../src/cluster/load-objects.js';
import { hostPortsConflict, type HostPort } from '../../src/scheduling/host-ports.js';
import { nodeSelectorMatches } from '../../src/scheduling/node-affinity.js';
import { toSchedulingPod } from '../../src/scheduling/pod-demand.js';
import { untoleratedTaint } from '../../src/scheduling/taints.js';
import { volumeTopologyAllows } from '../../src/scheduling/volume-topology.js';
import { kubeRequest } from '../harness/kube-request.js';
import { createTestNamespace, deleteTestNamespace } from '../harness/namespace.js';
import { eventually, isNodeReady } from '../harness/wait.js';
import { sharedControlPlane } from './hooks.js';

/**
 * Conformance of the pure filter predicates (src/scheduling) with the real
 * kube-scheduler: for every (pod, node) pair the scheduler decides whether the pod
 * fits (it binds it or reports it Unschedulable), and our predicates must agree.
 * Each pod is pinned to one node by its hostname label; three kwok nodes carry
 * different labels, taints and used host ports. A private NoSchedule taint fences
 * the nodes off from other test files' pods.
 */

const FENCE = 'conformance.headroom.dev/fence';
const HOSTNAME = 'kubernetes.io/hostname';
const ZONE = 'topology.kubernetes.io/zone';
const req = (...terms: object[]) => ({ nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: terms } } }) as V1PodSpec['affinity'];
const TOLERATE_ALL = [{ operator: 'Exists' }];
const port = (p: number, protocol = 'TCP', hostIP?: string) => [{ name: `c${p}`, image: 'registry.k8s.io/pause:3.10', ports: [{ containerPort: p, hostPort: p, protocol, ...(hostIP ? { hostIP } : {}) }] }];

/** The constraint under test, per case. */
const CASES: Record<string, Partial<V1PodSpec>> = {
  'nodeSelector': { nodeSelector: { tier: 'gold' }, tolerations: TOLERATE_ALL },
  'In': { affinity: req({ matchExpressions: [{ key: ZONE, operator: 'In', values: ['a', 'b'] }] }), tolerations: TOLERATE_ALL },
  'NotIn': { affinity: req({ matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['gold'] }] }), tolerations: TOLERATE_ALL },
  'Exists': { affinity: req({ matchExpressions: [{ key: 'tier', operator: 'Exists' }] }), tolerations: TOLERATE_ALL },
  'DoesNotExist': { affinity: req({ matchExpressions: [{ key: 'tier', operator: 'DoesNotExist' }] }), tolerations: TOLERATE_ALL },
  'Gt': { affinity: req({ matchExpressions: [{ key: 'cpus', operator: 'Gt', values: ['10'] }] }), tolerations: TOLERATE_ALL },
  'Lt': { affinity: req({ matchExpressions: [{ key: 'cpus', operator: 'Lt', values: ['10'] }] }), tolerations: TOLERATE_ALL },
  'OR of terms': { affinity: req({ matchExpressions: [{ key: ZONE, operator: 'In', values: ['c'] }] }, { matchExpressions: [{ key: 'arch', operator: 'In', values: ['arm64'] }] }), tolerations: TOLERATE_ALL },
  'AND in a term': { affinity: req({ matchExpressions: [{ key: ZONE, operator: 'In', values: ['a', 'b'] }, { key: 'arch', operator: 'In', values: ['amd64'] }] }), tolerations: TOLERATE_ALL },
  'matchFields NotIn': { affinity: req({ matchFields: [{ key: 'metadata.name', operator: 'NotIn', values: ['NODE_A'] }] }), tolerations: TOLERATE_ALL },
  'no tolerations': {},
  'Equal toleration': { tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'infra', effect: 'NoSchedule' }] },
  'wrong value': { tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'other', effect: 'NoSchedule' }] },
  'Exists, any effect': { tolerations: [{ key: 'evict', operator: 'Exists' }] },
  'NoExecute only': { tolerations: [{ key: 'evict', operator: 'Exists', effect: 'NoExecute' }, { key: 'dedicated', operator: 'Exists', effect: 'NoExecute' }] },
  'hostPort TCP 8080': { containers: port(8080), tolerations: TOLERATE_ALL },
  'hostPort UDP 8080': { containers: port(8080, 'UDP'), tolerations: TOLERATE_ALL },
  'hostPort 53 other IP': { containers: port(53, 'UDP', '10.0.0.2'), tolerations: TOLERATE_ALL },
  // Each host-port case uses its own port, so pods of different cases never conflict with each other.
  'hostPort 54 wildcard': { containers: port(54, 'UDP'), tolerations: TOLERATE_ALL },
};

describe('scheduling predicates agree with the real kube-scheduler', function () {
  let kc: KubeConfig;
  let ns: string;
  const nodes: V1Node[] = [];
  const usedPorts = new Map<string, HostPort[]>();

  before(async function () {
    this.timeout(180_000);
    kc = (await sharedControlPlane()).kubeConfig();
    ns = await createTestNamespace(kc, 'predicates');
    const specs: Array<[string, Record<string, string>, V1Node['spec']]> = [
      ['a', { [ZONE]: 'a', arch: 'amd64', cpus: '8', tier: 'gold' }, {}],
      ['b', { [ZONE]: 'b', arch: 'arm64', cpus: '16' }, { taints: [{ key: 'dedicated', value: 'infra', effect: 'NoSchedule' }] }],
      ['c', { [ZONE]: 'c', arch: 'amd64', tier: 'silver' }, { taints: [{ key: 'soft', value: 'x', effect: 'PreferNoSchedule' }, { key: 'evict', value: 'yes', effect: 'NoExecute' }] }],
    ];
    for (const [suffix, labels, spec] of specs) {
      const name = `${ns}-${suffix}`;
      const allocatable = { cpu: '8', memory: '16Gi', pods: '110' };
      nodes.push(await kubeRequest<V1Node>(kc, 'POST', '/api/v1/nodes', {
        metadata: { name, labels: { ...labels, [HOSTNAME]: name }, annotations: { 'kwok.x-k8s.io/node': 'fake' } },
        spec: { taints: [...(spec?.taints ?? []), { key: FENCE, value: ns, effect: 'NoSchedule' }] },
        status: { allocatable, capacity: allocatable },
      }));
    }
    await eventually('conformance nodes Ready', async () => {
      const ready = await Promise.all(nodes.map((n) => kubeRequest<V1Node>(kc, 'GET', `/api/v1/nodes/${n.metadata!.name}`)));
      return ready.every(isNodeReady);
    }, { timeoutMs: 60_000 });
    // Host ports already in use: TCP 8080 on a; UDP 53 and 54 on 10.0.0.1 on b.
    const holders: Array<[string, V1PodSpec['containers']]> = [['a', port(8080)], ['b', [...port(53, 'UDP', '10.0.0.1'), ...port(54, 'UDP', '10.0.0.1')]]];
    for (const [suffix, containers] of holders) {
      const nodeName = `${ns}-${suffix}`;
      const pod = await kubeRequest<V1Pod>(kc, 'POST', `/api/v1/namespaces/${ns}/pods`, {
        metadata: { name: `holder-${suffix}` }, spec: { nodeName, containers, tolerations: TOLERATE_ALL },
      });
      usedPorts.set(nodeName, toSchedulingPod(pod).hostPorts);
    }
  });

  after(async function () {
    this.timeout(60_000);
    if (!kc) return;
    if (ns) await deleteTestNamespace(kc, ns);
    for (const n of nodes) await kubeRequest(kc, 'DELETE', `/api/v1/nodes/${n.metadata!.name}`).catch(() => undefined);
  });

  it('volume topology: bound PV node affinity, WaitForFirstConsumer allowedTopologies, Immediate and missing claims', async function () {
    this.timeout(180_000);
    const post = <T>(path: string, body: unknown) => kubeRequest<T>(kc, 'POST', path, body);
    await post('/apis/storage.k8s.io/v1/storageclasses', {
      metadata: { name: `wffc-b-${ns}` }, provisioner: 'example.com/fake', volumeBindingMode: 'WaitForFirstConsumer',
      allowedTopologies: [{ matchLabelExpressions: [{ key: ZONE, values: ['b'] }] }],
    });
    await post('/apis/storage.k8s.io/v1/storageclasses', { metadata: { name: `wffc-any-${ns}` }, provisioner: 'example.com/fake', volumeBindingMode: 'WaitForFirstConsumer' });
    await post('/apis/storage.k8s.io/v1/storageclasses', { metadata: { name: `immediate-${ns}` }, provisioner: 'example.com/fake', volumeBindingMode: 'Immediate' });
    const claim = (name: string, spec: Record<string, unknown>, annotations: Record<string, string> = {}) => post(`/api/v1/namespaces/${ns}/persistentvolumeclaims`, {
      metadata: { name, annotations }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, ...spec },
    });
    const cases: Record<string, (nodeSuffix: string) => Promise<string>> = {
      'bound PV in zone a': async (n) => {
        const pv = `${ns}-pv-${n}`;
        await post('/api/v1/persistentvolumes', {
          metadata: { name: pv },
          spec: {
            capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], storageClassName: '', hostPath: { path: `/tmp/${pv}` },
            nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: ZONE, operator: 'In', values: ['a'] }] }] } },
          },
        });
        await claim(`bound-${n}`, { storageClassName: '', volumeName: pv }, { 'pv.kubernetes.io/bind-completed': 'yes' });
        return `bound-${n}`;
      },
      'WaitForFirstConsumer, zone b only': async (n) => { await claim(`wffc-b-${n}`, { storageClassName: `wffc-b-${ns}` }); return `wffc-b-${n}`; },
      'WaitForFirstConsumer, anywhere': async (n) => { await claim(`wffc-any-${n}`, { storageClassName: `wffc-any-${ns}` }); return `wffc-any-${n}`; },
      'Immediate, unbound': async (n) => { await claim(`imm-${n}`, { storageClassName: `immediate-${ns}` }); return `imm-${n}`; },
      'missing claim': async (n) => `missing-${n}`,
    };
    const pods: Array<{ name: string; claim: string; node: V1Node; pod: V1Pod; case: string }> = [];
    for (const [label, makeClaim] of Object.entries(cases)) {
      for (const node of nodes) {
        const nodeName = node.metadata!.name!;
        const suffix = nodeName.slice(-1);
        const claimName = await makeClaim(suffix);
        const pod = await post<V1Pod>(`/api/v1/namespaces/${ns}/pods`, {
          metadata: { name: `vol-${claimName}` },
          spec: {
            nodeSelector: { [HOSTNAME]: nodeName }, tolerations: TOLERATE_ALL,
            containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.10' }],
            volumes: [{ name: 'data', persistentVolumeClaim: { claimName } }],
          },
        });
        pods.push({ name: pod.metadata!.name!, claim: claimName, node, pod, case: label });
      }
    }

    // Fits: bound to the node, or (WaitForFirstConsumer) the node selected for provisioning.
    const verdicts = await eventually('a volume scheduling verdict for every pod', async () => {
      const podList = await kubeRequest<{ items: V1Pod[] }>(kc, 'GET', `/api/v1/namespaces/${ns}/pods`);
      const claims = await kubeRequest<{ items: Array<{ metadata: { name: string; annotations?: Record<string, string> } }> }>(kc, 'GET', `/api/v1/namespaces/${ns}/persistentvolumeclaims`);
      const selected = new Map(claims.items.map((c) => [c.metadata.name, c.metadata.annotations?.['volume.kubernetes.io/selected-node']]));
      const out = new Map<string, boolean>();
      for (const p of pods) {
        const live = podList.items.find((x) => x.metadata!.name === p.name);
        if (live?.spec?.nodeName || selected.get(p.claim) === p.node.metadata!.name) out.set(p.name, true);
        else if (live?.status?.conditions?.some((c) => c.type === 'PodScheduled' && c.status === 'False' && c.reason === 'Unschedulable')) out.set(p.name, false);
      }
      return out.size === pods.length ? out : false;
    }, { timeoutMs: 120_000, intervalMs: 500 });

    const listed = async (path: string) => JSON.stringify(await kubeRequest(kc, 'GET', path));
    const volumes = buildSnapshot(loadObjects([
      { source: 'pvs', text: await listed('/api/v1/persistentvolumes') },
      { source: 'pvcs', text: await listed(`/api/v1/namespaces/${ns}/persistentvolumeclaims`) },
      { source: 'classes', text: await listed('/apis/storage.k8s.io/v1/storageclasses') },
    ]), { strict: false }).volumes;
    const disagreements: string[] = [];
    let fits = 0;
    for (const p of pods) {
      const nodeName = p.node.metadata!.name!;
      const ours = volumeTopologyAllows(toSchedulingPod(p.pod), p.node.metadata!.labels ?? {}, volumes, nodeName);
      const theirs = verdicts.get(p.name)!;
      if (theirs) fits++;
      if (ours !== theirs) disagreements.push(`${p.case} on ${nodeName.slice(-1)}: scheduler ${theirs ? 'fits' : 'rejects'}, predicates ${ours ? 'fit' : 'reject'}`);
    }
    // Clean up the cluster-scoped objects this case made.
    for (const sc of ['wffc-b', 'wffc-any', 'immediate']) await kubeRequest(kc, 'DELETE', `/apis/storage.k8s.io/v1/storageclasses/${sc}-${ns}`).catch(() => undefined);
    for (const n of nodes) await kubeRequest(kc, 'DELETE', `/api/v1/persistentvolumes/${ns}-pv-${n.metadata!.name!.slice(-1)}`).catch(() => undefined);
    expect(disagreements).to.deep.equal([]);
    expect(fits).to.be.at.least(3);
    expect(pods.length - fits).to.be.at.least(6);
  });

  it('for every constraint and node, fits iff the predicates say so', async function () {
    this.timeout(180_000);
    const nodeA = nodes[0]!.metadata!.name!;
    const pods: Array<{ name: string; node: V1Node; pod: V1Pod; case: string }> = [];
    let i = 0;
    for (const [label, c] of Object.entries(CASES)) {
      const spec = JSON.parse(JSON.stringify(c).replaceAll('NODE_A', nodeA)) as Partial<V1PodSpec>;
      for (const node of nodes) {
        const nodeName = node.metadata!.name!;
        const body: V1Pod = {
          metadata: { name: `case-${i}-${nodeName.slice(-1)}`, namespace: ns },
          spec: {
            containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.10' }],
            ...spec,
            nodeSelector: { ...(spec.nodeSelector ?? {}), [HOSTNAME]: nodeName },
            tolerations: [...(spec.tolerations ?? []), { key: FENCE, operator: 'Equal', value: ns, effect: 'NoSchedule' }],
          },
        };
        pods.push({ name: body.metadata!.name!, node, pod: await kubeRequest<V1Pod>(kc, 'POST', `/api/v1/namespaces/${ns}/pods`, body), case: label });
      }
      i++;
    }

    const verdicts = await eventually('a scheduling verdict for every pod', async () => {
      const { items } = await kubeRequest<{ items: V1Pod[] }>(kc, 'GET', `/api/v1/namespaces/${ns}/pods`);
      const out = new Map<string, boolean>();
      for (const p of items) {
        if (!p.metadata!.name!.startsWith('case-')) continue;
        if (p.spec?.nodeName) out.set(p.metadata!.name!, true);
        else if (p.status?.conditions?.some((c) => c.type === 'PodScheduled' && c.status === 'False' && c.reason === 'Unschedulable')) out.set(p.metadata!.name!, false);
      }
      return out.size === pods.length ? out : false;
    }, { timeoutMs: 120_000, intervalMs: 500 });

    const disagreements: string[] = [];
    let fits = 0;
    for (const { name, node, pod, case: label } of pods) {
      const sp = toSchedulingPod(pod);
      const nodeName = node.metadata!.name!;
      const ours = nodeSelectorMatches(sp, node.metadata!.labels ?? {}, nodeName)
        && !untoleratedTaint(node.spec?.taints ?? [], sp.tolerations)
        && !hostPortsConflict(sp.hostPorts, usedPorts.get(nodeName) ?? []);
      const theirs = verdicts.get(name)!;
      if (theirs) fits++;
      if (ours !== theirs) disagreements.push(`${label} on ${nodeName.slice(-1)}: scheduler ${theirs ? 'fits' : 'rejects'}, predicates ${ours ? 'fit' : 'reject'}`);
    }
    expect(disagreements).to.deep.equal([]);
    // Both outcomes occur, so the comparison means something.
    expect(fits).to.be.greaterThan(10);
    expect(pods.length - fits).to.be.greaterThan(10);
  });
});
