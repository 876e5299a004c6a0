import type { V1Node } from '@kubernetes/client-node';
import { ExtenderState } from '../../src/extender/state.js';

/**
 * Realistic request bodies for the load tests: an AdmissionReview as kube-apiserver
 * sends it for a Deployment's pod (~3 KB), and ExtenderArgs for N nodes.
 */
export function admissionReview(i: number): Record<string, unknown> {
  return {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: `0df28fbd-5f5f-11e8-bc74-36e6bb${String(i).padStart(6, '0')}`,
      kind: { group: '', version: 'v1', kind: 'Pod' },
      resource: { group: '', version: 'v1', resource: 'pods' },
      requestKind: { group: '', version: 'v1', kind: 'Pod' },
      requestResource: { group: '', version: 'v1', resource: 'pods' },
      operation: 'CREATE',
      namespace: 'shop',
      userInfo: { username: 'system:serviceaccount:kube-system:replicaset-controller', uid: 'a1b2', groups: ['system:serviceaccounts', 'system:serviceaccounts:kube-system', 'system:authenticated'] },
      object: {
        kind: 'Pod',
        apiVersion: 'v1',
        metadata: {
          generateName: 'checkout-7c9d8f6b5d-',
          namespace: 'shop',
          creationTimestamp: null,
          labels: { app: 'checkout', 'pod-template-hash': '7c9d8f6b5d', 'app.kubernetes.io/part-of': 'shop', tier: 'backend' },
          annotations: { 'kubectl.kubernetes.io/restartedAt': '2026-11-29T10:00:00Z', 'prometheus.io/scrape': 'true', 'prometheus.io/port': '9090' },
          ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'checkout-7c9d8f6b5d', uid: '5f0c4b3e-1d2a-4b8e-9f6a-2c3d4e5f6a7b', controller: true, blockOwnerDeletion: true }],
          managedFields: [{ manager: 'kube-controller-manager', operation: 'Update', apiVersion: 'v1', time: '2026-11-29T10:00:00Z', fieldsType: 'FieldsV1', fieldsV1: { 'f:metadata': { 'f:generateName': {}, 'f:labels': { '.': {}, 'f:app': {} } } } }],
        },
        spec: {
          volumes: [{ name: 'kube-api-access-x', projected: { sources: [{ serviceAccountToken: { expirationSeconds: 3607, path: 'token' } }, { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } }, { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } }], defaultMode: 420 } }],
          containers: [
            {
              name: 'checkout', image: 'registry.example.com/shop/checkout:1.42.0',
              ports: [{ name: 'http', containerPort: 8080, protocol: 'TCP' }, { name: 'metrics', containerPort: 9090, protocol: 'TCP' }],
              env: [{ name: 'LOG_LEVEL', value: 'info' }, { name: 'POD_NAME', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.name' } } }],
              resources: { limits: { cpu: '1', memory: '512Mi' }, requests: { cpu: '250m', memory: '256Mi' } },
              volumeMounts: [{ name: 'kube-api-access-x', readOnly: true, mountPath: '/var/run/secrets/kubernetes.io/serviceaccount' }],
              readinessProbe: { httpGet: { path: '/ready', port: 8080, scheme: 'HTTP' }, periodSeconds: 5, timeoutSeconds: 1, successThreshold: 1, failureThreshold: 3 },
              terminationMessagePath: '/dev/termination-log', terminationMessagePolicy: 'File', imagePullPolicy: 'IfNotPresent',
            },
            {
              name: 'proxy', image: 'registry.example.com/mesh/proxy:2.3.1',
              resources: { limits: { cpu: '200m', memory: '128Mi' }, requests: { cpu: '50m', memory: '64Mi' } },
              terminationMessagePath: '/dev/termination-log', terminationMessagePolicy: 'File', imagePullPolicy: 'IfNotPresent',
            },
          ],
          restartPolicy: 'Always', terminationGracePeriodSeconds: 30, dnsPolicy: 'ClusterFirst',
          serviceAccountName: 'default', serviceAccount: 'default', securityContext: {}, schedulerName: 'default-scheduler',
          tolerations: [
            { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
            { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
          ],
          topologySpreadConstraints: [{ maxSkew: 1, topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'ScheduleAnyway', labelSelector: { matchLabels: { app: 'checkout' } } }],
          priority: 0, enableServiceLinks: true, preemptionPolicy: 'PreemptLowerPriority',
        },
        status: {},
      },
      oldObject: null,
      dryRun: false,
      options: { kind: 'CreateOptions', apiVersion: 'meta.k8s.io/v1' },
    },
  };
}

