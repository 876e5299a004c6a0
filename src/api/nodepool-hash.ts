import { createHash } from 'node:crypto';
import type { MachineTemplateSpec } from './nodepool.js';

/**
 * The hash of the fields of a NodePool's machineTemplate that shape the node it makes
 * (as Karpenter hashes a NodePool onto its NodeClaims): Kubernetes version, failure domain, the
 * bootstrap and infrastructure templates, capacity, labels and taints. Headroom writes
 * it on every standalone Machine it creates; a Machine whose hash differs from its
 * pool's current one has drifted (docs/adr/0084-drift.md). The price, the namespace and
 * the Cluster are left out: a new price does not change a node, and Machines of another
 * namespace or Cluster are no longer the pool's to find. Pure.
 */

export const NODEPOOL_HASH_ANNOTATION = 'headroom.dev/nodepool-hash';

/** Sorted-key JSON, so equal templates hash equally whatever their key order. */
function canonical(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(canonical);
  if (v && typeof v === 'object') {
    return Object.fromEntries(Object.keys(v).sort().filter((k) => (v as Record<string, unknown>)[k] !== undefined)
      .map((k) => [k, canonical((v as Record<string, unknown>)[k])]));
  }
  return v;
}

export function nodePoolTemplateHash(tpl: MachineTemplateSpec): string {
  const shaping = {
    version: tpl.version, failureDomain: tpl.failureDomain,
    bootstrap: tpl.bootstrapConfigTemplateRef, infrastructure: tpl.infrastructureTemplateRef,
    capacity: tpl.capacity, labels: tpl.labels,
    taints: tpl.taints.map((t) => ({ key: t.key, value: t.value, effect: t.effect })),
  };
  return createHash('sha256').update(JSON.stringify(canonical(shaping))).digest('hex').slice(0, 16);
}
