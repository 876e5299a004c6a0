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

function containerRequests(c: V1Container): Resources {
  // As kube-scheduler does: limits stand in for requests that are not set.
  const requests = parseResourceList(c.resources?.requests as Record<string, string> | undefined);
  const limits = parseResourceList(c.resources?.limits as Record<string, string> | undefined);
  for (const k in limits) if (!(k in requests)) requests[k] = limits[k]!;
  return requests;
}

/**
 * The effective request of a pod, as kube-scheduler computes it
 * (k8s.io/component-helpers resource.PodRequests):
 * - app containers and restartable (sidecar) init containers run together;
 * - each classic init container runs alone, alongside the sidecars started before it;
 * - the pod needs the max of both phases, plus pod overhead, plus one pod slot.
 */
export function podRequests(pod: V1Pod): Resources {
  const spec = pod.spec;
  const total: Resources = {};
  if (!spec) return { [PODS]: 1 };
  for (const c of spec.containers ?? []) addInto(total, containerRequests(c));

  const sidecars: Resources = {};
  const initPeak: Resources = {};
  for (const c of spec.initContainers ?? []) {
    const req = containerRequests(c);
    if (c.restartPolicy === 'Always') {
      addInto(sidecars, req);
      maxInto(initPeak, { ...sidecars });
    } else {
      maxInto(initPeak, addInto({ ...req }, sidecars));
    }
  }
  addInto(total, sidecars);
  maxInto(total, initPeak);
  addInto(total, parseResourceList(spec.overhead as Record<string, string> | undefined));
  total[PODS] = 1;
  return total;
}
