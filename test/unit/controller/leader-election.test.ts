import { expect } from 'chai';
import { LeaderElector } from '../../../src/controller/leader-election.js';
import { KubeApiError, type KubeClient, type RequestOptions } from '../../../src/kube/kube-client.js';

/**
 * A Lease store behind a fake KubeClient. `hang` makes every request wait until its
 * signal aborts (a frozen apiserver): a request without a deadline waits forever.
 */
class LeaseApi {
  lease: { metadata: { name: string; namespace: string; resourceVersion: string }; spec: Record<string, unknown> } | undefined;
  hang = false;
  requests: Array<{ method: string; signal?: AbortSignal }> = [];
  private rv = 1;

  client(): KubeClient {
    return { request: (method: string, _path: string, o: RequestOptions = {}) => this.request(method, o) } as unknown as KubeClient;
  }

  private async request(method: string, o: RequestOptions): Promise<unknown> {
    this.requests.push({ method, ...(o.signal ? { signal: o.signal } : {}) });
    if (this.hang) {
      return new Promise((_, reject) => {
        o.signal?.addEventListener('abort', () => reject(o.signal!.reason), { once: true });
      });
    }
    if (method === 'GET') {
      if (!this.lease) throw new KubeApiError(404, 'NotFound', 'no lease', method, '');
      return structuredClone(this.lease);
    }
    const body = o.body as { metadata: { name: string; namespace: string; resourceVersion?: string }; spec: Record<string, unknown> };
    if (method === 'POST' && this.lease) throw new KubeApiError(409, 'AlreadyExists', '', method, '');
    if (method === 'PUT' && body.metadata.resourceVersion !== this.lease?.metadata.resourceVersion) throw new KubeApiError(409, 'Conflict', '', method, '');
    this.lease = { metadata: { ...body.metadata, resourceVersion: String(++this.rv) }, spec: body.spec };
    return this.lease;
  }

  /** Another replica writes the Lease. */
  takeOver(holder: string): void {
    this.lease = { metadata: { ...this.lease!.metadata, resourceVersion: String(++this.rv) }, spec: { ...this.lease!.spec, holderIdentity: holder, renewTime: new Date().toISOString() } };
  }
}

const timing = { leaseDurationMs: 900, renewDeadlineMs: 600, retryPeriodMs: 100 };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(cond: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) return false;
    await sleep(5);
  }
  return true;
}

function elector(api: LeaseApi, events: string[], terms: AbortSignal[]) {
  return new LeaderElector({
    client: api.client(), namespace: 'ns', name: 'lease', identity: 'me', ...timing,
    onStartedLeading: (term) => {
      events.push('started');
      terms.push(term);
    },
    onStoppedLeading: () => events.push(`stopped (term aborted: ${terms.at(-1)?.aborted})`),
  });
}

describe('LeaderElector under faults', () => {
  it('a leader whose apiserver hangs steps down at the renew deadline (a timer), with its term aborted first', async () => {
    const api = new LeaseApi();
    const events: string[] = [];
    const terms: AbortSignal[] = [];
    const e = elector(api, events, terms);
    e.start();
    try {
      expect(await until(() => e.isLeader(), 1000)).to.equal(true);
      // Let a renew succeed, then freeze the apiserver.
      const renewsBefore = api.requests.filter((r) => r.method === 'PUT').length;
      expect(await until(() => api.requests.filter((r) => r.method === 'PUT').length > renewsBefore, 1000)).to.equal(true);
      api.hang = true;
      const frozenAt = Date.now();
      // client-go bounds the renew by the renew deadline: stepping down must not wait for
      // the client's 30 s request timeout.
      expect(await until(() => !e.isLeader(), 2000), 'stepped down').to.equal(true);
      const after = Date.now() - frozenAt;
      expect(after).to.be.at.most(timing.renewDeadlineMs + 150);
      expect(terms[0]!.aborted).to.equal(true);
      expect(events).to.deep.equal(['started', 'stopped (term aborted: true)']);
      // Every lease request carried a deadline no later than the renew deadline.
      expect(api.requests.every((r) => r.signal)).to.equal(true);
    } finally {
      e.abandon();
    }
  });

  it('a candidate takes a dead holder\'s lease when it expires, not up to a retry period later (issue 17 failover)', async () => {
    const api = new LeaseApi();
    const now = new Date().toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
    api.lease = { metadata: { name: 'lease', namespace: 'ns', resourceVersion: '1' }, spec: { holderIdentity: 'dead', leaseDurationSeconds: 1, acquireTime: now, renewTime: now } };
    let startedAt = 0;
    // Polls every 700-840 ms: without waking at the expiry it would take over at the second poll (~1.4-1.7 s).
    const e = new LeaderElector({
      client: api.client(), namespace: 'ns', name: 'lease', identity: 'me', leaseDurationMs: 2000, renewDeadlineMs: 1500, retryPeriodMs: 700,
      onStartedLeading: () => { startedAt = Date.now(); },
      onStoppedLeading: () => undefined,
    });
    const t0 = Date.now();
    e.start();
    expect(await until(() => startedAt > 0, 3000)).to.equal(true);
    await e.stop();
    expect(startedAt - t0).to.be.within(1000, 1250);
  });

  it('aborts the term when another holder takes the lease', async () => {
    const api = new LeaseApi();
    const events: string[] = [];
    const terms: AbortSignal[] = [];
    const e = elector(api, events, terms);
    e.start();
    try {
      expect(await until(() => e.isLeader(), 1000)).to.equal(true);
      api.takeOver('other');
      expect(await until(() => terms[0]!.aborted, 1000)).to.equal(true);
      expect(e.isLeader()).to.equal(false);
      expect(events).to.deep.equal(['started', 'stopped (term aborted: true)']);
    } finally {
      e.abandon();
    }
  });

  it('aborts the term before the lease is released on stop, and a new term has a fresh token', async () => {
    const api = new LeaseApi();
    const events: string[] = [];
    const terms: AbortSignal[] = [];
    const e = elector(api, events, terms);
    e.start();
    expect(await until(() => e.isLeader(), 1000)).to.equal(true);
    // A brief freeze past the renew deadline ends the term; the lease is still ours, so
    // the next renew starts a second term with its own token.
    api.hang = true;
    expect(await until(() => !e.isLeader(), 2000)).to.equal(true);
    api.hang = false;
    expect(await until(() => e.isLeader(), 2000)).to.equal(true);
    expect(terms).to.have.length(2);
    expect(terms[0]!.aborted).to.equal(true);
    expect(terms[1]!.aborted).to.equal(false);
    await e.stop();
    expect(terms[1]!.aborted).to.equal(true);
    expect(api.lease?.spec.holderIdentity).to.equal(null);
  });
});
