import type { V1NodeSelector } from '@kubernetes/client-node';

/**
 * A pod's DRA claims as the solvers read them, resolved by the snapshot builder
 * (src/cluster/dra-snapshot.ts) from ResourceClaims, ResourceClaimTemplates and
 * DeviceClasses. Device demand is counted per *signature* (one DeviceClass with one
 * set of selectors, named `s<i>` in DraTable); a node's free devices are counted per
 * *atom* (the set of signatures a device satisfies), as extended resources named
 * `devices.headroom.dev/<atom>` in its allocatable. See docs/adr/0140-dra-devices.md.
 */
export interface PodDevices {
  /** Devices per signature of the claims made for this pod alone (from a ResourceClaimTemplate). */
  own: Record<string, number>;
  /**
   * Unallocated claims the pod names directly, which other pods may name too: their
   * devices are taken once, on the one node every pod of the claim then shares.
   */
  shared: Array<{ claim: string; devices: Record<string, number> }>;
  /** Node selectors of the pod's allocated claims: it runs only where every one matches. */
  pinned: V1NodeSelector[];
  /** Why Headroom cannot model one of the claims: the pod is held, with this reason, and scales nothing. */
  unmodeled?: string;
}

/** What the solvers need to read device resources. */
export interface DraTable {
  /** Signature -> the atom resources whose devices satisfy it, most specific (fewest signatures) first. */
  atomsOf: Record<string, string[]>;
  /** Signature -> how a reason names it (`class gpu.example.com, 1 selector`). */
  describe: Record<string, string>;
}

export const DEVICE_RESOURCE_PREFIX = 'devices.headroom.dev/';

export function isDeviceResource(name: string): boolean {
  return name.startsWith(DEVICE_RESOURCE_PREFIX);
}
