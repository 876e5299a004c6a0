/**
 * Apiserver-shaped JSON of the objects a kwok cluster holds (test/bench/scale.ts's
 * steady load): Nodes as kwok reports them, pods with the apiserver's defaults, a
 * service-account volume, kwok's status and managedFields. For in-process benchmarks.
 */
let rv = 1000;
export const currentResourceVersion = () => String(rv);
const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');
export const base = Date.parse('2026-12-01T00:00:00Z');
const uid = (s: string) => `00000000-0000-4000-8000-${s.padStart(12, '0').slice(-12)}`;

export function nodeJson(i: number, heartbeat: number, cordoned = false): Record<string, unknown> {
  const name = `load-${i}`;
  const alloc = { cpu: '64', memory: '256Gi', pods: '250', 'ephemeral-storage': '1Ti' };
  const cond = (type: string, status: string, reason: string, message: string) => ({
    type, status, reason, message, lastHeartbeatTime: iso(heartbeat), lastTransitionTime: iso(base),
  });
  return {
    metadata: {
      name, uid: uid(`n${i}`), resourceVersion: String(rv++), creationTimestamp: iso(base),
      labels: {
        'beta.kubernetes.io/arch': 'amd64', 'beta.kubernetes.io/os': 'linux', 'kubernetes.io/arch': 'amd64', 'kubernetes.io/hostname': name,
        'kubernetes.io/os': 'linux', 'kubernetes.io/role': 'agent', 'node-role.kubernetes.io/agent': '', type: 'kwok', 'topology.kubernetes.io/zone': `zone-${i % 3}`,
      },
      annotations: { 'kwok.x-k8s.io/node': 'fake', 'node.alpha.kubernetes.io/ttl': '0', 'volumes.kubernetes.io/controller-managed-attach-detach': 'true' },
      managedFields: [
        { manager: 'bench', operation: 'Update', apiVersion: 'v1', time: iso(base), fieldsType: 'FieldsV1', fieldsV1: { 'f:metadata': { 'f:annotations': { '.': {}, 'f:kwok.x-k8s.io/node': {} }, 'f:labels': { '.': {}, 'f:kubernetes.io/hostname': {}, 'f:type': {}, 'f:topology.kubernetes.io/zone': {} } } } },
        { manager: 'kwok', operation: 'Update', apiVersion: 'v1', time: iso(heartbeat), fieldsType: 'FieldsV1', subresource: 'status', fieldsV1: { 'f:status': { 'f:allocatable': { 'f:cpu': {}, 'f:memory': {}, 'f:pods': {} }, 'f:capacity': { 'f:cpu': {}, 'f:memory': {}, 'f:pods': {} }, 'f:conditions': { 'k:{"type":"Ready"}': { '.': {}, 'f:lastHeartbeatTime': {}, 'f:lastTransitionTime': {}, 'f:message': {}, 'f:reason': {}, 'f:status': {}, 'f:type': {} } }, 'f:daemonEndpoints': { 'f:kubeletEndpoint': { 'f:Port': {} } }, 'f:nodeInfo': { 'f:architecture': {}, 'f:kubeletVersion': {} } } } },
      ],
    },
    spec: cordoned ? { unschedulable: true, taints: [{ key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule', timeAdded: iso(heartbeat) }] } : {},
    status: {
      capacity: alloc, allocatable: alloc,
      conditions: [
        cond('MemoryPressure', 'False', 'KubeletHasSufficientMemory', 'kubelet has sufficient memory available'),
        cond('DiskPressure', 'False', 'KubeletHasNoDiskPressure', 'kubelet has no disk pressure'),
        cond('PIDPressure', 'False', 'KubeletHasSufficientPID', 'kubelet has sufficient PID available'),
        cond('NetworkUnavailable', 'False', 'RouteCreated', 'RouteController created a route'),
        cond('Ready', 'True', 'KubeletReady', 'kubelet is posting ready status'),
      ],
      addresses: [{ type: 'InternalIP', address: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}` }, { type: 'Hostname', address: name }],
      daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
      nodeInfo: {
        machineID: uid(`m${i}`), systemUUID: uid(`s${i}`), bootID: uid(`b${i}`), kernelVersion: '6.8.0', osImage: 'Ubuntu 24.04 LTS',
        containerRuntimeVersion: 'kwok-v0.8.0', kubeletVersion: 'kwok-v0.8.0', kubeProxyVersion: '', operatingSystem: 'linux', architecture: 'amd64',
      },
      phase: 'Running',
    },
  };
}

export function podJson(i: number, nodeIndex: number): Record<string, unknown> {
  const name = `load-${i}`;
  const vol = `kube-api-access-${(i * 7919).toString(36).slice(-5).padStart(5, 'x')}`;
  const ip = `10.${200 + ((i >> 16) & 7)}.${(i >> 8) & 255}.${i & 255}`;
  const hostIP = `10.${(nodeIndex >> 16) & 255}.${(nodeIndex >> 8) & 255}.${nodeIndex & 255}`;
  const t = iso(base + 1000);
  return {
    metadata: {
      name, namespace: 'scale-load', uid: uid(`p${i}`), resourceVersion: String(rv++), creationTimestamp: iso(base), labels: { app: `app-${i % 500}` },
      managedFields: [
        { manager: 'bench', operation: 'Update', apiVersion: 'v1', time: iso(base), fieldsType: 'FieldsV1', fieldsV1: { 'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } }, 'f:spec': { 'f:containers': { 'k:{"name":"c"}': { '.': {}, 'f:image': {}, 'f:imagePullPolicy': {}, 'f:name': {}, 'f:resources': { '.': {}, 'f:requests': { '.': {}, 'f:cpu': {}, 'f:memory': {} } }, 'f:terminationMessagePath': {}, 'f:terminationMessagePolicy': {} } }, 'f:dnsPolicy': {}, 'f:enableServiceLinks': {}, 'f:nodeName': {}, 'f:restartPolicy': {}, 'f:schedulerName': {}, 'f:securityContext': {}, 'f:terminationGracePeriodSeconds': {} } } },
        { manager: 'kwok', operation: 'Update', apiVersion: 'v1', time: t, fieldsType: 'FieldsV1', subresource: 'status', fieldsV1: { 'f:status': { 'f:conditions': { 'k:{"type":"Ready"}': { '.': {}, 'f:lastProbeTime': {}, 'f:lastTransitionTime': {}, 'f:status': {}, 'f:type': {} } }, 'f:containerStatuses': {}, 'f:hostIP': {}, 'f:hostIPs': {}, 'f:phase': {}, 'f:podIP': {}, 'f:podIPs': { '.': {}, [`k:{"ip":"${ip}"}`]: { '.': {}, 'f:ip': {} } }, 'f:startTime': {} } } },
      ],
    },
    spec: {
      volumes: [{ name: vol, projected: { sources: [
        { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
        { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
        { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
      ], defaultMode: 420 } }],
      containers: [{
        name: 'c', image: 'registry.k8s.io/pause:3.10', resources: { requests: { cpu: '100m', memory: '128Mi' } },
        volumeMounts: [{ name: vol, readOnly: true, mountPath: '/var/run/secrets/kubernetes.io/serviceaccount' }],
        terminationMessagePath: '/dev/termination-log', terminationMessagePolicy: 'File', imagePullPolicy: 'IfNotPresent',
      }],
      restartPolicy: 'Always', terminationGracePeriodSeconds: 30, dnsPolicy: 'ClusterFirst', serviceAccountName: 'default', serviceAccount: 'default',
      nodeName: `load-${nodeIndex}`, securityContext: {}, schedulerName: 'default-scheduler',
      tolerations: [
        { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
        { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
      ],
      priority: 0, enableServiceLinks: true, preemptionPolicy: 'PreemptLowerPriority',
    },
    status: {
      phase: 'Running',
      conditions: ['PodReadyToStartContainers', 'Initialized', 'Ready', 'ContainersReady', 'PodScheduled'].map((type) => ({ type, status: 'True', lastProbeTime: null, lastTransitionTime: t })),
      hostIP, hostIPs: [{ ip: hostIP }], podIP: ip, podIPs: [{ ip }], startTime: t,
      containerStatuses: [{
        name: 'c', state: { running: { startedAt: t } }, lastState: {}, ready: true, restartCount: 0,
        image: 'registry.k8s.io/pause:3.10', imageID: 'registry.k8s.io/pause@sha256:ee6521f290b2168b6e0935a181d4cff9be1ac3f505666ef0e3c98fae8199917a', started: true,
      }],
      qosClass: 'Burstable',
    },
  };
}

