/**
 * CSI attach limits (kube-scheduler's NodeVolumeLimits plugin): a node attaches at most
 * `count` volumes of a CSI driver, the CSINode's spec.drivers[].allocatable.count; a
 * driver without a count there has no limit. Volumes are counted once per node by their
 * unique name: a bound PersistentVolume's driver and volumeHandle, or, for a claim not
 * yet bound, its StorageClass's provisioner and the claim itself. Inline `csi:` volumes
 * are not counted (kube-scheduler does not count them either). Pure.
 *
 * In the model a limit is a resource: nodes and templates get `attachable-volumes-csi-<driver>`
 * in their allocatable, pods request one per volume of that driver.
 */
export const CSI_LIMIT_RESOURCE_PREFIX = 'attachable-volumes-csi-';

/** A node's allocatable for a driver it has no limit for (kube: unlimited); large, and exact in a double. */
export const UNLIMITED_VOLUMES = 1_000_000_000;

export const csiLimitResource = (driver: string) => `${CSI_LIMIT_RESOURCE_PREFIX}${driver}`;

export class CsiLimitError extends Error {}

/** Cluster Autoscaler's `capacity.cluster-autoscaler.kubernetes.io/csi-driver`: `driver=count[,driver=count]`. */
export function parseCsiDriverLimits(raw: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const part of raw.split(',').map((s) => s.trim()).filter(Boolean)) {
    const eq = part.indexOf('=');
    const driver = eq > 0 ? part.slice(0, eq).trim() : '';
    const count = eq > 0 ? part.slice(eq + 1).trim() : '';
    if (!driver || !/^[0-9]{1,9}$/.test(count)) throw new CsiLimitError(`"${part}" is not driver=count (a whole number of volumes)`);
    out.set(driver, Number(count));
  }
  return out;
}

type Json = Record<string, unknown>;
const isObj = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** spec.drivers[].allocatable.count of a CSINode, by driver name (drivers without a count have no limit). */
export function csiNodeLimits(spec: unknown): Map<string, number> {
  const out = new Map<string, number>();
  const drivers = isObj(spec) && Array.isArray(spec.drivers) ? spec.drivers : [];
  for (const d of drivers) {
    if (!isObj(d) || typeof d.name !== 'string') continue;
    const count = isObj(d.allocatable) ? d.allocatable.count : undefined;
    if (typeof count === 'number' && Number.isInteger(count) && count >= 0) out.set(d.name, count);
  }
  return out;
}

/** A pod's attachable CSI volumes: driver -> unique volume names. */
export type PodCsiVolumes = Map<string, Set<string>>;

export interface CsiVolumeSources {
  /** PVC `namespace/name` -> its bound volume name and storage class. */
  claim(key: string): { volumeName?: string; storageClassName?: string } | undefined;
  /** PV name -> its CSI driver and handle (undefined: not a CSI volume). */
  volume(name: string): { driver: string; handle: string } | undefined;
  /** StorageClass name -> its provisioner. */
  provisioner(storageClass: string): string | undefined;
}

/** The CSI volumes of a pod's claims (claim names in its namespace), as NodeVolumeLimits counts them. */
export function podCsiVolumes(namespace: string, claims: readonly string[], src: CsiVolumeSources): PodCsiVolumes {
  const out: PodCsiVolumes = new Map();
  const add = (driver: string, id: string) => {
    let set = out.get(driver);
    if (!set) out.set(driver, (set = new Set()));
    set.add(id);
  };
  for (const name of claims) {
    const pvc = src.claim(`${namespace}/${name}`);
    if (!pvc) continue; // a missing claim rules the pod out elsewhere (volume topology)
    if (pvc.volumeName) {
      const pv = src.volume(pvc.volumeName);
      if (pv) add(pv.driver, `${pv.driver}/${pv.handle}`);
      continue;
    }
    const provisioner = pvc.storageClassName ? src.provisioner(pvc.storageClassName) : undefined;
    if (provisioner) add(provisioner, `${provisioner}/pvc:${namespace}/${name}`);
  }
  return out;
}
