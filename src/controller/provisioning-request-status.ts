import { CAPACITY_BUFFER_GROUP } from '../api/capacity-buffer.js';
import { ATOMIC_SCALE_UP_CLASS, PROVISIONING_REQUEST_PLURAL, type RequestCondition } from '../api/provisioning-request.js';
import type { EventRecorder } from '../capi/events.js';
import type { ClusterCache } from '../kube/cluster-cache.js';
import { StatusLoop } from './status-loop.js';
import type { KubeClient } from '../kube/kube-client.js';
import { decideProvisioningRequests, type PlanFn, type RequestDecision } from '../provisioning/provisioning-requests.js';
import type { Log } from '../api/log.js';

/**
 * The leader's ProvisioningRequest loop: decides (src/provisioning/provisioning-requests.ts),
 * patches the conditions, records an Event per transition on the request and counts
 * it per class and outcome. A newly booked atomic request triggers a provisioning
 * cycle, which scales every group its pods need in that one cycle.
 */

export interface ProvisioningRequestWriterOptions {
  cache: ClusterCache;
  client: KubeClient;
  plan: PlanFn;
  events?: EventRecorder;
  log: Log;
  bookingMs?: number;
  onOutcome?: (className: string, outcome: string) => void;
  /** A booking was granted (the provisioner should run now). */
  onBooked?: () => void;
  intervalMs?: number;
  clock?: () => number;
}

export class ProvisioningRequestWriter {
  private readonly loop: StatusLoop;
  private busy: Promise<number> | undefined;
  /** uid -> the resourceVersion a write was based on: not decided again until the cache moves on. */
  private readonly acted = new Map<string, string | undefined>();

  constructor(private readonly o: ProvisioningRequestWriterOptions) {
    this.loop = new StatusLoop(() => this.syncOnce(), o.intervalMs ?? 5000, (err) => o.log(`ProvisioningRequest status: ${err.message}`));
  }

  start(): void {
    this.loop.start();
  }

  stop(): void {
    this.loop.stop();
  }

  /** One pass (never two at once); returns how many requests were written. */
  syncOnce(): Promise<number> {
    this.busy ??= this.pass().finally(() => {
      this.busy = undefined;
    });
    return this.busy;
  }

  private async pass(): Promise<number> {
    const { cache } = this.o;
    const version = cache.provisioningRequestVersion;
    if (!version || !cache.synced()) return 0;
    const objects = cache.objects();
    const now = (this.o.clock ?? Date.now)();
    const decisions = await decideProvisioningRequests(objects, now, this.o.plan, this.o.bookingMs !== undefined ? { bookingMs: this.o.bookingMs } : {});
    const byUid = new Map((objects.provisioningRequests ?? []).map((r) => [r.metadata?.uid ?? `${r.metadata?.namespace}/${r.metadata?.name}`, r]));
    let written = 0;
    let booked = false;
    for (const d of decisions) {
      const obj = byUid.get(d.uid);
      if (!obj || d.set.length === 0) continue;
      if (this.acted.has(d.uid) && this.acted.get(d.uid) === obj.metadata?.resourceVersion) continue;
      try {
        await this.write(d, (obj.status as { conditions?: RequestCondition[] } | undefined)?.conditions ?? [], version);
        this.acted.set(d.uid, obj.metadata?.resourceVersion);
        written++;
      } catch (err) {
        this.o.log(`ProvisioningRequest ${d.namespace}/${d.name}: ${(err as Error).message}`, { kind: 'ProvisioningRequest', namespace: d.namespace, name: d.name });
        continue;
      }
      for (const t of d.outcomes) {
        this.o.onOutcome?.(d.className, t.outcome);
        void this.o.events?.emit(
          { apiVersion: `${CAPACITY_BUFFER_GROUP}/${version}`, kind: 'ProvisioningRequest', namespace: d.namespace, name: d.name, uid: d.uid },
          { type: t.type, reason: t.reason, action: 'Provision', note: t.message.slice(0, 1000) },
        );
        if (t.outcome === 'provisioned' || (t.outcome === 'capacity-found' && d.className === ATOMIC_SCALE_UP_CLASS)) booked = true;
      }
    }
    for (const uid of this.acted.keys()) if (!byUid.has(uid)) this.acted.delete(uid);
    if (booked) this.o.onBooked?.();
    return written;
  }

  private async write(d: RequestDecision, current: readonly RequestCondition[], version: string): Promise<void> {
    const next = new Map(d.set.map((c) => [c.type, c]));
    const conditions = [...current.filter((c) => !next.has(c.type)), ...d.set];
    await this.o.client.request('PATCH', `/apis/${CAPACITY_BUFFER_GROUP}/${version}/namespaces/${encodeURIComponent(d.namespace)}/${PROVISIONING_REQUEST_PLURAL}/${encodeURIComponent(d.name)}/status`, {
      contentType: 'application/merge-patch+json', body: { status: { conditions } },
    });
  }
}
