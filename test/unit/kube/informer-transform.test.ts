import type { KubernetesObject, V1Node, V1Pod } from '@kubernetes/client-node';
import { expect } from 'chai';
import { buildSnapshot } from '../../../src/cluster/build-snapshot.js';
import { emptyClusterObjects, type ClusterObjects } from '../../../src/cluster/objects.js';
import { podBlocker, unsafeLocalVolumes } from '../../../src/disruption/validation.js';
import { ExtenderState } from '../../../src/extender/state.js';
import { stripNode, stripObject, stripPod, transformFor } from '../../../src/kube/informer-transform.js';
import { isDemand } from '../../../src/scheduling/pod-demand.js';

const managedFields = [{ manager: 'kubectl', operation: 'Update', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': {} } }];

/** A pod using everything the snapshot, the extender and disruption read, and the fields the kubelet and tools add. */
function richPod(i: number, nodeName?: string): V1Pod {
  return {
    apiVersion: 'v1', kind: 'Pod',
    metadata: {
      name: `p${i}`, namespace: 'ns', uid: `u${i}`, labels: { app: `a${i % 3}` }, managedFields,
      annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{"big":"json"}', 'cluster-autoscaler.kubernetes.io/safe-to-evict-local-volumes': 'scratch' },
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', uid: 'x', controller: true }],
    },
    spec: {
      ...(nodeName ? { nodeName } : {}),
      priority: 10,
      nodeSelector: { 'topology.kubernetes.io/zone': 'z1' },
      affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: { app: 'a1' } } }] } },
      tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'x', effect: 'NoSchedule' }],
      topologySpreadConstraints: [{ maxSkew: 1, topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'DoNotSchedule', labelSelector: { matchLabels: { app: 'a0' } } }],
      overhead: { cpu: '10m' },
      initContainers: [{
        name: 'sidecar', image: 'x', restartPolicy: 'Always', resources: { requests: { cpu: '50m', memory: '32Mi' } },
        env: [{ name: 'A', value: 'b' }], volumeMounts: [{ name: 'data', mountPath: '/d' }],
      }],
      containers: [{
        name: 'c', image: 'registry.k8s.io/pause:3.10', resources: { requests: { cpu: `${100 + i}m`, memory: '128Mi' }, limits: { cpu: '1' } },
        ports: [{ containerPort: 80, hostPort: 8080 + (i % 2), protocol: 'TCP' }],
        command: ['/pause'], args: ['-v'], env: [{ name: 'X', value: 'y'.repeat(100) }], envFrom: [{ configMapRef: { name: 'cm' } }],
        livenessProbe: { httpGet: { path: '/', port: 80 } }, readinessProbe: { tcpSocket: { port: 80 } }, securityContext: { runAsNonRoot: true },
        volumeMounts: [{ name: 'kube-api-access', mountPath: '/var/run/secrets' }], terminationMessagePath: '/dev/termination-log',
        terminationMessagePolicy: 'File', imagePullPolicy: 'IfNotPresent',
      }],
      volumes: [
        { name: 'data', persistentVolumeClaim: { claimName: `claim-${i}` } },
        { name: 'scratch', emptyDir: {} },
        { name: 'host', hostPath: { path: '/var/log' } },
        { name: 'mem', emptyDir: { medium: 'Memory' } },
        { name: 'gen', ephemeral: { volumeClaimTemplate: { spec: { storageClassName: 'fast', accessModes: ['ReadWriteOnce'] } } } },
        { name: 'kube-api-access', projected: { sources: [{ serviceAccountToken: { path: 'token', expirationSeconds: 3607 } }, { configMap: { name: 'kube-root-ca.crt' } }] } },
      ],
    },
    status: {
      phase: nodeName ? 'Running' : 'Pending',
      conditions: nodeName ? [{ type: 'Ready', status: 'True' }] : [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable' }],
      hostIP: '10.0.0.1', podIP: '10.1.0.1', podIPs: [{ ip: '10.1.0.1' }], startTime: new Date(0),
      containerStatuses: [{ name: 'c', ready: true, restartCount: 0, image: 'x', imageID: 'y', state: { running: { startedAt: new Date(0) } } }],
      qosClass: 'Burstable',
    },
  };
}

