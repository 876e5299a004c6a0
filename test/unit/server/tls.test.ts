import { X509Certificate } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync, renameSync, mkdirSync, symlinkSync, unlinkSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import type { V1MutatingWebhookConfiguration } from '@kubernetes/client-node';
import { expect } from 'chai';
import { startHeadroomServer } from '../../../src/cli/headroom-server.js';
import { ExtenderState } from '../../../src/extender/state.js';
import { DemandIntake } from '../../../src/provisioning/demand-intake.js';
import { withCaBundle } from '../../../src/server/ca-bundle.js';
import { isLoopbackHost, type RunningServer } from '../../../src/server/listen.js';
import { generateServingCert } from '../../../src/server/serving-cert.js';

/** GET over TLS trusting only `ca`; resolves with the status and the served cert's serial. */
function get(url: string, ca: string): Promise<{ status: number; serial: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { ca, agent: false }, (res) => {
      const serial = (res.socket as TLSSocket).getPeerCertificate().serialNumber;
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode!, serial }));
    });
    req.on('error', reject);
    req.end();
  });
}

const deps = () => ({
  state: () => new ExtenderState(),
  intake: new DemandIntake(10),
  clock: { now: () => 0, setTimer: () => () => undefined },
  ready: () => true,
  logError: () => undefined,
});

describe('TLS serving', function () {
  this.timeout(30_000);
  const first = generateServingCert({ service: 'headroom', namespace: 'headroom-system' });
  const second = generateServingCert({ service: 'headroom', namespace: 'headroom-system' });
  const serialOf = (pem: string) => new X509Certificate(pem).serialNumber;

  it('serves HTTPS with a generated certificate valid for loopback and the service name', async () => {
    const server = await startHeadroomServer({ host: '127.0.0.1', port: 0, tls: first, ...deps() });
    try {
      expect(server.url).to.match(/^https:\/\/127\.0\.0\.1:\d+$/);
      const res = await get(`${server.url}/healthz`, first.caPem);
      expect(res.status).to.equal(200);
      const x509 = new X509Certificate(first.certPem);
      expect(x509.subjectAltName).to.contain('DNS:headroom.headroom-system.svc');
      expect(x509.subjectAltName).to.contain('IP Address:127.0.0.1');
      // A client that does not trust our CA is refused.
      await get(`${server.url}/healthz`, second.caPem).then(
        () => expect.fail('handshake should fail with the wrong CA'),
        (err: Error) => expect(err.message).to.match(/certificate/i),
      );
    } finally {
      await server.close();
    }
  });

  describe('from a mounted secret directory', () => {
    let dir: string;
    let server: RunningServer;
    beforeEach(() => {
      dir = mkdtempSync(join(tmpdir(), 'headroom-tls-'));
    });
    afterEach(async () => {
      await server?.close();
      rmSync(dir, { recursive: true, force: true });
    });

    /** Writes the files the way the kubelet does: a new timestamped dir, then swap the ..data symlink. */
    function writeSecret(m: { certPem: string; keyPem: string; caPem: string }, gen: number) {
      const data = join(dir, `..${gen}`);
      mkdirSync(data);
      writeFileSync(join(data, 'tls.crt'), m.certPem);
      writeFileSync(join(data, 'tls.key'), m.keyPem);
      writeFileSync(join(data, 'ca.crt'), m.caPem);
      symlinkSync(`..${gen}`, join(dir, '..data_tmp'));
      renameSync(join(dir, '..data_tmp'), join(dir, '..data'));
      if (gen === 1) for (const f of ['tls.crt', 'tls.key', 'ca.crt']) symlinkSync(join('..data', f), join(dir, f));
    }

    it('reloads a rotated certificate without a restart', async () => {
      writeSecret(first, 1);
      server = await startHeadroomServer({ host: '127.0.0.1', port: 0, tls: { dir, watch: { pollMs: 200, debounceMs: 20 } }, ...deps() });
      expect((await get(`${server.url}/healthz`, first.caPem)).serial).to.equal(serialOf(first.certPem));
      writeSecret(second, 2);
      const deadline = Date.now() + 10_000;
      let serial = '';
      while (Date.now() < deadline) {
        serial = await get(`${server.url}/healthz`, second.caPem).then((r) => r.serial, () => '');
        if (serial) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(serial).to.equal(serialOf(second.certPem));
    });

    it('keeps the old certificate while the key does not match the new cert (rotation in progress)', async () => {
      writeFileSync(join(dir, 'tls.crt'), first.certPem);
      writeFileSync(join(dir, 'tls.key'), first.keyPem);
      const errors: string[] = [];
      server = await startHeadroomServer({
        host: '127.0.0.1', port: 0, tls: { dir, watch: { pollMs: 100, debounceMs: 10 } }, ...deps(), logError: (m) => errors.push(m),
      });
      unlinkSync(join(dir, 'tls.crt'));
      writeFileSync(join(dir, 'tls.crt'), second.certPem);
      await new Promise((r) => setTimeout(r, 500));
      expect((await get(`${server.url}/healthz`, first.caPem)).serial).to.equal(serialOf(first.certPem));
      expect(errors.some((e) => /TLS reload .* skipped/.test(e))).to.equal(true);
      writeFileSync(join(dir, 'tls.key'), second.keyPem);
      const deadline = Date.now() + 5_000;
      let serial = '';
      while (Date.now() < deadline && serial !== serialOf(second.certPem)) {
        serial = await get(`${server.url}/healthz`, second.caPem).then((r) => r.serial, () => '');
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(serial).to.equal(serialOf(second.certPem));
    });
  });
});

describe('caBundle injection (pure part)', () => {
  const config: V1MutatingWebhookConfiguration = {
    metadata: { name: 'headroom' },
    webhooks: [
      { name: 'a.headroom.dev', clientConfig: { url: 'https://x/mutate/pods' }, admissionReviewVersions: ['v1'], sideEffects: 'None' },
      { name: 'b.headroom.dev', clientConfig: { url: 'https://x/mutate/pods', caBundle: 'old' }, admissionReviewVersions: ['v1'], sideEffects: 'None' },
    ],
  };
  it('sets every webhook\'s caBundle and reports no change when already set', () => {
    const updated = withCaBundle(config, 'bmV3')!;
    expect(updated.webhooks!.map((w) => w.clientConfig.caBundle)).to.deep.equal(['bmV3', 'bmV3']);
    expect(config.webhooks![1]!.clientConfig.caBundle).to.equal('old');
    expect(withCaBundle(updated, 'bmV3')).to.equal(undefined);
  });
});

describe('isLoopbackHost', () => {
  it('accepts only loopback', () => {
    for (const h of ['127.0.0.1', '127.1.2.3', '::1', 'localhost']) expect(isLoopbackHost(h), h).to.equal(true);
    for (const h of ['0.0.0.0', '10.0.0.1', '::', 'example.com', '128.0.0.1']) expect(isLoopbackHost(h), h).to.equal(false);
  });
});
