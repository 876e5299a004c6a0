import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { startServe, type Serving } from '../../../src/cli/serve.js';

const SNAPSHOT = `
apiVersion: v1
kind: Node
metadata:
  name: busy
  annotations:
    headroom.dev/provisioned-for: ReplicaSet/shop/web-1
status:
  allocatable: {cpu: "4", memory: 8Gi, pods: "110"}
  conditions: [{type: Ready, status: "True"}]
---
apiVersion: v1
kind: Node
metadata:
  name: idle
  annotations:
    headroom.dev/disruption: "consolidating: underutilized"
status:
  allocatable: {cpu: "4", memory: 8Gi, pods: "110"}
  conditions: [{type: Ready, status: "True"}]
---
apiVersion: v1
kind: Pod
metadata: {name: running, namespace: shop}
spec:
  nodeName: busy
  containers: [{name: c, image: i, resources: {requests: {cpu: "2", memory: 4Gi}}}]
status: {phase: Running}
`;

const ROOT = new URL('../../../', import.meta.url).pathname;

/** Runs the real CLI (src/cli/main.ts through tsx) in a child process. */
function cli(args: string[]): Promise<{ code: number | null; stderr: string }> {
  const entry = join(mkdtempSync(join(tmpdir(), 'serve-cli-')), 'cli.mjs');
  const mainUrl = new URL('src/cli/main.ts', new URL(`file://${ROOT}`)).href;
  writeFileSync(entry, `import { main } from ${JSON.stringify(mainUrl)};\nprocess.exitCode = await main(process.argv.slice(2));\n`);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', entry, ...args], { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'], timeout: 90_000 });
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stderr: stderr.trimEnd() }));
  });
}

function post(url: string, ca: string, body: unknown): Promise<{ status: number; json: unknown }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', ca, headers: { 'content-type': 'application/json' }, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, json: JSON.parse(Buffer.concat(chunks).toString()) }));
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

describe('headroom serve', function () {
  // Each case starts the CLI through tsx: seconds alone, more than 30 s when four start
  // at once on a loaded 2-core machine (the child was killed: exit code null).
  this.timeout(120_000);
  let dir: string;
  let file: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'headroom-serve-'));
    file = join(dir, 'snapshot.yaml');
    writeFileSync(file, SNAPSHOT);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('serves the extender over TLS from a snapshot file, with a CA written for clients', async () => {
    const caFile = join(dir, 'ca.crt');
    let serving: Serving | undefined;
    try {
      serving = await startServe({ snapshot: file, host: '127.0.0.1', port: 0, tls: 'generate', service: 'headroom', namespace: 'hr', writeCa: caFile });
      expect(serving.server.url).to.match(/^https:/);
      const ca = readFileSync(caFile, 'utf8');
      const pod = { metadata: { name: 'p', namespace: 'shop', ownerReferences: [{ kind: 'ReplicaSet', name: 'web-1', controller: true }] }, spec: { containers: [{ name: 'c', resources: { requests: { cpu: '1', memory: '1Gi' } } }] } };
      const filter = await post(`${serving.server.url}/scheduler/filter`, ca, { Pod: pod, NodeNames: ['busy', 'idle'] });
      expect(filter.status).to.equal(200);
      expect(filter.json).to.deep.include({ NodeNames: ['busy'], FailedNodes: { idle: 'headroom: consolidating: underutilized' } });
      const prio = await post(`${serving.server.url}/scheduler/prioritize`, ca, { Pod: pod, NodeNames: ['busy', 'idle'] });
      // busy: round(8 * (3/4 + 5/8) / 2) = 6, +2 as provisioned for web-1; idle: round(8 * (1/4 + 1/8) / 2) = 2
      expect(prio.json).to.deep.equal([{ Host: 'busy', Score: 8 }, { Host: 'idle', Score: 2 }]);
    } finally {
      await serving?.server.close();
    }
  });

  it('serves plain HTTP on loopback with --no-tls', async () => {
    const serving = await startServe({ snapshot: file, host: '127.0.0.1', port: 0, tls: false, service: 'h', namespace: 'n' });
    try {
      expect(serving.server.url).to.match(/^http:\/\/127\.0\.0\.1:/);
      expect((await fetch(`${serving.server.url}/readyz`)).status).to.equal(200);
    } finally {
      await serving.server.close();
    }
  });

  it('refuses --no-tls on a non-loopback host: one line, non-zero exit, nothing started', async () => {
    const { code, stderr } = await cli(['serve', '--snapshot', file, '--host', '0.0.0.0', '--port', '0', '--no-tls']);
    expect(code).to.equal(2);
    expect(stderr.split('\n')).to.have.length(1);
    expect(stderr).to.match(/--no-tls is only allowed on a loopback host/);
  });

  it('fails with one line for a missing snapshot, a bad port or no --snapshot', async () => {
    const cases = [
      [['serve', '--snapshot', join(dir, 'nope.yaml'), '--port', '0'], /cannot read .*nope\.yaml/, 1],
      [['serve', '--snapshot', file, '--port', 'http'], /--port must be an integer/, 2],
      [['serve'], /--snapshot is required/, 2],
      [['serve', '--snapshot', file, '--bogus'], /bogus/, 2],
    ] as const;
    const results = await Promise.all(cases.map(([args]) => cli([...args])));
    cases.forEach(([args, want, exit], i) => {
      const { code, stderr } = results[i]!;
      expect(code, args.join(' ')).to.equal(exit);
      expect(stderr.split('\n'), args.join(' ')).to.have.length(1);
      expect(stderr, args.join(' ')).to.match(want);
    });
  });

  it('refuses to start on a snapshot with an invalid object, naming it, as plan does (issue 25, item 4)', async () => {
    const bad = join(dir, 'bad.yaml');
    writeFileSync(bad, `${SNAPSHOT}---
apiVersion: v1
kind: Pod
metadata: {name: greedy, namespace: shop}
spec:
  containers: [{name: c, image: i, resources: {requests: {cpu: lots}}}]
`);
    const { code, stderr } = await cli(['serve', '--snapshot', bad, '--host', '127.0.0.1', '--port', '0', '--no-tls']);
    expect(code).to.equal(1);
    expect(stderr.split('\n')).to.have.length(1);
    expect(stderr).to.match(/Pod shop\/greedy: .*cpu/);
  });

  it('fails with one line when the port is taken', async () => {
    const serving = await startServe({ snapshot: file, host: '127.0.0.1', port: 0, tls: false, service: 'h', namespace: 'n' });
    try {
      const { code, stderr } = await cli(['serve', '--snapshot', file, '--host', '127.0.0.1', '--port', String(serving.server.port), '--no-tls']);
      expect(code).to.equal(1);
      expect(stderr).to.match(/already in use/);
    } finally {
      await serving.server.close();
    }
  });
});
