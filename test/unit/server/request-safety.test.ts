/**
 * Regression tests for the request-path defects of issue 10 (docs/adr/0043), against the
 * real server on loopback. Each of these failed before the fix: the process crashed,
 * answered 5xx, minted metric series, kept whole pods in memory, returned scores outside
 * 0..10 or reset a client that was still writing.
 */
import { connect } from 'node:net';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { expect } from 'chai';
import { ExtenderState } from '../../../src/extender/state.js';
import { DemandIntake } from '../../../src/provisioning/demand-intake.js';
import { startHeadroomServer } from '../../../src/cli/headroom-server.js';
import type { RunningServer } from '../../../src/server/listen.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- JSON bodies of varying shape
type Json = any;

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
const pod = (cpu: string) => ({ metadata: { name: 'p', namespace: 'default' }, spec: { containers: [{ name: 'c', resources: { requests: { cpu, memory: '1Gi' } } }] } });

describe('request safety (issue 10 regressions)', () => {
  let server: RunningServer;
  let intake: DemandIntake;
  const errors: string[] = [];

  before(async () => {
    const state = new ExtenderState();
    state.setNode('known', { allocatable: { cpu: 4000, memory: 8 * 2 ** 30 }, requested: { cpu: 1000, memory: 2 ** 30 } });
    intake = new DemandIntake();
    server = await startHeadroomServer({
      host: '127.0.0.1', port: 0, tls: false, state: () => state, intake,
      clock: { now: () => Date.UTC(2026, 0, 1), setTimer: () => () => undefined },
      ready: () => true, logError: (m) => errors.push(m),
    });
  });
  after(() => server.close());

  const post = async (path: string, body: string | Buffer): Promise<{ status: number; json: Json }> => {
    const res = await fetch(`${server.url}${path}`, { method: 'POST', body, headers: { 'content-type': 'application/json' } });
    return { status: res.status, json: await res.json() };
  };
  const stillServes = async () => {
    const res = await post('/scheduler/prioritize', JSON.stringify({ Pod: pod('1'), NodeNames: ['known'] }));
    expect(res.status).to.equal(200);
    expect(res.json).to.deep.equal([{ Host: 'known', Score: 3 }]);
  };
  const oneLine = (message: unknown) => {
    expect(message).to.be.a('string');
    expect(message as string).not.to.contain('\n');
    expect((message as string).length).to.be.below(400);
  };

  it('defect 1: a NodeList holding an array nested 6,000 deep is a 400, not a crash', async () => {
    const body = `{"Pod":${JSON.stringify(pod('1'))},"Nodes":{"items":[{"metadata":{"name":"n1"},"spec":{"x":${nested(6000)}}}]}}`;
    for (const path of ['/scheduler/filter', '/scheduler/prioritize', '/mutate/pods']) {
      const res = await post(path, body);
      expect(res.status, path).to.equal(400);
      expect(res.json.message).to.equal('JSON nested deeper than 100 levels');
    }
    await stillServes();
  });

  it('defect 1: NodeList mode still returns the surviving Nodes (depth within the bound)', async () => {
    const node = { metadata: { name: 'n1' }, status: { allocatable: { cpu: '4', memory: '8Gi' } }, spec: { x: JSON.parse(nested(90)) } };
    const res = await post('/scheduler/filter', JSON.stringify({ Pod: pod('1'), Nodes: { items: [node], extra: JSON.parse(nested(50)) } }));
    expect(res.status).to.equal(200);
    expect(res.json.Nodes.items).to.deep.equal([node]);
    expect(res.json.Nodes).not.to.have.property('extra');
  });

  it('defect 2: demand records keep no whole pod: 60 pods of 1 MiB retain well under 60 MiB', async () => {
    gc();
    const before = process.memoryUsage().heapUsed;
    for (let i = 0; i < 60; i++) {
      const big = { ...pod('100m'), metadata: { generateName: `big-${i}-`, namespace: 'default' } };
      big.spec.containers[0] = { ...big.spec.containers[0]!, args: ['x'.repeat(1024 * 1024)] } as never;
      const review = { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: { uid: `u${i}`, operation: 'CREATE', resource: { group: '', version: 'v1', resource: 'pods' }, object: big } };
      expect((await post('/mutate/pods', JSON.stringify(review))).status).to.equal(200);
    }
    await new Promise((r) => setImmediate(r));
    expect(intake.size).to.be.at.least(60);
    gc();
    const grown = process.memoryUsage().heapUsed - before;
    expect(grown, `heap grew ${(grown / 2 ** 20).toFixed(1)} MiB`).to.be.below(20 * 2 ** 20);
  });

  it('defect 3: the admission metrics\' operation label takes values from a fixed set', async () => {
    for (let i = 0; i < 50; i++) {
      const review = { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: { uid: `m${i}`, operation: `OP-${i}` } };
      expect((await post('/mutate/pods', JSON.stringify(review))).status).to.equal(200);
    }
    const text = await (await fetch(`${server.url}/metrics`)).text();
    const values = new Set([...text.matchAll(/headroom_webhook_admission_reviews_total\{operation="([^"]*)"/g)].map((m) => m[1]));
    expect([...values].every((v) => ['CREATE', 'UPDATE', 'DELETE', 'CONNECT', 'other'].includes(v!)), [...values].join(',')).to.equal(true);
    expect(values.has('other')).to.equal(true);
  });

  it('defect 4: a legal 9 MB body with 800k keys is refused (413) at the extender, not parsed', async () => {
    const keys = Array.from({ length: 800_000 }, (_, i) => `"k${i}":0`).join(',');
    const body = `{"Pod":${JSON.stringify(pod('1'))},"NodeNames":["known"],"pad":{${keys}}}`;
    expect(body.length).to.be.above(9_000_000);
    const res = await post('/scheduler/prioritize', body);
    expect(res.status).to.equal(413);
    oneLine(res.json.message);
    await stillServes();
  });

  it('defect 4: a body of more than 100,000 values is refused before it is parsed, and so are more than 10,000 candidates', async () => {
    const many = await post('/scheduler/prioritize', `{"Pod":{"spec":{"containers":[${Array(150_000).fill('{}').join(',')}]}},"NodeNames":["known"]}`);
    expect(many.status).to.equal(400);
    expect(many.json.message).to.equal('JSON with more than 100000 values');
    const names = await post('/scheduler/filter', JSON.stringify({ Pod: pod('1'), NodeNames: Array.from({ length: 10_001 }, (_, i) => `n${i}`) }));
    expect(names.status).to.equal(400);
    expect(names.json.message).to.equal('ExtenderArgs has 10001 candidate nodes; at most 10000 are accepted');
    await stillServes();
  });

  it('defect 4: the extender limit fits a pod and 5,000 node names of 253 characters', async () => {
    const names = Array.from({ length: 5000 }, (_, i) => `${String(i).padStart(5, '0')}${'n'.repeat(248)}`);
    const res = await post('/scheduler/filter', JSON.stringify({ Pod: pod('1'), NodeNames: names }));
    expect(res.status).to.equal(200);
    expect(res.json.NodeNames).to.have.length(5000);
  });

  it('defect 5: an invalid quantity is a one-line 400, not a 500', async () => {
    for (const cpu of ['abc', 'NaN', '1e999', '']) {
      for (const path of ['/scheduler/prioritize', '/scheduler/filter']) {
        const res = await post(path, JSON.stringify({ Pod: pod(cpu), NodeNames: [] }));
        // filter with no candidates reads no quantity; prioritize always does.
        if (path === '/scheduler/filter') expect(res.status).to.be.oneOf([200, 400]);
        else expect(res.status, `${path} cpu=${cpu}`).to.equal(400);
        if (res.status === 400) oneLine(res.json.message);
      }
    }
    const res = await post('/scheduler/prioritize', JSON.stringify({ Pod: { spec: { containers: [{ resources: { requests: { cpu: JSON.parse(nested(80)) } } }] } }, NodeNames: ['known'] }));
    expect(res.status).to.equal(400);
    expect(res.json.message).to.equal('ExtenderArgs: invalid quantity an array');
  });

  it('defect 5: a deeply nested apiVersion is a 400, not a 500 from building the message', async () => {
    const res = await post('/mutate/pods', `{"apiVersion":${nested(10_000)},"kind":"AdmissionReview","request":{"uid":"x"}}`);
    expect(res.status).to.equal(400);
    oneLine(res.json.message);
    const wrong = await post('/mutate/pods', JSON.stringify({ apiVersion: JSON.parse(nested(50)), kind: 'AdmissionReview', request: { uid: 'x' } }));
    expect(wrong.status).to.equal(400);
    expect(wrong.json.message).to.equal('unsupported AdmissionReview apiVersion an array; want admission.k8s.io/v1');
  });

  it('defect 6: negative quantities are refused (400), so no score leaves 0..10', async () => {
    const res = await post('/scheduler/prioritize', JSON.stringify({ Pod: pod('-1000000'), NodeNames: ['known'] }));
    expect(res.status).to.equal(400);
    expect(res.json.message).to.equal('ExtenderArgs: invalid quantity "-1000000": must not be negative');
    const nodes = { items: [{ metadata: { name: 'neg' }, status: { allocatable: { cpu: '-4', memory: '8Gi' } } }] };
    const viaNode = await post('/scheduler/prioritize', JSON.stringify({ Pod: pod('1'), Nodes: nodes }));
    expect(viaNode.status).to.equal(400);
    expect(viaNode.json.message).to.match(/must not be negative/);
  });

  it('defect 14: a client that writes a whole 12 MiB body before reading gets its 413 (no reset)', async () => {
    const size = 12 * 1024 * 1024;
    const url = new URL(server.url);
    const reply = await new Promise<string>((resolve, reject) => {
      const sock = connect(Number(url.port), url.hostname);
      let data = '';
      sock.on('data', (c) => (data += c.toString()));
      sock.on('error', reject);
      sock.on('connect', async () => {
        // As Python's urllib does: the whole body goes out before the response is read.
        sock.write(`POST /mutate/pods HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${size}\r\n\r\n`);
        const chunk = Buffer.alloc(256 * 1024, 0x20);
        for (let sent = 0; sent < size; sent += chunk.length) {
          if (!sock.write(chunk)) await new Promise((r) => sock.once('drain', r));
        }
        const deadline = Date.now() + 5000;
        while (!data.includes('}') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
        sock.destroy();
        resolve(data);
      });
    });
    expect(reply).to.match(/^HTTP\/1\.1 413 /);
    expect(reply).to.contain('request body exceeds');
    await stillServes();
  });

  it('logged no unexpected (5xx) errors', () => {
    expect(errors.filter((e) => !e.includes('not recorded'))).to.deep.equal([]);
  });
});
