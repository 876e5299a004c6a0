import type { ClusterObjects } from './objects.js';
import type { EphemeralClaim } from './pod-classify.js';
import type { VolumeTopology } from '../scheduling/volume-topology.js';

const DEFAULT_CLASS_ANNOTATION = 'storageclass.kubernetes.io/is-default-class';

/** What volume binding needs to know: PVs' node affinity, claims and their classes, classes' binding mode and topology. */
export function volumeTopology(
  objects: Pick<ClusterObjects, 'persistentVolumes' | 'persistentVolumeClaims' | 'storageClasses'>, ephemeralClaims: readonly EphemeralClaim[],
): VolumeTopology {
  const out: VolumeTopology = { persistentVolumes: {}, claims: {}, storageClasses: {} };
  let defaultClass: string | undefined;
  for (const sc of objects.storageClasses) {
    const name = sc.metadata?.name;
    if (!name) continue;
    const entry: VolumeTopology['storageClasses'][string] = { waitForFirstConsumer: sc.volumeBindingMode === 'WaitForFirstConsumer' };
    if (sc.allowedTopologies?.length) entry.allowedTopologies = sc.allowedTopologies;
    out.storageClasses[name] = entry;
    if (sc.metadata?.annotations?.[DEFAULT_CLASS_ANNOTATION] === 'true') defaultClass = name;
  }
  for (const pv of objects.persistentVolumes) {
    const name = pv.metadata?.name;
    if (!name) continue;
    out.persistentVolumes[name] = pv.spec?.nodeAffinity ? { nodeAffinity: pv.spec.nodeAffinity } : {};
  }
  for (const pvc of objects.persistentVolumeClaims) {
    const name = pvc.metadata?.name;
    if (!name) continue;
    const volumeName = pvc.spec?.volumeName;
    // Unset class: the DefaultStorageClass admission plugin fills it in; "" means no class.
    const storageClassName = pvc.spec?.storageClassName ?? defaultClass;
    const claim: VolumeTopology['claims'][string] = { bound: !!volumeName };
    if (volumeName) claim.volumeName = volumeName;
    if (storageClassName) claim.storageClassName = storageClassName;
    out.claims[`${pvc.metadata?.namespace || 'default'}/${name}`] = claim;
  }
  // Not created yet: it will be, unbound, from the pod's template.
  for (const e of ephemeralClaims) {
    if (out.claims[e.key]) continue;
    const storageClassName = e.storageClassName ?? defaultClass;
    out.claims[e.key] = storageClassName ? { bound: false, storageClassName } : { bound: false };
  }
  return out;
}
