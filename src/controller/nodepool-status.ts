import type { Condition } from '../api/condition.js';
import { NODEPOOL_API_VERSION, NODEPOOL_PLURAL, NodePoolError, parseNodePool } from '../api/nodepool.js';
import { buildSnapshot } from '../cluster/build-snapshot.js';
import type { ClusterObjects } from '../cluster/objects.js';
import { SnapshotBuilder } from '../cluster/snapshot-builder.js';
import type { ClusterSnapshot } from '../cluster/snapshot.js';
import type { ClusterStateSource } from '../cluster/state.js';
import type { KubeClient } from '../kube/kube-client.js';
import type { EventRecorder } from '../capi/events.js';
import { invalidBudgetSchedules } from '../disruption/budget-schedule.js';

/**
 * NodePool status: current usage (existing and in-flight nodes), member groups
 * and a Ready condition (False with the validation message for an invalid pool).
 * `nodePoolStatuses` is pure; NodePoolStatusWriter patches the status subresource
 * (leader only), and only when something changed.
 */

export type PoolCondition = Condition;

export interface PoolStatus {
  resources: { cpu: string; memory: string; nodes: string };
  nodeGroups: string[];
  conditions: PoolCondition[];
}

/** millicores -> "12" / "12500m" */
export function formatCpu(milli: number): string {
  return milli % 1000 === 0 ? String(milli / 1000) : `${Math.round(milli)}m`;
}

/** bytes -> the largest exact binary suffix ("48Gi"), else bytes. */
export function formatMemory(bytes: number): string {
  for (const [suffix, n] of [['Ti', 2 ** 40], ['Gi', 2 ** 30], ['Mi', 2 ** 20], ['Ki', 2 ** 10]] as const) {
    if (bytes >= n && bytes % n === 0) return `${bytes / n}${suffix}`;
  }
  return String(Math.round(bytes));
}

export function nodePoolStatuses(
  objects: ClusterObjects, now: string, build: (objects: ClusterObjects) => ClusterSnapshot = (o) => buildSnapshot(o, { strict: false }),
): Map<string, PoolStatus> {
  const snapshot = build(objects);
  const out = new Map<string, PoolStatus>();
  for (const obj of objects.nodePools) {
    const name = obj.metadata?.name;
    if (!name) continue;
    const generation = (obj.metadata as { generation?: number } | undefined)?.generation;
    const cond = (status: 'True' | 'False', reason: string, message: string): PoolCondition => ({
      type: 'Ready', status, reason, message, lastTransitionTime: now, ...(generation !== undefined ? { observedGeneration: generation } : {}),
    });
    let pool;
    try {
      pool = parseNodePool(obj);
    } catch (err) {
      if (!(err instanceof NodePoolError)) throw err;
      out.set(name, { resources: { cpu: '0', memory: '0', nodes: '0' }, nodeGroups: [], conditions: [cond('False', 'Invalid', err.message)] });
      continue;
    }
    const used = snapshot.limits[name]?.used ?? { cpu: 0, memory: 0, nodes: 0 };
    const groups = snapshot.groups.filter((g) => g.nodePool === name).map((g) => g.id).sort();
    const badSchedules = invalidBudgetSchedules(pool.disruption.budgets);
    out.set(name, {
      resources: { cpu: formatCpu(used.cpu), memory: formatMemory(used.memory), nodes: String(used.nodes) },
      nodeGroups: groups,
      conditions: [badSchedules.length > 0 ? cond('False', 'InvalidBudgetSchedule', badSchedules.join('; '))
        : groups.length > 0 || pool.machineTemplate
        ? cond('True', 'Ready', groups.length > 0 ? `${groups.length} node group(s)` : 'standalone Machines from templates')
        : cond('False', 'NoNodeGroups', 'no managed node group matches nodeGroupSelector and requirements')],
    });
  }
  return out;
}

function sameStatus(current: Partial<PoolStatus> | undefined, next: PoolStatus): boolean {
  if (!current) return false;
  const c = current.conditions?.find((x) => x.type === 'Ready');
  const n = next.conditions[0]!;
  return JSON.stringify(current.resources) === JSON.stringify(next.resources)
    && JSON.stringify(current.nodeGroups ?? []) === JSON.stringify(next.nodeGroups)
    && c?.status === n.status && c?.reason === n.reason && c?.message === n.message
    && c?.observedGeneration === n.observedGeneration;
}

export class NodePoolStatusWriter {
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  constructor(
    private readonly state: ClusterStateSource,
    private readonly client: KubeClient,
    private readonly log: (m: string) => void,
    private readonly intervalMs = 10_000,
    /** Where its snapshots come from: the controller's, shared with its loops. */
    private readonly snapshots = new SnapshotBuilder(),
    /** A Warning Event on a pool whose status turns to an invalid budget schedule. */
    private readonly events?: EventRecorder,
  ) {}

  start(): void {
    if (this.running) return;
    this.running = true;
    const loop = async () => {
      if (!this.running) return;
      await this.syncOnce().catch((err) => this.log(`NodePool status: ${(err as Error).message}`));
      if (this.running) this.timer = setTimeout(() => void loop(), this.intervalMs);
    };
    void loop();
  }

  stop(): void {
    this.running = false;
    clearTimeout(this.timer);
  }

  /** Patches every NodePool whose status differs; returns how many were written. */
  async syncOnce(): Promise<number> {
    if (!this.state.synced()) return 0;
    const objects = this.state.objects();
    const statuses = nodePoolStatuses(objects, new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'), (o) => this.snapshots.build(o, { strict: false }));
    let written = 0;
    for (const obj of objects.nodePools) {
      const name = obj.metadata?.name;
      const next = name ? statuses.get(name) : undefined;
      if (!name || !next) continue;
      const current = obj.status as Partial<PoolStatus> | undefined;
      if (sameStatus(current, next)) continue;
      // Keep lastTransitionTime while the condition's status does not change.
      const prev = current?.conditions?.find((x) => x.type === 'Ready');
      if (prev && prev.status === next.conditions[0]!.status) next.conditions[0]!.lastTransitionTime = prev.lastTransitionTime;
      await this.client.request('PATCH', `/apis/${NODEPOOL_API_VERSION}/${NODEPOOL_PLURAL}/${encodeURIComponent(name)}/status`, {
        contentType: 'application/merge-patch+json', body: { status: next },
      });
      written++;
      const cond = next.conditions[0]!;
      if (this.events && cond.reason === 'InvalidBudgetSchedule') {
        void this.events.emit({ apiVersion: NODEPOOL_API_VERSION, kind: 'NodePool', name, ...(obj.metadata?.uid ? { uid: obj.metadata.uid } : {}) }, {
          type: 'Warning', reason: 'InvalidBudgetSchedule', action: 'Validate', note: cond.message,
        });
      }
    }
    return written;
  }
}
