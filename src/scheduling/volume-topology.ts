import type { V1TopologySelectorTerm, V1VolumeNodeAffinity } from '@kubernetes/client-node';
import { nodeSelectorTermsMatch } from './node-affinity.js';
import type { SchedulingPod } from './scheduling-pod.js';

/** The cluster's volumes as the VolumeBinding filter needs them. */
export interface VolumeTopology {
  /** PV name -> its required node affinity. */
  persistentVolumes: Record<string, { nodeAffinity?: V1VolumeNodeAffinity }>;
  /** `namespace/name` -> claim. */
  claims: Record<string, { volumeName?: string; storageClassName?: string; bound: boolean }>;
  storageClasses: Record<string, { waitForFirstConsumer: boolean; allowedTopologies?: V1TopologySelectorTerm[] }>;
}

/**
 * The VolumeBinding filter, as far as an autoscaler can model it. For each of the
 * pod's persistentVolumeClaim volumes:
 * - the claim must exist (a pod whose claim is missing is not schedulable);
 * - a bound claim: its PV's required node affinity must match the node;
 * - an unbound claim of a WaitForFirstConsumer StorageClass: the node must match
 *   the class's allowedTopologies (none means anywhere);
 * - an unbound claim of an Immediate class (or of no class: static binding) makes
 *   the pod not schedulable yet: the provisioner or binder acts first.
 * A PV or StorageClass that the snapshot does not hold adds no constraint, so
 * partial input (e.g. namespaced dumps for `headroom plan`) does not reject pods.
 *
 * Returns undefined when the volumes allow the node, else a reason naming the claim.
 */
export function volumeTopologyReason(
  pod: SchedulingPod, labels: Record<string, string>, volumes: VolumeTopology, nodeName?: string,
): string | undefined {
  for (const claimName of pod.claims) {
    const key = `${pod.namespace}/${claimName}`;
    const claim = volumes.claims[key];
    if (!claim) return `persistentvolumeclaim ${key} not found`;
    if (claim.bound && claim.volumeName) {
      const pv = volumes.persistentVolumes[claim.volumeName];
      const required = pv?.nodeAffinity?.required;
      if (required && !nodeSelectorTermsMatch(required, labels, nodeName)) {
        return `persistentvolume ${claim.volumeName} (claim ${key}) node affinity does not match`;
      }
      continue;
    }
    const className = claim.storageClassName;
    const sc = className ? volumes.storageClasses[className] : undefined;
    if (className && !sc) continue;
    if (!sc?.waitForFirstConsumer) return `persistentvolumeclaim ${key} is unbound and its binding mode is Immediate`;
    if (sc.allowedTopologies?.length && !topologyTermsMatch(sc.allowedTopologies, labels)) {
      return `storageclass ${className} allowedTopologies (claim ${key}) do not match`;
    }
  }
  return undefined;
}

/** True when the pod's volumes allow a node with these labels (see volumeTopologyReason). */
export function volumeTopologyAllows(
  pod: SchedulingPod, labels: Record<string, string>, volumes: VolumeTopology, nodeName?: string,
): boolean {
  return pod.claims.length === 0 || volumeTopologyReason(pod, labels, volumes, nodeName) === undefined;
}

/**
 * StorageClass allowedTopologies: the OR of terms; within a term every
 * matchLabelExpressions entry must hold (label value among its values).
 */
export function topologyTermsMatch(terms: readonly V1TopologySelectorTerm[], labels: Record<string, string>): boolean {
  return terms.some((term) => {
    const exprs = term.matchLabelExpressions ?? [];
    if (exprs.length === 0) return false;
    return exprs.every((e) => {
      const v = labels[e.key];
      return v !== undefined && e.values.includes(v);
    });
  });
}
