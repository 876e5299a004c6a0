import { createServer, type Server } from 'node:http';
import { expect } from 'chai';
import { FencedError, type KubeClient } from '../../../src/kube/kube-client.js';
import { closeBoth, listenWithClient } from './local-server-client.js';

describe('KubeClient fenced by a leadership term', () => {
  let server: Server;
  let client: KubeClient;
  const seen: string[] = [];
  let hold = false;
  /** Answer the next N requests 429 with this Retry-After (undefined: no header). */
  let throttle: { count: number; retryAfter?: string } = { count: 0 };

  before(async () => {
    server = createServer((req, res) => {
      seen.push(`${req.method} ${req.url?.split('?')[0]}`);
      if (hold) return; // never answers: an in-flight request
      if (throttle.count > 0) {
        throttle.count--;
        res.writeHead(429, { 'content-type': 'application/json', ...(throttle.retryAfter !== undefined ? { 'retry-after': throttle.retryAfter } : {}) });
        res.end(JSON.stringify({ kind: 'Status', reason: 'TooManyRequests', message: 'too many requests' }));
        return;
      }
      res.setHeader('content-type', 'application/json');
      res.end('{}');
    });
    client = await listenWithClient(server);
  });
  after(() => closeBoth(client, server));
  beforeEach(() => {
    seen.length = 0;
    hold = false;
    throttle = { count: 0 };
  });

  it('sends while the term lasts and refuses every request after it ends, before anything goes out', async () => {
    const term = new AbortController();
    const fenced = client.fenced(term.signal);
    await fenced.request('PUT', '/a', { body: {} });
    expect(seen).to.deep.equal(['PUT /a']);
    term.abort();
    let err: unknown;
    try { await fenced.request('PATCH', '/b', { body: {} }); } catch (e) { err = e; }
    expect(err).to.be.instanceOf(FencedError);
    expect(String(err)).to.contain('leadership lost');
    expect(seen).to.deep.equal(['PUT /a']);
    // The unfenced client (lease renewals, reads) is not affected, and counts are shared.
    await client.request('POST', '/c', { body: {} });
    expect(seen).to.deep.equal(['PUT /a', 'POST /c']);
    expect(client.writes).to.deep.include({ PUT: 1, POST: 1 });
    expect(client.writes.PATCH).to.equal(undefined);
  });

  it('aborts a request in flight when the term ends', async () => {
    const term = new AbortController();
    hold = true;
    const pending = client.fenced(term.signal).request('PUT', '/slow', { body: {} }).then(() => 'answered', (e: Error) => e.name);
    for (let i = 0; i < 100 && seen.length === 0; i++) await new Promise((r) => setTimeout(r, 5));
    term.abort();
    expect(await pending).to.equal('AbortError');
  });

  it('retries a 429 after its Retry-After, then succeeds (API Priority and Fairness)', async () => {
    throttle = { count: 2, retryAfter: '1' };
    const t0 = Date.now();
    await client.request('PUT', '/throttled', { body: {} });
    const took = Date.now() - t0;
    expect(seen).to.deep.equal(['PUT /throttled', 'PUT /throttled', 'PUT /throttled']);
    expect(took).to.be.at.least(1900);
    expect(client.throttled.retries).to.equal(2);
    expect(client.throttled.askedMs).to.equal(2000);
    expect(client.throttled.maxRetryAfterMs).to.equal(1000);
    expect(client.throttled.waitedMs).to.be.at.least(1900);
  });

  it('gives up after maxRetries and within its timeout, and a lost term stops the wait', async () => {
    throttle = { count: 10 };
    let err: unknown;
    try { await client.request('GET', '/busy', { maxRetries: 1 }); } catch (e) { err = e; }
    expect((err as { status?: number }).status).to.equal(429);
    expect(seen).to.have.length(2);
    seen.length = 0;
    throttle = { count: 10, retryAfter: '5' };
    const t0 = Date.now();
    try { await client.request('GET', '/busy', { timeoutMs: 300 }); } catch (e) { err = e; }
    expect(Date.now() - t0).to.be.below(2000);
    expect(seen).to.have.length(1);
    const term = new AbortController();
    seen.length = 0;
    const pending = client.fenced(term.signal).request('PATCH', '/busy', { body: {} }).then(() => 'sent', (e: Error) => e.name);
    for (let i = 0; i < 100 && seen.length === 0; i++) await new Promise((r) => setTimeout(r, 5));
    term.abort();
    expect(await pending).to.equal('AbortError');
    expect(seen).to.have.length(1);
  });
});