export const nodeName = (i: number) => `ip-10-0-${Math.floor(i / 250)}-${i % 250}.eu-west-1.compute.internal`;

/** A Node as kube-scheduler sends it in NodeList mode (no image list), ~1.5 KB. */
export function node(i: number): V1Node {
  const name = nodeName(i);
  return {
    metadata: {
      name, uid: `uid-${i}`, resourceVersion: String(1000 + i),
      labels: {
        'kubernetes.io/hostname': name, 'kubernetes.io/os': 'linux', 'kubernetes.io/arch': 'amd64',
        'node.kubernetes.io/instance-type': 'm5.xlarge', 'topology.kubernetes.io/zone': `eu-west-1${'abc'[i % 3]}`,
        'topology.kubernetes.io/region': 'eu-west-1', 'cluster.x-k8s.io/deployment-name': 'workers-md-0',
      },
      annotations: { 'cluster.x-k8s.io/machine': `workers-md-0-${i}`, 'node.alpha.kubernetes.io/ttl': '0' },
    },
    spec: { providerID: `aws:///eu-west-1a/i-${i.toString(16).padStart(17, '0')}`, podCIDR: `10.${(i >> 8) & 255}.${i & 255}.0/24` },
    status: {
      capacity: { cpu: '4', memory: '16095676Ki', pods: '110', 'ephemeral-storage': '83873772Ki' },
      allocatable: { cpu: '3920m', memory: '15044028Ki', pods: '110', 'ephemeral-storage': '77298068004' },
      conditions: [
        { type: 'MemoryPressure', status: 'False', reason: 'KubeletHasSufficientMemory' },
        { type: 'DiskPressure', status: 'False', reason: 'KubeletHasNoDiskPressure' },
        { type: 'Ready', status: 'True', reason: 'KubeletReady' },
      ],
      addresses: [{ type: 'InternalIP', address: `10.0.${Math.floor(i / 250)}.${i % 250}` }, { type: 'Hostname', address: name }],
      nodeInfo: {
        machineID: '', systemUUID: '', bootID: '', kernelVersion: '6.1.0', osImage: 'Ubuntu 24.04', containerRuntimeVersion: 'containerd://2.0.0',
        kubeletVersion: 'v1.36.3', kubeProxyVersion: '', operatingSystem: 'linux', architecture: 'amd64',
      },
    },
  };
}

/** An ExtenderState for n nodes, a tenth disrupting, with varied usage. */
export function extenderState(n: number): ExtenderState {
  const state = new ExtenderState();
  for (let i = 0; i < n; i++) {
    const name = nodeName(i);
    state.setNode(name, {
      allocatable: { cpu: 3920, memory: 15_044_028 * 1024, pods: 110 },
      requested: { cpu: (i * 37) % 3500, memory: ((i * 53) % 14_000) * 1024 * 1024, pods: i % 60 },
    });
    if (i % 10 === 0) state.markDisrupting(name, 'consolidating: underutilized');
    if (i % 17 === 0) state.setProvisionedFor(name, ['ReplicaSet/shop/checkout-7c9d8f6b5d']);
  }
  return state;
}

/**
 * The ExtenderState for the kube-scheduler throughput test's kwok nodes (`kwok-<i>`,
 * 32 cpu / 128 GiB / 110 pods): usage spread over 0-90% so prioritize gives varied,
 * non-zero scores as on a busy cluster, and every 50th node being consolidated.
 */
export function kwokExtenderState(n: number): ExtenderState {
  const state = new ExtenderState();
  for (let i = 0; i < n; i++) {
    const name = `kwok-${i}`;
    state.setNode(name, {
      allocatable: { cpu: 32_000, memory: 128 * 2 ** 30, pods: 110 },
      requested: { cpu: (i * 613) % 28_800, memory: ((i * 389) % 115) * 2 ** 30, pods: i % 90 },
    });
    if (i % 50 === 49) state.markDisrupting(name, 'consolidating: underutilized');
  }
  return state;
}

export function extenderArgs(n: number, mode: 'names' | 'nodes'): Record<string, unknown> {
  const pod = (admissionReview(0).request as { object: Record<string, unknown> }).object;
  const podNamed = { ...pod, metadata: { ...(pod.metadata as object), name: 'checkout-7c9d8f6b5d-abcde', uid: 'pod-uid' } };
  if (mode === 'names') return { Pod: podNamed, Nodes: null, NodeNames: Array.from({ length: n }, (_, i) => nodeName(i)) };
  return { Pod: podNamed, Nodes: { metadata: {}, items: Array.from({ length: n }, (_, i) => node(i)) }, NodeNames: null };
}
