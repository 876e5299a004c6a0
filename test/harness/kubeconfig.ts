import { stringify } from 'yaml';

export interface KubeconfigUser {
  readonly server: string;
  readonly caPem: string;
  readonly certPem: string;
  readonly keyPem: string;
  /** Also names the cluster entry and context. */
  readonly name: string;
}

/** A kubeconfig with the credentials embedded, so the file alone is enough. */
export function kubeconfigYaml(u: KubeconfigUser): string {
  const b64 = (s: string): string => Buffer.from(s).toString('base64');
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'headroom-test', cluster: { server: u.server, 'certificate-authority-data': b64(u.caPem) } }],
    users: [{ name: u.name, user: { 'client-certificate-data': b64(u.certPem), 'client-key-data': b64(u.keyPem) } }],
    contexts: [{ name: u.name, context: { cluster: 'headroom-test', user: u.name } }],
    'current-context': u.name,
  });
}