function richNode(i: number): V1Node {
  return {
    apiVersion: 'v1', kind: 'Node',
    metadata: {
      name: `n${i}`, labels: { 'kubernetes.io/hostname': `n${i}`, 'topology.kubernetes.io/zone': `z${i % 2}` }, managedFields,
      annotations: { 'cluster.x-k8s.io/machine': `m${i}`, 'cluster.x-k8s.io/cluster-namespace': 'capi', 'headroom.dev/provisioned-for': 'ReplicaSet/ns/rs' },
    },
    spec: { providerID: `kwok://n${i}`, ...(i === 1 ? { unschedulable: true } : {}), taints: [{ key: 'dedicated', value: 'x', effect: 'NoSchedule' }] },
    status: {
      allocatable: { cpu: '8', memory: '32Gi', pods: '110' }, capacity: { cpu: '8', memory: '32Gi', pods: '110' },
      conditions: [{ type: 'Ready', status: 'True', lastHeartbeatTime: new Date(0), reason: 'KubeletReady', message: 'ready' }],
      addresses: [{ type: 'InternalIP', address: '10.0.0.1' }], daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
      nodeInfo: { machineID: 'a', systemUUID: 'b', bootID: 'c', kernelVersion: 'd', osImage: 'e', containerRuntimeVersion: 'f', kubeletVersion: 'g', kubeProxyVersion: 'h', operatingSystem: 'linux', architecture: 'amd64' },
      images: [{ names: ['registry.k8s.io/pause:3.10'], sizeBytes: 300_000 }],
    },
  };
}

const copy = <T>(o: T): T => JSON.parse(JSON.stringify(o)) as T;

