import { expect } from 'chai';
import { startHeadroomServer } from '../../../src/cli/headroom-server.js';
import { EXTENDER_MAX_BODY_BYTES } from '../../../src/extender/routes.js';
import { ExtenderState } from '../../../src/extender/state.js';
import { DemandIntake } from '../../../src/provisioning/demand-intake.js';
import type { RunningServer } from '../../../src/server/listen.js';
import { MUTATE_PODS_MAX_BODY_BYTES } from '../../../src/webhook/mutate-pods.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- JSON bodies of varying shape
const body = async (res: Response) => (await res.json()) as any;

describe('server app (plain HTTP on loopback)', () => {
  let server: RunningServer;
  let ready = false;
  const errors: string[] = [];

  before(async () => {
    server = await startHeadroomServer({
      host: '127.0.0.1',
      port: 0,
      tls: false,
      state: () => new ExtenderState(),
      intake: new DemandIntake(10),
      clock: { now: () => Date.UTC(2026, 0, 1), setTimer: () => () => undefined },
      ready: () => ready,
      logError: (m) => errors.push(m),
    });
  });
  after(() => server.close());

  const post = (path: string, body: string | Buffer, headers: Record<string, string> = { 'content-type': 'application/json' }) =>
    fetch(`${server.url}${path}`, { method: 'POST', body, headers });

  it('serves /healthz', async () => {
    const res = await fetch(`${server.url}/healthz`);
    expect(res.status).to.equal(200);
    expect(await body(res)).to.deep.equal({ status: 'ok' });
  });

  it('gates /readyz on the ready() callback', async () => {
    ready = false;
    expect((await fetch(`${server.url}/readyz`)).status).to.equal(503);
    ready = true;
    expect((await fetch(`${server.url}/readyz`)).status).to.equal(200);
  });

  it('answers an unknown path with 404 JSON', async () => {
    const res = await fetch(`${server.url}/nope`);
    expect(res.status).to.equal(404);
    expect(res.headers.get('content-type')).to.match(/application\/json/);
    expect((await body(res)).message).to.contain('/nope');
  });

  it('answers a wrong method on a known path with 405 JSON', async () => {
    const res = await fetch(`${server.url}/mutate/pods`);
    expect(res.status).to.equal(405);
    expect(res.headers.get('allow')).to.equal('POST');
  });

  it('answers malformed JSON with 400 JSON', async () => {
    for (const path of ['/mutate/pods', '/scheduler/filter', '/scheduler/prioritize']) {
      const res = await post(path, '{"apiVersion": ');
      expect(res.status, path).to.equal(400);
      expect((await body(res)).message, path).to.match(/malformed JSON/);
    }
  });

  it('answers an empty body with 400 JSON', async () => {
    const res = await post('/mutate/pods', '');
    expect(res.status).to.equal(400);
    expect((await body(res)).message).to.be.a('string');
  });

  it('answers an AdmissionReview without request with 400', async () => {
    const res = await post('/mutate/pods', JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview' }));
    expect(res.status).to.equal(400);
    expect((await body(res)).message).to.match(/no request/);
  });

  it('answers ExtenderArgs without Pod with 400', async () => {
    const res = await post('/scheduler/filter', JSON.stringify({ NodeNames: ['a'] }));
    expect(res.status).to.equal(400);
    expect((await body(res)).message).to.match(/Pod/);
  });

  it('parses JSON whatever the content type says', async () => {
    const res = await post('/scheduler/prioritize', JSON.stringify({ Pod: {}, NodeNames: ['a'] }), { 'content-type': 'text/plain' });
    expect(res.status).to.equal(200);
    expect(await body(res)).to.deep.equal([]);
  });

  it('answers a body over the webhook limit (near the apiserver\'s 3 MiB) with 413 JSON and keeps serving', async () => {
    const big = Buffer.alloc(MUTATE_PODS_MAX_BODY_BYTES + 1, 0x20);
    const res = await post('/mutate/pods', big);
    expect(res.status).to.equal(413);
    expect((await body(res)).message).to.equal(`request body exceeds ${MUTATE_PODS_MAX_BODY_BYTES} bytes`);
    expect((await fetch(`${server.url}/healthz`)).status).to.equal(200);
  });

  it('routes on the path alone (kube-apiserver adds ?timeout=)', async () => {
    const review = JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: { uid: 'u2' } });
    const res = await post('/mutate/pods?timeout=10s', review);
    expect(res.status).to.equal(200);
    expect((await body(res)).response.uid).to.equal('u2');
  });

  it('answers a streamed (chunked) body over the extender limit with 413, read to the end (no reset)', async () => {
    const chunk = new Uint8Array(1024 * 1024).fill(0x20);
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent++ < 12) controller.enqueue(chunk);
        else controller.close();
      },
    });
    const res = await fetch(`${server.url}/scheduler/filter`, {
      method: 'POST', body: stream, headers: { 'content-type': 'application/json' }, duplex: 'half',
    } as RequestInit);
    expect(res.status).to.equal(413);
    expect((await body(res)).message).to.equal(`request body exceeds ${EXTENDER_MAX_BODY_BYTES} bytes`);
    expect((await fetch(`${server.url}/healthz`)).status).to.equal(200);
  });

  it('answers malformed HTTP with a 400 JSON and keeps serving', async () => {
    const { connect } = await import('node:net');
    const reply = await new Promise<string>((resolve, reject) => {
      const url = new URL(server.url);
      const sock = connect(Number(url.port), url.hostname, () => sock.write('NOT HTTP AT ALL\r\n\r\n'));
      let data = '';
      sock.on('data', (c) => (data += c.toString()));
      sock.on('end', () => resolve(data));
      sock.on('error', reject);
    });
    expect(reply).to.match(/^HTTP\/1\.1 400 Bad Request/);
    expect(reply).to.match(/"message":"bad request/);
    expect((await fetch(`${server.url}/healthz`)).status).to.equal(200);
  });

  it('accepts a review just under the webhook limit', async () => {
    const review = JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: { uid: 'u1', pad: '' } });
    const padded = review.replace('"pad":""', `"pad":"${'x'.repeat(MUTATE_PODS_MAX_BODY_BYTES - review.length)}"`);
    expect(padded.length).to.equal(MUTATE_PODS_MAX_BODY_BYTES);
    const res = await post('/mutate/pods', padded);
    expect(res.status).to.equal(200);
    expect((await body(res)).response.uid).to.equal('u1');
  });

  it('serves prom-client metrics with headroom_ names per endpoint', async () => {
    await fetch(`${server.url}/healthz`);
    const res = await fetch(`${server.url}/metrics`);
    expect(res.status).to.equal(200);
    const text = await res.text();
    expect(text).to.match(/headroom_http_requests_total\{endpoint="\/healthz",code="200"\} \d+/);
    expect(text).to.match(/headroom_http_request_duration_seconds_bucket\{le="0\.001",endpoint="\/healthz"\}/);
    expect(text).to.match(/headroom_http_requests_total\{endpoint="other",code="404"\}/);
    expect(text).to.contain('headroom_process_cpu_user_seconds_total');
    expect(text).to.contain('headroom_webhook_admission_reviews_total');
  });

  it('logged no unexpected (5xx) errors', () => {
    expect(errors).to.deep.equal([]);
  });
});
