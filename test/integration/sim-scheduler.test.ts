import { randomBytes } from 'node:crypto';
import type { KubeConfig, V1Node, V1Pod, V1PodSpec, V1Taint } from '@kubernetes/client-node';
import { expect } from 'chai';
import { interPodFilter } from '../../src/sim/inter-pod.js';
import { Random } from '../../src/sim/random.js';
import { toSchedulingPod } from '../../src/scheduling/pod-demand.js';
import { SimScheduler, schedulableNode, schedulablePod } from '../../src/sim/scheduler.js';
import type { ControlPlane } from '../harness/control-plane.js';
import { kubeRequest } from '../harness/kube-request.js';
import { createTestNamespace, deleteTestNamespace } from '../harness/namespace.js';
import { eventually, isNodeReady } from '../harness/wait.js';
import { sharedControlPlane } from './hooks.js';

/**
 * Cross-check: the simulator's kube-scheduler filter against the real kube-scheduler.
 * Each scenario is one kwok node (with some pods already bound) and one new pod; the
 * pod is pinned to the scenario's node by a kubernetes.io/hostname nodeSelector (on
 * both sides), so the real scheduler binds it iff the node passes its filters. The
 * simulator must agree on every scenario.
 */

interface Scenario {
  name: string;
  node: { cpu: string; memory: string; pods?: string; gpu?: string; labels?: Record<string, string>; taints?: V1Taint[]; unschedulable?: boolean };
  bound?: Partial<V1PodSpec>[];
  boundLabels?: Record<string, string>;
  pod: Partial<V1PodSpec>;
  podLabels?: Record<string, string>;
}

const container = (cpu: string, memory: string, extra: Record<string, unknown> = {}) => ({ name: 'c', image: 'registry.example/app:1', resources: { requests: { cpu, memory } }, ...extra });

