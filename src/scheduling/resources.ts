import type { V1Container, V1Pod } from '@kubernetes/client-node';
import { parseInteger, parseMilliCpu } from './quantity.js';

/**
 * A resource vector in the units the scheduler compares: `cpu` in millicores,
 * `memory` and `ephemeral-storage` in bytes, `pods` as a count, extended resources
 * (e.g. `nvidia.com/gpu`) as integers. Absent keys are zero.
 */
export type Resources = Record<string, number>;

export const CPU = 'cpu';
export const MEMORY = 'memory';
export const PODS = 'pods';
export const EPHEMERAL_STORAGE = 'ephemeral-storage';

/** Parses a ResourceList (`{cpu: "500m", memory: "1Gi"}`) into base units. */
export function parseResourceList(list: Record<string, string | number> | undefined): Resources {
  const out: Resources = {};
  if (!list) return out;
  for (const [name, q] of Object.entries(list)) {
    if (q === undefined || q === null) continue;
    out[name] = name === CPU ? parseMilliCpu(q) : parseInteger(q);
  }
  return out;
}

export function addInto(target: Resources, add: Resources, times = 1): Resources {
  for (const k in add) target[k] = (target[k] ?? 0) + add[k]! * times;
  return target;
}

export function maxInto(target: Resources, other: Resources): Resources {
  for (const k in other) if ((target[k] ?? 0) < other[k]!) target[k] = other[k]!;
  return target;
}

export function subtract(a: Resources, b: Resources): Resources {
  const out: Resources = { ...a };
  for (const k in b) out[k] = (out[k] ?? 0) - b[k]!;
  return out;
}

/** True when `req` fits in `free` for every resource `req` names. */
export function fits(req: Resources, free: Resources): boolean {
  for (const k in req) if (req[k]! > 0 && req[k]! > (free[k] ?? 0)) return false;
  return true;
}

type ResourceList = Record<string, string | number> | undefined;

/** Requests, with limits standing in for the ones not set, as the API server's defaulting does. */
function requestsOrLimits(res: { requests?: unknown; limits?: unknown } | undefined): Resources {
  const requests = parseResourceList(res?.requests as ResourceList);
  const limits = parseResourceList(res?.limits as ResourceList);
  for (const k in limits) if (!(k in requests)) requests[k] = limits[k]!;
  return requests;
}

function containerRequests(c: V1Container): Resources {
  return requestsOrLimits(c.resources);
}

/** Resources a pod may request at pod level (KEP 2837): cpu, memory and hugepages. */
export function isPodLevelResource(name: string): boolean {
  return name === CPU || name === MEMORY || name.startsWith('hugepages-');
}

/** The status kube-scheduler reads of a container that may be resizing (status.containerStatuses / initContainerStatuses). */
type ContainerStatus = NonNullable<NonNullable<V1Pod['status']>['containerStatuses']>[number];
type StatusLike = Pick<ContainerStatus, 'resources' | 'allocatedResources'>;

/** A PodResizePending condition with reason Infeasible: the node can never give the desired resources. */
export function isResizeInfeasible(pod: V1Pod): boolean {
  const c = pod.status?.conditions?.find((x) => x.type === 'PodResizePending');
  return c?.reason === 'Infeasible';
}

/**
 * What a container counts for, as kube-scheduler counts it with in-place resize (GA):
 * a container whose status reports resources counts the larger, resource by resource,
 * of its desired (spec), actual (status.resources) and allocated
 * (status.allocatedResources) requests; the desired ones are left out when the
 * resize is Infeasible (it will never happen). Without status resources: the spec.
 */
function effectiveRequests(c: V1Container, status: StatusLike | undefined, infeasible: boolean): Resources {
  if (!status?.resources) return containerRequests(c);
  const out = infeasible ? {} : containerRequests(c);
  maxInto(out, parseResourceList(status.resources.requests as ResourceList));
  maxInto(out, parseResourceList(status.allocatedResources as ResourceList));
  return out;
}

/** Only what the scheduler reads of a container status: its name and resources. */
type ResizeStatus = Pick<ContainerStatus, 'name' | 'resources' | 'allocatedResources'>;

/**
 * The container statuses (name, resources, allocatedResources only) whose resources
 * change what podRequests counts: those above the spec's requests somewhere, or any
 * with status resources when the resize is Infeasible. Lists are absent when none
 * does, so a cache can drop the kubelet's report and keep podRequests unchanged.
 */