describe('informer transform: what the caches keep of each object', () => {
  const nodes = [0, 1, 2].map(richNode);
  const pods = [...[0, 1, 2, 3].map((i) => richPod(i, `n${i % 3}`)), richPod(4), richPod(5)];
  const objects = (n: V1Node[], p: V1Pod[]): ClusterObjects => ({ ...emptyClusterObjects(), nodes: n, pods: p });
  const full = objects(copy(nodes), copy(pods));
  const stripped = objects(copy(nodes).map(stripNode), copy(pods).map(stripPod));

  it('a stripped cluster yields the identical snapshot and extender state', () => {
    const a = buildSnapshot(full, { strict: true });
    const b = buildSnapshot(stripped, { strict: true });
    expect(b).to.deep.equal(a);
    expect(a.nodes.flatMap((n) => n.pods).length, 'pods bound and counted').to.equal(4);
    expect(a.pendingPods.length).to.equal(2);
    const ea = ExtenderState.fromSnapshot(a, full.nodes);
    const eb = ExtenderState.fromSnapshot(b, stripped.nodes);
    for (const n of ['n0', 'n1', 'n2']) expect(eb.entry(n)).to.deep.equal(ea.entry(n));
  });

  it('keeps what disruption and demand read of a pod', () => {
    for (let i = 0; i < pods.length; i++) {
      const p = copy(pods[i]!);
      const s = stripPod(copy(pods[i]!));
      expect(unsafeLocalVolumes(s)).to.deep.equal(unsafeLocalVolumes(p));
      expect(podBlocker(s)).to.equal(podBlocker(p));
      expect(isDemand(s)).to.equal(isDemand(p));
    }
    expect(unsafeLocalVolumes(stripPod(copy(pods[0]!)))).to.deep.equal(['host']);
  });

  it('drops managedFields, last-applied, container run details, kubelet status and node inventory', () => {
    const p = stripPod(copy(pods[0]!));
    expect(p.metadata!.managedFields).to.equal(undefined);
    expect(p.metadata!.annotations).to.deep.equal({ 'cluster-autoscaler.kubernetes.io/safe-to-evict-local-volumes': 'scratch' });
    expect(Object.keys(p.spec!.containers[0]!).sort()).to.deep.equal(['image', 'name', 'ports', 'resources']);
    expect(Object.keys(p.spec!.initContainers![0]!).sort()).to.deep.equal(['image', 'name', 'resources', 'restartPolicy']);
    expect(p.spec!.volumes!.find((v) => v.name === 'kube-api-access')).to.deep.equal({ name: 'kube-api-access', projected: {} });
    expect(Object.keys(p.status!).sort()).to.deep.equal(['conditions', 'phase', 'qosClass']);
    const n = stripNode(copy(nodes[0]!));
    expect(Object.keys(n.status!).sort()).to.deep.equal(['allocatable', 'capacity', 'conditions']);
    expect(JSON.stringify(p).length, 'a third smaller at least').to.be.lessThan((JSON.stringify(pods[0]).length * 2) / 3);
  });

  it('keeps the resources of containers whose resize changes what the pod counts for, and only those', () => {
    const statuses = (cpu: string, allocated: string) => [
      { name: 'c', ready: true, restartCount: 0, image: 'x', imageID: 'y', resources: { requests: { cpu, memory: '128Mi' }, limits: { cpu: '1' } }, allocatedResources: { cpu: allocated, memory: '128Mi' } },
    ];
    const at = (cpu: string, allocated: string, conditions: NonNullable<V1Pod['status']>['conditions'] = []): V1Pod => {
      const p = copy(richPod(0, 'n0'));
      p.status = { ...p.status, conditions, containerStatuses: statuses(cpu, allocated) };
      return p;
    };
    const settled = at('100m', '100m');
    expect(stripPod(copy(settled)).status!.containerStatuses, 'status equal to the spec: dropped').to.equal(undefined);
    const shrinking = at('900m', '100m');
    expect(stripPod(copy(shrinking)).status!.containerStatuses).to.deep.equal([{ name: 'c', resources: { requests: { cpu: '900m', memory: '128Mi' } }, allocatedResources: { cpu: '100m', memory: '128Mi' } }]);
    const infeasible = at('50m', '50m', [{ type: 'PodResizePending', status: 'True', reason: 'Infeasible' }]);
    expect(stripPod(copy(infeasible)).status!.containerStatuses!.length).to.equal(1);
    for (const p of [settled, shrinking, infeasible]) {
      const a = buildSnapshot({ ...emptyClusterObjects(), nodes: [richNode(0)], pods: [copy(p)] }, { strict: true });
      const b = buildSnapshot({ ...emptyClusterObjects(), nodes: [richNode(0)], pods: [stripPod(copy(p))] }, { strict: true });
      expect(b.nodes[0]!.pods[0]!.requests).to.deep.equal(a.nodes[0]!.pods[0]!.requests);
    }
    const a = buildSnapshot({ ...emptyClusterObjects(), nodes: [richNode(0)], pods: [stripPod(copy(shrinking))] }, { strict: true });
    expect(a.nodes[0]!.pods[0]!.requests.cpu, 'the resize in progress counts').to.equal(900 + 50 + 10);
  });

  it('other kinds lose only metadata.managedFields and last-applied; nothing is mutated in place', () => {
    const ds: KubernetesObject & { spec: unknown } = { apiVersion: 'apps/v1', kind: 'DaemonSet', metadata: { name: 'd', managedFields, annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{}', keep: 'me' } }, spec: { template: { spec: { containers: [{ name: 'c', env: [] }] } } } };
    const before = copy(ds);
    const out = transformFor('daemonsets', 'apps')(ds) as typeof ds;
    expect(out).to.deep.equal({ ...before, metadata: { name: 'd', annotations: { keep: 'me' } } });
    expect(ds, 'the input object is left as it was').to.deep.equal(before);
    expect(transformFor('pods')).to.equal(stripPod);
    expect(transformFor('nodes')).to.equal(stripNode);
    expect(transformFor('pods', 'metrics.k8s.io')).to.equal(stripObject);
  });
});