const SCENARIOS: Scenario[] = [
  { name: 'fits', node: { cpu: '4', memory: '8Gi' }, pod: { containers: [container('1', '1Gi')] } },
  { name: 'cpu too large', node: { cpu: '4', memory: '8Gi' }, pod: { containers: [container('4500m', '1Gi')] } },
  { name: 'memory after bound pods', node: { cpu: '4', memory: '8Gi' }, bound: [{ containers: [container('1', '6Gi')] }], pod: { containers: [container('1', '3Gi')] } },
  { name: 'exactly full', node: { cpu: '4', memory: '8Gi' }, bound: [{ containers: [container('3', '4Gi')] }], pod: { containers: [container('1', '4Gi')] } },
  { name: 'pod count', node: { cpu: '4', memory: '8Gi', pods: '2' }, bound: [{ containers: [container('100m', '1Mi')] }, { containers: [container('100m', '1Mi')] }], pod: { containers: [container('100m', '1Mi')] } },
  { name: 'init container larger than node', node: { cpu: '2', memory: '8Gi' }, pod: { initContainers: [{ name: 'init', image: 'registry.example/init:1', resources: { requests: { cpu: '3' } } }], containers: [container('500m', '1Gi')] } },
  { name: 'sidecar plus app', node: { cpu: '2', memory: '8Gi' }, pod: { initContainers: [{ name: 'proxy', image: 'registry.example/proxy:1', restartPolicy: 'Always', resources: { requests: { cpu: '1' } } }], containers: [container('1500m', '1Gi')] } },
  { name: 'gpu missing', node: { cpu: '8', memory: '8Gi' }, pod: { containers: [{ name: 'c', image: 'registry.example/app:1', resources: { requests: { cpu: '1' }, limits: { 'nvidia.com/gpu': '1' } } }] } },
  { name: 'gpu present', node: { cpu: '8', memory: '8Gi', gpu: '2' }, pod: { containers: [{ name: 'c', image: 'registry.example/app:1', resources: { requests: { cpu: '1' }, limits: { 'nvidia.com/gpu': '1' } } }] } },
  { name: 'nodeSelector matches', node: { cpu: '4', memory: '8Gi', labels: { disk: 'ssd' } }, pod: { nodeSelector: { disk: 'ssd' }, containers: [container('1', '1Gi')] } },
  { name: 'nodeSelector mismatch', node: { cpu: '4', memory: '8Gi', labels: { disk: 'hdd' } }, pod: { nodeSelector: { disk: 'ssd' }, containers: [container('1', '1Gi')] } },
  { name: 'affinity Gt', node: { cpu: '4', memory: '8Gi', labels: { gen: '5' } }, pod: { affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'gen', operator: 'Gt', values: ['4'] }] }] } } }, containers: [container('1', '1Gi')] } },
  { name: 'affinity NotIn', node: { cpu: '4', memory: '8Gi', labels: { zone: 'a' } }, pod: { affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'zone', operator: 'NotIn', values: ['a'] }] }] } } }, containers: [container('1', '1Gi')] } },
  { name: 'untolerated NoSchedule', node: { cpu: '4', memory: '8Gi', taints: [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }] }, pod: { containers: [container('1', '1Gi')] } },
  { name: 'tolerated NoSchedule', node: { cpu: '4', memory: '8Gi', taints: [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }] }, pod: { tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'gpu', effect: 'NoSchedule' }], containers: [container('1', '1Gi')] } },
  { name: 'PreferNoSchedule only', node: { cpu: '4', memory: '8Gi', taints: [{ key: 'soft', effect: 'PreferNoSchedule' }] }, pod: { containers: [container('1', '1Gi')] } },
  { name: 'hostPort conflict', node: { cpu: '4', memory: '8Gi' }, bound: [{ containers: [container('100m', '1Mi', { ports: [{ containerPort: 80, hostPort: 8080 }] })] }], pod: { containers: [container('100m', '1Mi', { ports: [{ containerPort: 80, hostPort: 8080 }] })] } },
  { name: 'hostPort other protocol', node: { cpu: '4', memory: '8Gi' }, bound: [{ containers: [container('100m', '1Mi', { ports: [{ containerPort: 80, hostPort: 8080 }] })] }], pod: { containers: [container('100m', '1Mi', { ports: [{ containerPort: 80, hostPort: 8080, protocol: 'UDP' }] })] } },
  { name: 'cordoned', node: { cpu: '4', memory: '8Gi', unschedulable: true }, pod: { containers: [container('1', '1Gi')] } },
  // Inter-pod constraints. GRP is replaced by a label value unique to the scenario, so pods of
  // other scenarios and other test files never match.
  { name: 'anti-affinity, matching pod on the node', node: { cpu: '4', memory: '8Gi' }, bound: [{ containers: [container('100m', '1Mi')] }], boundLabels: { grp: 'GRP' }, pod: { affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: { grp: 'GRP' } } }] } }, containers: [container('100m', '1Mi')] } },
  { name: 'anti-affinity, no matching pod', node: { cpu: '4', memory: '8Gi' }, bound: [{ containers: [container('100m', '1Mi')] }], boundLabels: { grp: 'other-GRP' }, pod: { affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: { grp: 'GRP' } } }] } }, containers: [container('100m', '1Mi')] } },
  { name: 'affinity, matching pod on the node', node: { cpu: '4', memory: '8Gi' }, bound: [{ containers: [container('100m', '1Mi')] }], boundLabels: { grp: 'GRP' }, pod: { affinity: { podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: { grp: 'GRP' } } }] } }, containers: [container('100m', '1Mi')] } },
  { name: 'affinity, first pod of its own group', node: { cpu: '4', memory: '8Gi' }, podLabels: { grp: 'GRP' }, pod: { affinity: { podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: { grp: 'GRP' } } }] } }, containers: [container('100m', '1Mi')] } },
  { name: 'affinity, nothing to join', node: { cpu: '4', memory: '8Gi' }, pod: { affinity: { podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: { grp: 'GRP' } } }] } }, containers: [container('100m', '1Mi')] } },
  { name: 'symmetric anti-affinity of a bound pod', node: { cpu: '4', memory: '8Gi' }, bound: [{ affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: { grp: 'GRP' } } }] } }, containers: [container('100m', '1Mi')] }], podLabels: { grp: 'GRP' }, pod: { containers: [container('100m', '1Mi')] } },
  { name: 'zone spread, node without the zone label', node: { cpu: '4', memory: '8Gi' }, pod: { topologySpreadConstraints: [{ maxSkew: 1, topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'DoNotSchedule', labelSelector: { matchLabels: { grp: 'GRP' } } }], containers: [container('100m', '1Mi')] } },
  { name: 'zone spread, one domain', node: { cpu: '4', memory: '8Gi', labels: { 'topology.kubernetes.io/zone': 'GRP' } }, bound: [{ containers: [container('100m', '1Mi')] }], boundLabels: { grp: 'GRP' }, podLabels: { grp: 'GRP' }, pod: { topologySpreadConstraints: [{ maxSkew: 1, topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'DoNotSchedule', labelSelector: { matchLabels: { grp: 'GRP' } } }], containers: [container('100m', '1Mi')] } },
];

