import type { V1Pod } from '@kubernetes/client-node';
import { toSchedulingPod } from '../../../src/scheduling/pod-demand.js';
import type { SchedulingPod } from '../../../src/scheduling/scheduling-pod.js';

/** A small pod builder for predicate tests: `spec` is merged over one 100m container. */
export function pod(name: string, spec: Partial<V1Pod['spec']> = {}, meta: Partial<V1Pod['metadata']> = {}): V1Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default', uid: `uid-${name}`, ...meta },
    spec: { containers: [{ name: 'c', image: 'x', resources: { requests: { cpu: '100m', memory: '64Mi' } } }], ...spec },
  };
}

export function spod(name: string, spec: Partial<V1Pod['spec']> = {}, meta: Partial<V1Pod['metadata']> = {}): SchedulingPod {
  return toSchedulingPod(pod(name, spec, meta));
}
