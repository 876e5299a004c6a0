import { microTime } from '../capi/events.js';
import { isConflict, isNotFound, KubeApiError, type KubeClient } from '../kube/kube-client.js';
import type { Log, LogSubject } from '../api/log.js';

/**
 * Leader election on a coordination.k8s.io/v1 Lease, with client-go's algorithm:
 * - a candidate takes the lease when it is free, or when the record it last
 *   observed has not changed for leaseDuration (measured on the candidate's own
 *   clock from when it observed it, so clock skew between replicas is harmless);
 * - the leader renews every retryPeriod and steps down the moment renewDeadline
 *   has passed since the start of its last successful renew: a timer, not a
 *   check after a request settles, and every lease request is itself bounded by
 *   the time left (a hung apiserver cannot hold a renew for the client's 30 s).
 *   A standby may take over only leaseDuration after it observed that renew, and
 *   the renew was sent after its start, so the terms never overlap;
 * - each term has a token (an AbortSignal, handed to onStartedLeading) that
 *   aborts when the term ends; every write of the term is fenced by it;
 * - a graceful stop releases the lease so the other replica takes over at once.
 * Every write is optimistic (resourceVersion); a 409 means someone else won.
 * Defaults (10 s / 7 s / 2 s) give failover in at most ~12 s after a leader dies.
 */

export interface LeaderElectionOptions {
  client: KubeClient;
  namespace: string;
  name: string;
  identity: string;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  /** A term began; `term` aborts the moment it ends (before onStoppedLeading). */
  onStartedLeading: (term: AbortSignal) => void;
  /** Leadership lost (renewal failed) or released. */
  onStoppedLeading: () => void;
  log?: Log;
  /**
   * When this process first saw the Lease record `key` (`holder|renewTime|resourceVersion`),
   * if it watched the Lease before this elector existed (fleet mode observes every
   * cluster's Lease): the same clock and the same record, so the takeover rule holds.
   */
  priorObservation?: (key: string) => number | undefined;
  /** Labels and annotations of the Lease when this elector creates it (fleet mode finds its Leases by them). */
  metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> };
}

interface LeaseSpec {
  holderIdentity?: string | null;
  leaseDurationSeconds?: number;
  acquireTime?: string | null;
  renewTime?: string | null;
  leaseTransitions?: number;
}

interface Lease {
  apiVersion: 'coordination.k8s.io/v1';
  kind: 'Lease';
  metadata: { name: string; namespace: string; resourceVersion?: string };
  spec: LeaseSpec;
}

export class LeaderElector {
  private leading = false;
  private stopped = false;
  private observed: { key: string; at: number } | undefined;
  /** When the lease another holder has expires, by our clock (undefined when none). */
  private observedExpiry: number | undefined;
  private timer: NodeJS.Timeout | undefined;
  private term: AbortController | undefined;
  /** When the current term ends unless a renew succeeds first. */
  private deadline = 0;
  private deadlineTimer: NodeJS.Timeout | undefined;
  private readonly leaseMs: number;
  private readonly renewDeadlineMs: number;
  private readonly retryMs: number;
  private loop: Promise<void> | undefined;

  constructor(private readonly o: LeaderElectionOptions) {
    this.leaseMs = o.leaseDurationMs ?? 10_000;
    this.renewDeadlineMs = o.renewDeadlineMs ?? 7_000;
    this.retryMs = o.retryPeriodMs ?? 2_000;
    if (!(this.leaseMs > this.renewDeadlineMs && this.renewDeadlineMs > this.retryMs)) {
      throw new Error('leader election: need leaseDuration > renewDeadline > retryPeriod');
    }
  }

  isLeader(): boolean {
    return this.leading;
  }

  /** The current term's token (aborted once it ends), if leading. */
  get termSignal(): AbortSignal | undefined {
    return this.term?.signal;
  }

  /** Lines about the election name its Lease (kind / namespace / name fields). */
  private lease(): LogSubject {
    return { kind: 'Lease', namespace: this.o.namespace, name: this.o.name };
  }

  private get path(): string {
    return `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(this.o.namespace)}/leases/${encodeURIComponent(this.o.name)}`;
  }

  start(): void {
    if (this.loop) return;
    this.loop = this.tick();
  }

  private schedule(): void {
    if (this.stopped) return;
    // Jittered like client-go's wait.JitterUntil, so candidates do not collide.
    let delay = this.leading ? this.retryMs : this.retryMs * (1 + Math.random() * 0.2);
    // A candidate also wakes the moment the holder's lease it observed expires, not up
    // to a retry period later: failover is leaseDuration after the last observed renew.
    if (!this.leading && this.observedExpiry !== undefined) delay = Math.min(delay, Math.max(0, this.observedExpiry - Date.now()) + 1);
    this.timer = setTimeout(() => {
      this.loop = this.tick();
    }, delay);
  }

