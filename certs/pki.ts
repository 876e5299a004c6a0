/**
 * TLS material for Headroom's servers (webhook, extender, metrics) and for the test
 * control plane: a self-signed CA that issues server and client certificates.
 *
 *   const ca = createCertificateAuthority({ commonName: 'headroom-ca' });
 *   const server = issueCertificate(ca, {
 *     commonName: 'headroom-webhook',
 *     dnsNames: [...serviceDnsNames('headroom-webhook', 'headroom-system'), 'localhost'],
 *     ipAddresses: ['127.0.0.1', '::1'],
 *     usages: ['server'],
 *   });
 *   const admin = issueCertificate(ca, { commonName: 'admin', organizations: ['system:masters'], usages: ['client'] });
 *   https.createServer({ cert: server.certPem, key: server.keyPem, ca: ca.certPem }, app);
 *
 * Everything is PEM in, PEM out. RSA keys come from node:crypto (native, ~10x faster
 * than node-forge's pure-JS generator); node-forge builds and signs the X.509
 * structure, which node:crypto cannot do.
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import forge from 'node-forge';

/** A certificate and its private key (PKCS#8), both PEM. */
export interface CertificateKeyPair {
  readonly certPem: string;
  readonly keyPem: string;
}

/** A CA is just a key pair whose certificate may sign others. */
export type CertificateAuthority = CertificateKeyPair;

export type CertificateUsage = 'server' | 'client';

export interface ValidityOptions {
  /** Start of validity; defaults to now minus 5 minutes (tolerates clock skew). */
  readonly notBefore?: Date;
  /** Defaults to 365 days for leaf certificates and 3650 for CAs. */
  readonly validityDays?: number;
  /** RSA modulus length; defaults to 2048. */
  readonly keyBits?: number;
}

export interface CertificateAuthorityOptions extends ValidityOptions {
  readonly commonName?: string;
}

export interface IssueOptions extends ValidityOptions {
  readonly commonName: string;
  /** Subject O= entries. Kubernetes maps these to groups for client certs (e.g. system:masters). */
  readonly organizations?: readonly string[];
  readonly dnsNames?: readonly string[];
  /** IPv4 or IPv6 literals, placed in the SAN as iPAddress entries. */
  readonly ipAddresses?: readonly string[];
  /** Extended key usages; at least one. */
  readonly usages: readonly CertificateUsage[];
}

const DAY_MS = 24 * 60 * 60 * 1000;

/** Creates a fresh self-signed CA. */
export function createCertificateAuthority(opts: CertificateAuthorityOptions = {}): CertificateAuthority {
  const keys = generateRsaKey(opts.keyBits);
  const cert = forge.pki.createCertificate();
  const subject = [{ name: 'commonName', value: opts.commonName ?? 'headroom-ca' }];
  cert.publicKey = keys.publicKey;
  cert.serialNumber = randomSerial();
  setValidity(cert, opts, 3650);
  cert.setSubject(subject);
  cert.setIssuer(subject);
  cert.setExtensions([
    { name: 'basicConstraints', cA: true, critical: true },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
    { name: 'subjectKeyIdentifier' },
  ]);
  cert.sign(keys.privateKey, forge.md.sha256.create());
  return { certPem: forge.pki.certificateToPem(cert), keyPem: keys.keyPem };
}

/** Issues a leaf certificate signed by `ca`. */
export function issueCertificate(ca: CertificateAuthority, opts: IssueOptions): CertificateKeyPair {
  if (opts.usages.length === 0) throw new Error('issueCertificate: at least one usage is required');
  if (!opts.commonName) throw new Error('issueCertificate: commonName is required');
  for (const ip of opts.ipAddresses ?? []) {
    if (isIP(ip) === 0) throw new Error(`issueCertificate: "${ip}" is not an IP address`);
  }
  const caCert = forge.pki.certificateFromPem(ca.certPem);
  const caKey = forge.pki.privateKeyFromPem(ca.keyPem);
  const keys = generateRsaKey(opts.keyBits);

  const cert = forge.pki.createCertificate();
  cert.publicKey = keys.publicKey;
  cert.serialNumber = randomSerial();
  setValidity(cert, opts, 365);
  cert.setSubject([
    ...(opts.organizations ?? []).map((value) => ({ name: 'organizationName', value })),
    { name: 'commonName', value: opts.commonName },
  ]);
  cert.setIssuer(caCert.subject.attributes);

  const altNames = [
    ...(opts.dnsNames ?? []).map((value) => ({ type: 2, value })),
    ...(opts.ipAddresses ?? []).map((ip) => ({ type: 7, ip })),
  ];
  const extensions: object[] = [
    { name: 'basicConstraints', cA: false, critical: true },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
    { name: 'extKeyUsage', serverAuth: opts.usages.includes('server'), clientAuth: opts.usages.includes('client') },
    { name: 'subjectKeyIdentifier' },
    { name: 'authorityKeyIdentifier', keyIdentifier: caCert.generateSubjectKeyIdentifier().getBytes() },
  ];
  if (altNames.length > 0) extensions.push({ name: 'subjectAltName', altNames });
  cert.setExtensions(extensions);
  cert.sign(caKey, forge.md.sha256.create());
  return { certPem: forge.pki.certificateToPem(cert), keyPem: keys.keyPem };
}

/** The DNS names a Service is reachable by from inside the cluster. */
export function serviceDnsNames(service: string, namespace: string, clusterDomain = 'cluster.local'): string[] {
  return [service, `${service}.${namespace}`, `${service}.${namespace}.svc`, `${service}.${namespace}.svc.${clusterDomain}`];
}

function generateRsaKey(bits = 2048): { keyPem: string; publicKey: forge.pki.rsa.PublicKey; privateKey: forge.pki.rsa.PrivateKey } {
  const { publicKey, privateKey } = generateKeyPairSync('rsa', {
    modulusLength: bits,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  return {
    keyPem: privateKey,
    publicKey: forge.pki.publicKeyFromPem(publicKey) as forge.pki.rsa.PublicKey,
    privateKey: forge.pki.privateKeyFromPem(privateKey) as forge.pki.rsa.PrivateKey,
  };
}

/** 128 random bits with the top bit cleared: positive and non-zero, as RFC 5280 requires. */
function randomSerial(): string {
  const bytes = randomBytes(16);
  bytes[0] = (bytes[0]! & 0x7f) | 0x01;
  return bytes.toString('hex');
}

function setValidity(cert: forge.pki.Certificate, opts: ValidityOptions, defaultDays: number): void {
  const notBefore = opts.notBefore ?? new Date(Date.now() - 5 * 60 * 1000);
  cert.validity.notBefore = notBefore;
  cert.validity.notAfter = new Date(notBefore.getTime() + (opts.validityDays ?? defaultDays) * DAY_MS);
}
