import { createServer, type Server } from 'node:http';
import { expect } from 'chai';
import type { KubeClient } from '../../../src/kube/kube-client.js';
import { closeBoth, listenWithClient } from './local-server-client.js';

/** What the server parsed of each request, and on which connection. */
interface Seen { method: string; path: string; contentLength: string | undefined; body: string; port: number }

describe('KubeClient request bodies on a keep-alive connection', () => {
  let server: Server;
  let client: KubeClient;
  const seen: Seen[] = [];
  const parseErrors: string[] = [];

  before(async () => {
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        seen.push({ method: req.method ?? '', path: req.url?.split('?')[0] ?? '', contentLength: req.headers['content-length'], body: Buffer.concat(chunks).toString('utf8'), port: req.socket.remotePort ?? 0 });
        res.setHeader('content-type', 'application/json');
        res.end('{"kind":"Status"}');
      });
    });
    // A body left on the wire is parsed as the next request line: the server says so here.
    server.on('clientError', (err: Error, socket) => {
      parseErrors.push(err.message);
      socket.destroy();
    });
    client = await listenWithClient(server);
  });
  after(() => closeBoth(client, server));
  beforeEach(() => {
    seen.length = 0;
    parseErrors.length = 0;
  });

  it('a DELETE with DeleteOptions sends Content-Length, and the next request on the connection is intact', async () => {
    const options = { kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { resourceVersion: '42' } };
    await client.request('DELETE', '/apis/coordination.k8s.io/v1/namespaces/n/leases/l', { body: options });
    await client.request('GET', '/api/v1/namespaces/n/pods/p');
    expect(parseErrors).to.deep.equal([]);
    expect(seen.map((s) => `${s.method} ${s.path}`)).to.deep.equal(['DELETE /apis/coordination.k8s.io/v1/namespaces/n/leases/l', 'GET /api/v1/namespaces/n/pods/p']);
    expect(JSON.parse(seen[0]!.body)).to.deep.equal(options);
    expect(seen[0]!.contentLength).to.equal(String(Buffer.byteLength(seen[0]!.body)));
    // Same socket: the keep-alive connection is the one the stray bytes would have corrupted.
    expect(seen[1]!.port).to.equal(seen[0]!.port);
    expect(seen[1]!.body).to.equal('');
  });

  it('counts bytes, not characters, for a body with non-ASCII text', async () => {
    const body = { metadata: { annotations: { note: 'größe ✓' } } };
    await client.request('PATCH', '/x', { body, contentType: 'application/merge-patch+json' });
    await client.request('GET', '/y');
    expect(parseErrors).to.deep.equal([]);
    expect(JSON.parse(seen[0]!.body)).to.deep.equal(body);
    expect(seen[0]!.contentLength).to.equal(String(Buffer.byteLength(JSON.stringify(body))));
    expect(seen.map((s) => s.path)).to.deep.equal(['/x', '/y']);
  });

  it('a request without a body sends no Content-Length header of its own', async () => {
    await client.request('DELETE', '/z');
    expect(seen[0]!.body).to.equal('');
    expect(seen[0]!.contentLength).to.be.oneOf([undefined, '0']);
  });
});