export function resizeStatusesThatCount(pod: V1Pod): { containerStatuses?: ResizeStatus[]; initContainerStatuses?: ResizeStatus[] } {
  const status = pod.status;
  if (!status?.containerStatuses?.length && !status?.initContainerStatuses?.length) return {};
  const infeasible = isResizeInfeasible(pod);
  const pick = (list: ContainerStatus[] | undefined, specs: V1Container[] | undefined, sidecarsOnly: boolean): ResizeStatus[] | undefined => {
    let out: ResizeStatus[] | undefined;
    for (const cs of list ?? []) {
      if (!cs.resources) continue;
      const c = specs?.find((x) => x.name === cs.name);
      if (!c || (sidecarsOnly && c.restartPolicy !== 'Always')) continue;
      let counts = infeasible;
      if (!counts) {
        try {
          const spec = containerRequests(c);
          const above = (l: ResourceList) => { const r = parseResourceList(l); for (const k in r) if (r[k]! > (spec[k] ?? 0)) return true; return false; };
          counts = above(cs.resources.requests as ResourceList) || above(cs.allocatedResources as ResourceList);
        } catch {
          counts = true; // a bad quantity: keep it, so the snapshot reports it as it would
        }
      }
      if (!counts) continue;
      const kept: ResizeStatus = { name: cs.name, resources: cs.resources.requests ? { requests: cs.resources.requests } : {} };
      if (cs.allocatedResources) kept.allocatedResources = cs.allocatedResources;
      (out ??= []).push(kept);
    }
    return out;
  };
  const out: { containerStatuses?: ResizeStatus[]; initContainerStatuses?: ResizeStatus[] } = {};
  const c = pick(status.containerStatuses, pod.spec?.containers, false);
  if (c) out.containerStatuses = c;
  const i = pick(status.initContainerStatuses, pod.spec?.initContainers, true);
  if (i) out.initContainerStatuses = i;
  return out;
}

/**
 * The effective request of a pod, as kube-scheduler 1.36 computes it
 * (k8s.io/component-helpers resource.PodRequests, with status resources and
 * pod-level resources on, as they are by default):
 * - app containers and restartable (sidecar) init containers run together;
 * - each classic init container runs alone, alongside the sidecars started before it;
 * - the pod needs the max of both phases;
 * - a bound pod's containers (and sidecars) count what a resize in progress may hold
 *   (effectiveRequests); classic init containers count their spec;
 * - pod-level requests (spec.resources.requests) of cpu, memory and hugepages replace
 *   the containers' figure for that resource; other resources stay the containers';
 * - plus pod overhead, plus one pod slot.
 */
export function podRequests(pod: V1Pod): Resources {
  const spec = pod.spec;
  const total: Resources = {};
  if (!spec) return { [PODS]: 1 };
  const statuses = pod.status?.containerStatuses?.length || pod.status?.initContainerStatuses?.length
    ? new Map([...pod.status.containerStatuses ?? [], ...pod.status.initContainerStatuses ?? []].map((s) => [s.name, s]))
    : undefined;
  const infeasible = statuses !== undefined && isResizeInfeasible(pod);
  for (const c of spec.containers ?? []) addInto(total, statuses ? effectiveRequests(c, statuses.get(c.name), infeasible) : containerRequests(c));

  const sidecars: Resources = {};
  const initPeak: Resources = {};
  for (const c of spec.initContainers ?? []) {
    if (c.restartPolicy === 'Always') {
      addInto(sidecars, statuses ? effectiveRequests(c, statuses.get(c.name), infeasible) : containerRequests(c));
      maxInto(initPeak, { ...sidecars });
    } else {
      maxInto(initPeak, addInto(containerRequests(c), sidecars));
    }
  }
  addInto(total, sidecars);
  maxInto(total, initPeak);
  const podLevel = podLevelRequests(pod);
  if (podLevel) for (const k in podLevel) total[k] = podLevel[k]!;
  addInto(total, parseResourceList(spec.overhead as ResourceList));
  total[PODS] = 1;
  return total;
}

/**
 * Pod-level requests of the resources that may be set at pod level, or undefined when
 * none is. An unset pod-level request with a pod-level limit takes the limit, as the
 * API server's defaulting does (objects read from a cluster have it already).
 */
export function podLevelRequests(pod: V1Pod): Resources | undefined {
  const res = pod.spec?.resources;
  if (!res) return undefined;
  const requests = requestsOrLimits(res);
  let out: Resources | undefined;
  for (const k in requests) if (isPodLevelResource(k)) (out ??= {})[k] = requests[k]!;
  return out;
}
