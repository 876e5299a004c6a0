import type { KubernetesObject, V1Pod } from '@kubernetes/client-node';
import { resizeStatusesThatCount } from '../scheduling/resources.js';

/**
 * What the informer caches keep of each object (client-go's informer transform):
 * fields Headroom never reads are dropped as an object arrives, before it is stored,
 * so a 50,000-pod cluster's cache holds only what decisions use. The lists below were
 * checked against every reader of cached objects (src/ grep for each field: the
 * snapshot, the webhook and extender, disruption, prediction, metrics, status writers).
 * No cached Pod or Node is ever written back to the API (taints are patched on a fresh
 * GET, provisioned-for is a merge patch), so nothing dropped can be lost from the cluster.
 * Every kind loses metadata.managedFields and kubectl's last-applied annotation.
 * Drop only what no code reads: a field added here must be grepped for first
 * (test/unit/kube/informer-transform.test.ts checks the snapshot is unchanged).
 */

/** Per container: what is run and how, never read (resources, ports, restartPolicy, name and image stay). */
const CONTAINER_UNREAD = new Set([
  'env', 'envFrom', 'command', 'args', 'volumeMounts', 'volumeDevices', 'livenessProbe', 'readinessProbe', 'startupProbe',
  'lifecycle', 'terminationMessagePath', 'terminationMessagePolicy', 'imagePullPolicy', 'workingDir', 'stdin', 'stdinOnce', 'tty',
  'securityContext', 'resizePolicy',
]);
/**
 * Pod status: the kubelet's per-container report and addresses; phase, conditions and the rest stay.
 * Of the container statuses, only the resources of a container whose resize changes what
 * it counts for are kept (resizeStatusesThatCount), as few pods are resizing at any time.
 */
const POD_STATUS_UNREAD = new Set([
  'containerStatuses', 'initContainerStatuses', 'ephemeralContainerStatuses', 'podIP', 'podIPs', 'hostIP', 'hostIPs', 'startTime',
]);
/** Volume sources whose content is read (storage topology, local storage for disruption); others keep only their kind. */
const VOLUME_READ = new Set(['name', 'persistentVolumeClaim', 'ephemeral', 'hostPath', 'emptyDir']);
/** Node status: the kubelet's inventory; allocatable, capacity, conditions and phase stay. */
const NODE_STATUS_UNREAD = new Set(['images', 'nodeInfo', 'daemonEndpoints', 'addresses', 'volumesInUse', 'volumesAttached', 'config', 'runtimeHandlers', 'features']);
const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A copy without the given keys (a fresh object rather than `delete`, which would leave it in V8's slower, larger dictionary mode). */
function without(o: Obj, drop: ReadonlySet<string>): Obj {
  const out: Obj = {};
  for (const k in o) if (!drop.has(k)) out[k] = o[k];
  return out;
}

const METADATA_UNREAD = new Set(['managedFields']);

function metadata(m: unknown): unknown {
  if (!isObj(m)) return m;
  const out = without(m, METADATA_UNREAD);
  if (isObj(m.annotations) && LAST_APPLIED in m.annotations) out.annotations = without(m.annotations, new Set([LAST_APPLIED]));
  return out;
}

function containers(list: unknown): unknown {
  return Array.isArray(list) ? list.map((c) => (isObj(c) ? without(c, CONTAINER_UNREAD) : c)) : list;
}

function volume(v: unknown): unknown {
  if (!isObj(v)) return v;
  const out: Obj = {};
  for (const k in v) out[k] = VOLUME_READ.has(k) ? v[k] : {};
  return out;
}

/** Any kind: metadata only. */
export function stripObject<T extends KubernetesObject>(o: T): T {
  const src = o as unknown as Obj;
  if (!isObj(src.metadata)) return o;
  return { ...src, metadata: metadata(src.metadata) } as unknown as T;
}

export function stripPod<T extends KubernetesObject>(o: T): T {
  const src = o as unknown as Obj;
  const out: Obj = {};
  for (const k in src) out[k] = src[k];
  out.metadata = metadata(src.metadata);
  if (isObj(src.spec)) {
    const spec: Obj = {};
    for (const k in src.spec) spec[k] = src.spec[k];
    for (const k of ['containers', 'initContainers', 'ephemeralContainers']) if (k in spec) spec[k] = containers(spec[k]);
    if (Array.isArray(spec.volumes)) spec.volumes = spec.volumes.map(volume);
    out.spec = spec;
  }
  if (isObj(src.status)) {
    const status = without(src.status, POD_STATUS_UNREAD);
    const resizing = resizeStatusesThatCount(o as unknown as V1Pod);
    if (resizing.containerStatuses) status.containerStatuses = resizing.containerStatuses;
    if (resizing.initContainerStatuses) status.initContainerStatuses = resizing.initContainerStatuses;
    out.status = status;
  }
  return out as unknown as T;
}

export function stripNode<T extends KubernetesObject>(o: T): T {
  const src = o as unknown as Obj;
  const out: Obj = {};
  for (const k in src) out[k] = src[k];
  out.metadata = metadata(src.metadata);
  if (isObj(src.status)) out.status = without(src.status, NODE_STATUS_UNREAD);
  return out as unknown as T;
}

/** The transform for a core/v1 resource by plural (pods, nodes), else metadata only. */
export function transformFor(plural: string, group = ''): <T extends KubernetesObject>(o: T) => T {
  if (group === '' && plural === 'pods') return stripPod;
  if (group === '' && plural === 'nodes') return stripNode;
  return stripObject;
}
