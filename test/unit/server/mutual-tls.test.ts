import { mkdtempSync, mkdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { createCertificateAuthority, issueCertificate, type CertificateKeyPair } from '../../../certs/pki.js';
import { controllerCommand } from '../../../src/cli/controller.js';
import { startHeadroomServer } from '../../../src/cli/headroom-server.js';
import { startServe } from '../../../src/cli/serve.js';
import { UsageError } from '../../../src/cli/command.js';
import { ExtenderState } from '../../../src/extender/state.js';
import { DemandIntake } from '../../../src/provisioning/demand-intake.js';
import type { RunningServer } from '../../../src/server/listen.js';
import { generateServingCert } from '../../../src/server/serving-cert.js';
import { validateCaBundle } from '../../../src/server/tls.js';

/** POST an empty filter request; resolves with the status, or rejects when the handshake is refused. */
function filter(url: string, ca: string, client?: CertificateKeyPair): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}/scheduler/filter`, {
      method: 'POST', ca, agent: false, headers: { 'content-type': 'application/json' },
      ...(client ? { cert: client.certPem, key: client.keyPem } : {}),
    }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode!));
    });
    req.on('error', reject);
    req.end(JSON.stringify({ Pod: { metadata: { name: 'p', namespace: 'n' }, spec: { containers: [] } }, NodeNames: [] }));
  });
}

const refused = (p: Promise<number>) => p.then((s) => `answered ${s}`, (err: NodeJS.ErrnoException) => `refused ${err.code ?? err.message}`);

const deps = () => ({
  state: () => new ExtenderState(),
  intake: new DemandIntake(10),
  clock: { now: () => 0, setTimer: () => () => undefined },
  ready: () => true,
  logError: () => undefined,
});

describe('mutual TLS on the webhook and extender server (--client-ca)', function () {
  this.timeout(30_000);
  const serving = generateServingCert({ service: 'headroom', namespace: 'headroom-system' });
  const clientCa = createCertificateAuthority({ commonName: 'control-plane-client-ca' });
  const otherCa = createCertificateAuthority({ commonName: 'someone-else' });
  const apiserver = issueCertificate(clientCa, { commonName: 'kube-apiserver-webhook-client', usages: ['client'] });
  const stranger = issueCertificate(otherCa, { commonName: 'kube-apiserver-webhook-client', usages: ['client'] });
  let dir: string;
  let server: RunningServer | undefined;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'headroom-mtls-'));
  });
  afterEach(async () => {
    await server?.close(0);
    server = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers a client whose certificate chains to the client CA and refuses one without a certificate or from another CA', async () => {
    server = await startHeadroomServer({ host: '127.0.0.1', port: 0, tls: { ...serving, clientCaPem: clientCa.certPem }, ...deps() });
    expect(await refused(filter(server.url, serving.caPem, apiserver))).to.equal('answered 200');
    expect(await refused(filter(server.url, serving.caPem))).to.match(/^refused /);
    expect(await refused(filter(server.url, serving.caPem, stranger))).to.match(/^refused /);
  });

  it('without a client CA, a client without a certificate is served (the default)', async () => {
    server = await startHeadroomServer({ host: '127.0.0.1', port: 0, tls: serving, ...deps() });
    expect(await refused(filter(server.url, serving.caPem))).to.equal('answered 200');
  });

  /** Writes a file the way the kubelet updates a ConfigMap volume: new dir, swap the ..data symlink. */
  function writeVolume(volume: string, files: Record<string, string>, gen: number) {
    mkdirSync(volume, { recursive: true });
    const data = join(volume, `..${gen}`);
    mkdirSync(data);
    for (const [name, text] of Object.entries(files)) writeFileSync(join(data, name), text);
    symlinkSync(`..${gen}`, join(volume, '..data_tmp'));
    renameSync(join(volume, '..data_tmp'), join(volume, '..data'));
    if (gen === 1) for (const name of Object.keys(files)) symlinkSync(join('..data', name), join(volume, name));
  }

  it('reloads a rotated client CA from its mounted file without a restart; a torn bundle is skipped', async () => {
    const tlsDir = join(dir, 'tls');
    const caDir = join(dir, 'client-ca');
    writeVolume(tlsDir, { 'tls.crt': serving.certPem, 'tls.key': serving.keyPem, 'ca.crt': serving.caPem }, 1);
    writeVolume(caDir, { 'ca.crt': clientCa.certPem }, 1);
    const errors: string[] = [];
    server = await startHeadroomServer({
      host: '127.0.0.1', port: 0, tls: { dir: tlsDir, clientCaFile: join(caDir, 'ca.crt'), watch: { pollMs: 100, debounceMs: 10 } },
      ...deps(), logError: (m) => errors.push(m),
    });
    expect(await refused(filter(server.url, serving.caPem, apiserver))).to.equal('answered 200');
    expect(await refused(filter(server.url, serving.caPem, stranger))).to.match(/^refused /);

    writeVolume(caDir, { 'ca.crt': '-----BEGIN CERTIFICATE-----\ntorn\n' }, 2);
    await new Promise((r) => setTimeout(r, 400));
    expect(errors.some((e) => /TLS reload .* skipped: client CA bundle holds no PEM certificate/.test(e)), errors.join('\n')).to.equal(true);
    expect(await refused(filter(server.url, serving.caPem, apiserver)), 'old CA kept while the new one is unusable').to.equal('answered 200');

    writeVolume(caDir, { 'ca.crt': otherCa.certPem }, 3);
    const deadline = Date.now() + 10_000;
    let now = '';
    while (Date.now() < deadline) {
      now = await refused(filter(server.url, serving.caPem, stranger));
      if (now === 'answered 200') break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(now, 'a client of the rotated-in CA is answered').to.equal('answered 200');
    expect(await refused(filter(server.url, serving.caPem, apiserver)), 'a client of the rotated-out CA is refused').to.match(/^refused /);
  });

  it('refuses to start on an unusable client CA bundle', async () => {
    let err: unknown;
    try {
      server = await startHeadroomServer({ host: '127.0.0.1', port: 0, tls: { ...serving, clientCaPem: 'not a certificate' }, ...deps() });
    } catch (e) {
      err = e;
    }
    expect((err as Error | undefined)?.message).to.match(/client CA bundle holds no PEM certificate/);
  });

  it('cannot be switched on or off by a rotation (requestCert is fixed at start)', async () => {
    server = await startHeadroomServer({ host: '127.0.0.1', port: 0, tls: serving, ...deps() });
    expect(() => server!.updateTls({ ...serving, clientCaPem: clientCa.certPem })).to.throw(/started without client certificate verification/);
  });

  it('validateCaBundle accepts bundles of several certificates and refuses junk', () => {
    expect(() => validateCaBundle(`${clientCa.certPem}\n${otherCa.certPem}`)).to.not.throw();
    expect(() => validateCaBundle('')).to.throw(/no PEM certificate/);
    expect(() => validateCaBundle('-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----')).to.throw(/does not parse/);
  });

  it('serve --client-ca: generated serving cert, client CA from the file; refused with --no-tls', async () => {
    const caFile = join(dir, 'client-ca.crt');
    writeFileSync(caFile, clientCa.certPem);
    const snapshot = join(dir, 'empty.yaml');
    writeFileSync(snapshot, 'apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: "1", memory: 1Gi, pods: "10"}}\n');
    const written = join(dir, 'ca.crt');
    const s = await startServe({ snapshot, host: '127.0.0.1', port: 0, tls: 'generate', clientCaFile: caFile, service: 'h', namespace: 'n', writeCa: written });
    server = s.server;
    const { readFileSync } = await import('node:fs');
    const ca = readFileSync(written, 'utf8');
    expect(await refused(filter(server.url, ca, apiserver))).to.equal('answered 200');
    expect(await refused(filter(server.url, ca))).to.match(/^refused /);
    let err: unknown;
    try {
      await startServe({ snapshot, host: '127.0.0.1', port: 0, tls: false, clientCaFile: caFile, service: 'h', namespace: 'n' });
    } catch (e) {
      err = e;
    }
    expect(err).to.be.instanceOf(UsageError);
  });

  it('controller: --client-ca without --webhook-address is a usage error', async () => {
    let err: unknown;
    try {
      await controllerCommand.run({ 'client-ca': '/x/ca.crt', kubeconfig: '/nonexistent' }, []);
    } catch (e) {
      err = e;
    }
    expect(err).to.be.instanceOf(UsageError);
    expect((err as Error).message).to.equal('controller: --client-ca needs --webhook-address (it guards the webhook and the extender)');
  });
});
