import { X509Certificate, createPrivateKey, createPublicKey, createSign, createVerify } from 'node:crypto';
import { once } from 'node:events';
import { createServer, request } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { expect } from 'chai';
import { createCertificateAuthority, issueCertificate, serviceDnsNames } from '../../../certs/pki.js';

describe('certs/pki', function () {
  this.timeout(20000);
  const ca = createCertificateAuthority({ commonName: 'test-ca' });
  const caX509 = new X509Certificate(ca.certPem);

  it('creates a self-signed CA certificate', () => {
    expect(caX509.ca).to.equal(true);
    expect(caX509.subject).to.equal('CN=test-ca');
    expect(caX509.issuer).to.equal('CN=test-ca');
    expect(caX509.verify(caX509.publicKey)).to.equal(true);
    expect(caX509.checkPrivateKey(createPrivateKey(ca.keyPem))).to.equal(true);
    expect(caX509.keyUsage ?? []).to.not.include('1.3.6.1.5.5.7.3.1');
  });

  it('issues a server certificate with DNS and IP SANs, chained to the CA', () => {
    const server = issueCertificate(ca, {
      commonName: 'headroom-webhook',
      dnsNames: [...serviceDnsNames('headroom-webhook', 'headroom-system'), 'localhost'],
      ipAddresses: ['127.0.0.1', '::1'],
      usages: ['server'],
    });
    const x = new X509Certificate(server.certPem);
    expect(x.ca).to.equal(false);
    expect(x.issuer).to.equal('CN=test-ca');
    expect(x.checkIssued(caX509)).to.equal(true);
    expect(x.verify(caX509.publicKey)).to.equal(true);
    expect(x.verify(x.publicKey)).to.equal(false);
    expect(x.checkPrivateKey(createPrivateKey(server.keyPem))).to.equal(true);
    expect(x.checkHost('headroom-webhook.headroom-system.svc')).to.equal('headroom-webhook.headroom-system.svc');
    expect(x.checkHost('headroom-webhook.headroom-system.svc.cluster.local')).to.not.equal(undefined);
    expect(x.checkHost('localhost')).to.equal('localhost');
    expect(x.checkHost('other.example')).to.equal(undefined);
    expect(x.checkIP('127.0.0.1')).to.equal('127.0.0.1');
    expect(x.checkIP('::1')).to.not.equal(undefined);
    expect(x.checkIP('10.0.0.1')).to.equal(undefined);
    expect(x.keyUsage).to.deep.equal(['1.3.6.1.5.5.7.3.1']); // serverAuth only
  });

  it('issues a client certificate carrying O= groups', () => {
    const admin = issueCertificate(ca, { commonName: 'admin', organizations: ['system:masters', 'ops'], usages: ['client'] });
    const x = new X509Certificate(admin.certPem);
    expect(x.subject.split('\n')).to.have.members(['O=system:masters', 'O=ops', 'CN=admin']);
    expect(x.keyUsage).to.deep.equal(['1.3.6.1.5.5.7.3.2']); // clientAuth only
    expect(x.subjectAltName).to.equal(undefined);
    expect(x.checkIssued(caX509)).to.equal(true);
  });

  it('gives every certificate its own key and serial', () => {
    const a = issueCertificate(ca, { commonName: 'a', usages: ['client'] });
    const b = issueCertificate(ca, { commonName: 'a', usages: ['client'] });
    expect(a.keyPem).to.not.equal(b.keyPem);
    expect(new X509Certificate(a.certPem).serialNumber).to.not.equal(new X509Certificate(b.certPem).serialNumber);
    // the key really is the certificate's: a signature made with it verifies with the cert's public key
    const sig = createSign('sha256').update('x').sign(a.keyPem);
    const pub = createPublicKey(new X509Certificate(a.certPem).publicKey.export({ type: 'spki', format: 'pem' }));
    expect(createVerify('sha256').update('x').verify(pub, sig)).to.equal(true);
  });

  it('honours notBefore and validityDays', () => {
    const notBefore = new Date('2030-01-01T00:00:00Z');
    const x = new X509Certificate(issueCertificate(ca, { commonName: 'later', usages: ['server'], notBefore, validityDays: 2 }).certPem);
    expect(new Date(x.validFrom).toISOString()).to.equal('2030-01-01T00:00:00.000Z');
    expect(new Date(x.validTo).toISOString()).to.equal('2030-01-03T00:00:00.000Z');
  });

  it('rejects bad input', () => {
    expect(() => issueCertificate(ca, { commonName: 'x', usages: [] })).to.throw(/usage/);
    expect(() => issueCertificate(ca, { commonName: 'x', usages: ['server'], ipAddresses: ['localhost'] })).to.throw(/not an IP/);
  });

  it('works for real mutual TLS with node:https', async () => {
    const server = issueCertificate(ca, { commonName: 'srv', dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'], usages: ['server'] });
    const client = issueCertificate(ca, { commonName: 'alice', organizations: ['devs'], usages: ['client'] });
    const srv = createServer({ cert: server.certPem, key: server.keyPem, ca: ca.certPem, requestCert: true, rejectUnauthorized: true }, (req, res) => {
      const peer = (req.socket as TLSSocket).getPeerCertificate();
      res.end(`${peer.subject.CN}/${String(peer.subject.O)}`);
    });
    srv.listen(0, '127.0.0.1');
    await once(srv, 'listening');
    try {
      const { port } = srv.address() as AddressInfo;
      const body = await new Promise<string>((resolve, reject) => {
        const req = request({ host: '127.0.0.1', port, path: '/', ca: ca.certPem, cert: client.certPem, key: client.keyPem }, (res) => {
          let data = '';
          res.on('data', (c: Buffer) => (data += c.toString()));
          res.on('end', () => resolve(data));
        });
        req.on('error', reject);
        req.end();
      });
      expect(body).to.equal('alice/devs');
    } finally {
      srv.close();
    }
  });
});