describe('simulator scheduling vs the real kube-scheduler', function () {
  this.timeout(300_000);
  let cp: ControlPlane;
  let kc: KubeConfig;
  let ns: string;
  const suffix = randomBytes(3).toString('hex');
  const isolate = { key: 'headroom.dev/sim-crosscheck', value: suffix, effect: 'NoSchedule' };
  const nodeNames: string[] = [];

  before(async function () {
    this.timeout(300_000);
    cp = await sharedControlPlane();
    kc = cp.kubeConfig();
    ns = await createTestNamespace(kc, 'sim-crosscheck');
  });

  after(async () => {
    if (!kc) return;
    for (const n of nodeNames) await kubeRequest(kc, 'DELETE', `/api/v1/nodes/${n}`).catch(() => {});
    if (ns) await deleteTestNamespace(kc, ns);
  });

  it('agrees on feasibility for every scenario', async () => {
    const cases = SCENARIOS.map((s0, i) => {
      const s = JSON.parse(JSON.stringify(s0).replaceAll('GRP', `g${i}-${suffix}`)) as Scenario;
      const nodeName = `simx-${suffix}-${i}`;
      nodeNames.push(nodeName);
      const allocatable: Record<string, string> = { cpu: s.node.cpu, memory: s.node.memory, pods: s.node.pods ?? '110' };
      if (s.node.gpu) allocatable['nvidia.com/gpu'] = s.node.gpu;
      const node: V1Node = {
        apiVersion: 'v1', kind: 'Node',
        metadata: { name: nodeName, labels: { 'kubernetes.io/hostname': nodeName, ...s.node.labels }, annotations: { 'kwok.x-k8s.io/node': 'fake' } },
        // Every scenario node carries an isolation taint that only this test's pods tolerate.
        spec: { taints: [isolate, ...(s.node.taints ?? [])], ...(s.node.unschedulable ? { unschedulable: true } : {}) },
        status: { capacity: allocatable, allocatable },
      };
      // Pinned by the hostname label (not a metadata.name field term, which the shared
      // spread helpers cannot see on existing nodes: see spreadCountsNode).
      const podSpec = (spec: Partial<V1PodSpec>): V1PodSpec => ({
        ...spec,
        containers: spec.containers ?? [],
        nodeSelector: { ...spec.nodeSelector, 'kubernetes.io/hostname': nodeName },
        tolerations: [...(spec.tolerations ?? []), { key: isolate.key, operator: 'Equal', value: suffix, effect: 'NoSchedule' }],
      });
      const bound: V1Pod[] = (s.bound ?? []).map((spec, k) => ({
        apiVersion: 'v1', kind: 'Pod', metadata: { name: `bound-${i}-${k}`, namespace: ns, labels: { ...s.boundLabels } }, spec: { ...podSpec(spec), nodeName },
      }));
      const pod: V1Pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: `new-${i}`, namespace: ns, labels: { scenario: String(i), ...s.podLabels } }, spec: podSpec(s.pod) };
      return { s, node, bound, pod };
    });

    // The simulator's verdicts.
    const scheduler = new SimScheduler(new Random(1));
    const simulated = cases.map((c) => {
      const pod = schedulablePod(c.pod);
      const bound = c.bound.map((b) => toSchedulingPod(b));
      const topo = { labels: c.node.metadata!.labels!, taints: c.node.spec?.taints ?? [], pods: bound };
      const anti = bound.filter((b) => b.affinity?.podAntiAffinity).map((b) => ({ pod: b, nodeLabels: topo.labels }));
      return scheduler.feasible(pod, schedulableNode(c.node, c.bound)) && interPodFilter(pod.scheduling, [topo], anti)(topo);
    });

    // The real scheduler's verdicts.
    for (const c of cases) await kubeRequest(kc, 'POST', '/api/v1/nodes', c.node);
    await eventually('scenario nodes Ready (kwok)', async () => {
      const nodes = await Promise.all(cases.map((c) => kubeRequest<V1Node>(kc, 'GET', `/api/v1/nodes/${c.node.metadata!.name}`)));
      return nodes.every(isNodeReady);
    }, { timeoutMs: 60_000 });
    for (const c of cases) for (const b of c.bound) await kubeRequest(kc, 'POST', `/api/v1/namespaces/${ns}/pods`, b);
    await eventually('bound pods Running', async () => {
      const { items } = await kubeRequest<{ items: V1Pod[] }>(kc, 'GET', `/api/v1/namespaces/${ns}/pods`);
      return items.filter((p) => p.metadata?.name?.startsWith('bound-')).every((p) => p.status?.phase === 'Running') && items.length === cases.reduce((n, c) => n + c.bound.length, 0);
    }, { timeoutMs: 60_000 });
    for (const c of cases) await kubeRequest(kc, 'POST', `/api/v1/namespaces/${ns}/pods`, c.pod);
    const real = await eventually('every scenario pod bound or Unschedulable', async () => {
      const verdicts = await Promise.all(cases.map(async (c) => {
        const p = await kubeRequest<V1Pod>(kc, 'GET', `/api/v1/namespaces/${ns}/pods/${c.pod.metadata!.name}`);
        if (p.spec?.nodeName) return true;
        const cond = p.status?.conditions?.find((x) => x.type === 'PodScheduled');
        return cond?.status === 'False' && cond.reason === 'Unschedulable' ? false : undefined;
      }));
      return verdicts.every((v) => v !== undefined) ? verdicts as boolean[] : false;
    }, { timeoutMs: 120_000, intervalMs: 500 });

    const table = cases.map((c, i) => ({ scenario: c.s.name, real: real[i], sim: simulated[i] }));
    expect(table.filter((r) => r.real !== r.sim), JSON.stringify(table)).to.deep.equal([]);
    // The scenarios are only a cross-check if both verdicts occur.
    expect(real.filter(Boolean).length).to.be.within(3, cases.length - 3);
  });
});
