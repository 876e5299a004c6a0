import type { KubernetesObject, V1Pod } from '@kubernetes/client-node';
import { ObjectValidationError } from '../api/validation-error.js';
import { isDemand, toSchedulingPod } from '../scheduling/pod-demand.js';
import { QuantityError } from '../scheduling/quantity.js';
import type { SchedulingPod } from '../scheduling/scheduling-pod.js';

/** The claim a pending pod's generic ephemeral volume will get, from its template. */
export interface EphemeralClaim {
  key: string;
  storageClassName: string | undefined;
}

/** What the snapshot makes of one pod: skipped, or its SchedulingPod (bound to nodeName, else pending). */
export const SKIP = 'skip';
export type PodClass = typeof SKIP | { sp: SchedulingPod; nodeName: string | undefined; ephemeralClaims?: EphemeralClaim[] };

const TERMINAL = new Set(['Succeeded', 'Failed']);

/*
 * A pod's class depends on the pod object alone, and converting every pod again
 * dominated a rebuild: remembered by object identity, which is sound because
 * ClusterStateSource objects are immutable by contract (a change is a new object).
 * Only successes are remembered, so an invalid pod is reported on every build.
 */
const podClassMemo = new WeakMap<V1Pod, PodClass>();

/** The pod's class; undefined (not remembered) when it is invalid, so it is reported again next build. */
export function podClass(pod: V1Pod, valid: (o: KubernetesObject) => boolean, guard: <T>(fn: () => T) => T | undefined): PodClass | undefined {
  const hit = podClassMemo.get(pod);
  if (hit !== undefined) return hit;
  if (!valid(pod)) return undefined;
  let c: PodClass = SKIP;
  const nodeName = pod.spec?.nodeName;
  if (!TERMINAL.has(pod.status?.phase ?? '') && (nodeName || isDemand(pod))) {
    const sp = guard(() => schedulingPodOf(pod));
    if (!sp) return undefined;
    c = { sp, nodeName: nodeName || undefined };
    if (!nodeName) {
      for (const v of pod.spec?.volumes ?? []) {
        const tmpl = v.ephemeral?.volumeClaimTemplate;
        if (tmpl) (c.ephemeralClaims ??= []).push({ key: `${sp.namespace}/${sp.name}-${v.name}`, storageClassName: tmpl.spec?.storageClassName });
      }
    }
  }
  podClassMemo.set(pod, c);
  return c;
}

function schedulingPodOf(pod: V1Pod): SchedulingPod {
  const ns = pod.metadata?.namespace || 'default';
  try {
    return toSchedulingPod(pod);
  } catch (err) {
    if (!(err instanceof QuantityError)) throw err;
    throw new ObjectValidationError('Pod', ns, pod.metadata?.name ?? '', quantityField(pod, err.input), err.message);
  }
}

/** The field path of a bad quantity in a pod, for the error message. */
function quantityField(pod: V1Pod, input: unknown): string {
  const spec = pod.spec;
  for (const list of ['containers', 'initContainers'] as const) {
    const cs = spec?.[list] ?? [];
    for (let i = 0; i < cs.length; i++) {
      for (const kind of ['requests', 'limits'] as const) {
        const rl = (cs[i]!.resources?.[kind] ?? {}) as Record<string, unknown>;
        for (const [r, q] of Object.entries(rl)) if (q === input) return `spec.${list}[${i}].resources.${kind}.${r}`;
      }
    }
  }
  for (const kind of ['requests', 'limits'] as const) {
    for (const [r, q] of Object.entries((spec?.resources?.[kind] ?? {}) as Record<string, unknown>)) if (q === input) return `spec.resources.${kind}.${r}`;
  }
  for (const [r, q] of Object.entries((spec?.overhead ?? {}) as Record<string, unknown>)) if (q === input) return `spec.overhead.${r}`;
  for (const list of ['containerStatuses', 'initContainerStatuses'] as const) {
    const cs = pod.status?.[list] ?? [];
    for (let i = 0; i < cs.length; i++) {
      for (const [r, q] of Object.entries((cs[i]!.resources?.requests ?? {}) as Record<string, unknown>)) if (q === input) return `status.${list}[${i}].resources.requests.${r}`;
      for (const [r, q] of Object.entries((cs[i]!.allocatedResources ?? {}) as Record<string, unknown>)) if (q === input) return `status.${list}[${i}].allocatedResources.${r}`;
    }
  }
  return 'spec';
}
