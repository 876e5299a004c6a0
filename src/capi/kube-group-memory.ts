import type { CapiVersion } from '../api/capi.js';
import type { KubeClient } from '../kube/kube-client.js';
import type { NodeGroupRef } from './actuator.js';
import { groupPath } from './group-resource.js';
import type { GroupMemoryStore } from './group-memory.js';

export interface KubeGroupMemoryOptions {
  management: KubeClient;
  capiVersion: CapiVersion;
  /** The annotation the value is kept in. */
  annotation: string;
  /** Dry run: nothing is written (nothing was scaled to remember). */
  dryRun?: boolean;
}

/**
 * GroupMemoryStore as an annotation on the MachineDeployment / MachineSet / MachinePool,
 * set with a merge patch of metadata only (no rollout: CAPI rolls out on spec.template).
 * The chart's ClusterRole already grants patch on the groups.
 */
export class KubeGroupMemory implements GroupMemoryStore {
  constructor(private readonly opts: KubeGroupMemoryOptions) {}

  /** The same store, written only while `term` (the leader's) holds. */
  fenced(term: AbortSignal): KubeGroupMemory {
    return new KubeGroupMemory({ ...this.opts, management: this.opts.management.fenced(term) });
  }

  async save(group: NodeGroupRef, value: string | null): Promise<void> {
    if (this.opts.dryRun) return;
    await this.opts.management.request('PATCH', groupPath(this.opts.capiVersion, group), {
      contentType: 'application/merge-patch+json',
      body: { metadata: { annotations: { [this.opts.annotation]: value } } },
    });
  }
}