  private async tick(): Promise<void> {
    // Measured from before the request: the renewTime it writes is no older than this.
    const startedAt = Date.now();
    // A leader's lease requests get only the time left in its term; a candidate's the renew deadline.
    const budget = this.leading ? this.deadline - startedAt : this.renewDeadlineMs;
    try {
      const ok = budget > 0 && await this.tryAcquireOrRenew(startedAt, AbortSignal.timeout(budget));
      if (ok && (this.leading || !this.stopped) && Date.now() < startedAt + this.renewDeadlineMs) {
        this.extendTerm(startedAt + this.renewDeadlineMs);
        if (!this.leading) {
          this.leading = true;
          this.term = new AbortController();
          this.o.log?.(`${this.o.identity} became leader (lease ${this.o.namespace}/${this.o.name})`, this.lease());
          this.o.onStartedLeading(this.term.signal);
        }
      } else if (!ok && this.leading && budget > 0) {
        this.stepDown('another holder has the lease');
      }
    } catch (err) {
      this.o.log?.(`leader election: ${(err as Error).message}`, this.lease());
    }
    this.schedule();
  }

  /** The term now ends at `deadline`, unless renewed again before. */
  private extendTerm(deadline: number): void {
    this.deadline = deadline;
    clearTimeout(this.deadlineTimer);
    this.deadlineTimer = setTimeout(() => this.stepDown('could not renew within the renew deadline'), Math.max(0, deadline - Date.now()));
    this.deadlineTimer.unref?.();
  }

  private stepDown(why: string): void {
    clearTimeout(this.deadlineTimer);
    if (!this.leading) return;
    this.leading = false;
    this.term?.abort(new Error(`leadership lost: ${why}`));
    this.term = undefined;
    this.o.log?.(`${this.o.identity} stopped leading: ${why}`, this.lease());
    this.o.onStoppedLeading();
  }

  private async tryAcquireOrRenew(nowMs: number, signal: AbortSignal): Promise<boolean> {
    const now = microTime(nowMs);
    const mine: LeaseSpec = {
      holderIdentity: this.o.identity,
      leaseDurationSeconds: Math.ceil(this.leaseMs / 1000),
      acquireTime: now,
      renewTime: now,
      leaseTransitions: 0,
    };
    let lease: Lease;
    try {
      lease = await this.o.client.request<Lease>('GET', this.path, { signal });
    } catch (err) {
      if (!isNotFound(err)) throw err;
      try {
        await this.o.client.request('POST', `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(this.o.namespace)}/leases`, {
          body: { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { ...this.o.metadata, name: this.o.name, namespace: this.o.namespace }, spec: mine },
          signal,
        });
        return true;
      } catch (e) {
        if (e instanceof KubeApiError && (e.status === 409)) return false;
        throw e;
      }
    }
    const spec = lease.spec ?? {};
    const key = `${spec.holderIdentity ?? ''}|${spec.renewTime ?? ''}|${lease.metadata.resourceVersion ?? ''}`;
    if (!this.observed || this.observed.key !== key) this.observed = { key, at: Math.min(nowMs, this.o.priorObservation?.(key) ?? nowMs) };
    const holder = spec.holderIdentity ?? '';
    const iHold = holder === this.o.identity;
    const durationMs = (spec.leaseDurationSeconds ?? Math.ceil(this.leaseMs / 1000)) * 1000;
    this.observedExpiry = !iHold && holder !== '' ? this.observed.at + durationMs : undefined;
    if (!iHold && holder !== '' && this.observed.at + durationMs > nowMs) return false;
    const next: LeaseSpec = iHold
      ? { ...spec, renewTime: now, leaseDurationSeconds: mine.leaseDurationSeconds }
      : { ...mine, leaseTransitions: (spec.leaseTransitions ?? 0) + 1 };
    try {
      await this.o.client.request('PUT', this.path, { body: { ...lease, spec: next }, signal });
      return true;
    } catch (err) {
      if (isConflict(err)) return false;
      throw err;
    }
  }

  /** Stops at once without releasing the lease (what a crash looks like to the other replica). */
  abandon(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    clearTimeout(this.deadlineTimer);
    this.leading = false;
    this.term?.abort(new Error('leadership abandoned'));
    this.term = undefined;
  }

  /** Stops campaigning; if leading, releases the lease so another replica takes over immediately. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.loop?.catch(() => {});
    clearTimeout(this.deadlineTimer);
    if (!this.leading) return;
    this.leading = false;
    // The term ends before the release is sent: nothing of it may write after another replica could lead.
    this.term?.abort(new Error('leadership released'));
    this.term = undefined;
    try {
      const signal = AbortSignal.timeout(this.renewDeadlineMs);
      const lease = await this.o.client.request<Lease>('GET', this.path, { signal });
      if (lease.spec?.holderIdentity === this.o.identity) {
        await this.o.client.request('PUT', this.path, {
          body: { ...lease, spec: { ...lease.spec, holderIdentity: null, acquireTime: null, renewTime: null, leaseDurationSeconds: 1 } },
          signal,
        });
      }
    } catch (err) {
      this.o.log?.(`releasing the lease failed: ${(err as Error).message}`, this.lease());
    }
    this.o.onStoppedLeading();
  }
}
