import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { KubeConfig } from '@kubernetes/client-node';
import { FencedError, KubeClient } from '../../../src/kube/kube-client.js';

describe('KubeClient fenced by a leadership term', () => {
  let server: Server;
  let client: KubeClient;
  const seen: string[] = [];
  let hold = false;

  before(async () => {
    server = createServer((req, res) => {
      seen.push(`${req.method} ${req.url?.split('?')[0]}`);
      if (hold) return; // never answers: an in-flight request
      res.setHeader('content-type', 'application/json');
      res.end('{}');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, skipTLSVerify: true }],
      users: [{ name: 'u' }], contexts: [{ name: 'x', cluster: 'c', user: 'u' }], currentContext: 'x',
    });
    client = new KubeClient(kc);
  });
  after(() => {
    client.close();
    server.closeAllConnections();
    server.close();
  });
  beforeEach(() => {
    seen.length = 0;
    hold = false;
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
});
