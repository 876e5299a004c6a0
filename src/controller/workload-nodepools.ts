import type { Condition } from '../api/condition.js';
import type { Log } from '../api/log.js';
import { NODEPOOL_API_VERSION, NODEPOOL_KIND, NODEPOOL_PLURAL } from '../api/nodepool.js';
import type { EventRecorder } from '../capi/events.js';
import { isNotFound, type KubeClient } from '../kube/kube-client.js';

/**
 * With the management cluster elsewhere, Headroom reads NodePools from there only
 * (ADR 0140). A NodePool applied to the workload cluster (where the chart used to put
 * the CRD) would be ignored in silence: this lists the workload cluster's NodePools
 * now and then, and tells each one, once per generation, with a Warning Event, a
 * Ready=False condition (reason IgnoredInWorkloadCluster) and a log line. Leader only,
 * through the term's fenced client.
 */

export const IGNORED_REASON = 'IgnoredInWorkloadCluster';
export const DEFAULT_WORKLOAD_NODEPOOL_CHECK_MS = 60_000;

interface PoolObject {
  metadata: { name: string; uid?: string; generation?: number };
  status?: { conditions?: Condition[] };
}

/** The note of the Event and the condition's message. */
export function ignoredMessage(managementServer: string): string {
  return `ignored: Headroom reads NodePools from the management cluster (${managementServer}), not from this workload cluster; apply it there, with spec.clusterRef naming this cluster's CAPI Cluster`;
}

export class WorkloadNodePoolWarnings {
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  /** `uid/generation` already told. */
  private readonly told = new Set<string>();
  private lastError = '';

  constructor(private readonly opts: {
    client: KubeClient;
    events: EventRecorder;
    managementServer: string;
    log: Log;
    /** Events and log lines only; no status write. */
    dryRun?: boolean;
    intervalMs?: number;
    now?: () => Date;
  }) {}

  start(): void {
    if (this.running) return;
    this.running = true;
    const loop = async () => {
      if (!this.running) return;
      await this.checkOnce().catch((err: unknown) => {
        const m = (err as Error).message;
        if (m !== this.lastError) this.opts.log(`NodePools in the workload cluster: ${m}`);
        this.lastError = m;
      });
      if (this.running) this.timer = setTimeout(() => void loop(), this.opts.intervalMs ?? DEFAULT_WORKLOAD_NODEPOOL_CHECK_MS);
    };
    void loop();
  }

  stop(): void {
    this.running = false;
    clearTimeout(this.timer);
  }

  /** Tells every NodePool of the workload cluster not told yet; returns how many were told. */
  async checkOnce(): Promise<number> {
    let list: { items?: PoolObject[] };
    try {
      list = await this.opts.client.get<{ items?: PoolObject[] }>(`/apis/${NODEPOOL_API_VERSION}/${NODEPOOL_PLURAL}`);
    } catch (err) {
      if (isNotFound(err)) return 0; // no NodePool CRD in the workload cluster: nothing to ignore
      throw err;
    }
    const message = ignoredMessage(this.opts.managementServer);
    let told = 0;
    for (const p of list.items ?? []) {
      const { name, uid, generation } = p.metadata;
      const key = `${uid ?? name}/${generation ?? 0}`;
      if (this.told.has(key)) continue;
      const current = p.status?.conditions?.find((c) => c.type === 'Ready');
      this.opts.log(`NodePool ${name} is in the workload cluster: ${message}`, { kind: NODEPOOL_KIND, name });
      await this.opts.events.emit(
        { apiVersion: NODEPOOL_API_VERSION, kind: NODEPOOL_KIND, name, ...(uid ? { uid } : {}) },
        { type: 'Warning', reason: IGNORED_REASON, action: 'Ignore', note: message },
      );
      if (!this.opts.dryRun && !(current?.reason === IGNORED_REASON && current.observedGeneration === generation)) {
        const condition: Condition = {
          type: 'Ready', status: 'False', reason: IGNORED_REASON, message,
          lastTransitionTime: (this.opts.now?.() ?? new Date()).toISOString().replace(/\.\d{3}Z$/, 'Z'),
          ...(generation !== undefined ? { observedGeneration: generation } : {}),
        };
        await this.opts.client.request('PATCH', `/apis/${NODEPOOL_API_VERSION}/${NODEPOOL_PLURAL}/${encodeURIComponent(name)}/status`, {
          contentType: 'application/merge-patch+json', body: { status: { conditions: [condition] } },
        });
      }
      this.told.add(key);
      told++;
    }
    return told;
  }
}
