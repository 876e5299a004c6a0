import { CAPI_GROUP, type CapiVersion } from '../api/capi.js';
import { NODEPOOL_API_VERSION } from '../api/nodepool.js';
import type { EventRecorder, EventTarget } from '../capi/events.js';
import type { SnapshotIssue } from '../cluster/build-snapshot.js';

/**
 * Every object the snapshot rejected or did not scale (an invalid annotation, a held
 * group, a NodePool that does not parse) gets a Warning Event on itself, so `kubectl
 * describe` says what the controller's log says: silence is a defect. The snapshot is
 * rebuilt every cycle and reports the same issues each time, so one Event is written
 * per object and message, again only after `repeatMs` (an hour) while it persists.
 */

export interface SnapshotIssueEventsOptions {
  capiVersion: CapiVersion;
  /** Events on management-cluster objects (CAPI groups, NodePools). */
  management: EventRecorder;
  /** Events on workload-cluster objects (pods, nodes, DaemonSets, ...). */
  workload: EventRecorder;
  now?: () => number;
  /** Default one hour. */
  repeatMs?: number;
  /** Bound on the (object, message) pairs remembered. Default 10,000. */
  maxRemembered?: number;
}

const CAPI_KINDS = new Set(['MachineDeployment', 'MachineSet', 'MachinePool', 'Machine', 'Cluster']);
const WORKLOAD_KINDS: Record<string, string> = {
  Pod: 'v1', Node: 'v1', PersistentVolumeClaim: 'v1', PersistentVolume: 'v1', DaemonSet: 'apps/v1',
  PodDisruptionBudget: 'policy/v1', StorageClass: 'storage.k8s.io/v1',
};

export class SnapshotIssueEvents {
  private readonly written = new Map<string, number>();

  constructor(private readonly opts: SnapshotIssueEventsOptions) {}

  report(issue: SnapshotIssue): void {
    const o = issue.object;
    if (!o) return;
    const where = this.target(o.kind, o.name, o.namespace);
    if (!where) return;
    const now = (this.opts.now ?? Date.now)();
    const key = `${o.kind}/${o.namespace ?? ''}/${o.name}\n${issue.message}`;
    const last = this.written.get(key);
    if (last !== undefined && now - last < (this.opts.repeatMs ?? 3_600_000)) return;
    this.written.delete(key);
    this.written.set(key, now);
    if (this.written.size > (this.opts.maxRemembered ?? 10_000)) this.written.delete(this.written.keys().next().value!);
    void where.recorder.emit(where.target, {
      type: 'Warning', reason: issue.reason ?? (issue.severity === 'error' ? 'InvalidObject' : 'NotScaled'), action: 'Validate', note: issue.message,
    }, now);
  }

  private target(kind: string, name: string, namespace?: string): { recorder: EventRecorder; target: EventTarget } | undefined {
    const ns = namespace ? { namespace } : {};
    if (CAPI_KINDS.has(kind)) return { recorder: this.opts.management, target: { apiVersion: `${CAPI_GROUP}/${this.opts.capiVersion}`, kind, name, ...ns } };
    if (kind === 'NodePool') return { recorder: this.opts.management, target: { apiVersion: NODEPOOL_API_VERSION, kind, name } };
    const apiVersion = WORKLOAD_KINDS[kind];
    return apiVersion ? { recorder: this.opts.workload, target: { apiVersion, kind, name, ...ns } } : undefined;
  }
}
