import { isIP } from 'node:net';
import { createCertificateAuthority, issueCertificate, serviceDnsNames } from '../../certs/pki.js';
import type { TlsMaterial } from './tls.js';

export interface ServingCertOptions {
  /** The Service in front of the webhook/extender, e.g. `headroom`. */
  service: string;
  namespace: string;
  /** Extra SANs for development: host names or IP literals (default localhost, 127.0.0.1, ::1). */
  extraHosts?: string[];
  validityDays?: number;
}

/**
 * A fresh CA and a serving certificate for `<service>.<namespace>.svc` (and its other
 * in-cluster names) plus loopback, for when no cert-manager secret is mounted. The CA
 * goes into the webhook configuration's caBundle and the scheduler's tlsConfig.caData.
 */
export function generateServingCert(opts: ServingCertOptions): Required<Omit<TlsMaterial, 'clientCaPem'>> {
  const hosts = opts.extraHosts ?? ['localhost', '127.0.0.1', '::1'];
  const isIp = (h: string) => isIP(h) !== 0;
  const validity = opts.validityDays === undefined ? {} : { validityDays: opts.validityDays };
  const ca = createCertificateAuthority({ commonName: `${opts.service}-ca`, ...validity });
  const leaf = issueCertificate(ca, {
    commonName: `${opts.service}.${opts.namespace}.svc`,
    dnsNames: [...serviceDnsNames(opts.service, opts.namespace), ...hosts.filter((h) => !isIp(h))],
    ipAddresses: hosts.filter(isIp),
    usages: ['server'],
    ...validity,
  });
  return { certPem: leaf.certPem, keyPem: leaf.keyPem, caPem: ca.certPem };
}
