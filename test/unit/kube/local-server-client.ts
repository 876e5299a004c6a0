import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { KubeClient } from '../../../src/kube/kube-client.js';

/** Listens on a loopback port and returns a KubeClient for it (plain HTTP, no credentials). */
export async function listenWithClient(server: Server): Promise<KubeClient> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, skipTLSVerify: true }],
    users: [{ name: 'u' }], contexts: [{ name: 'x', cluster: 'c', user: 'u' }], currentContext: 'x',
  });
  return new KubeClient(kc);
}

/** Closes the client and the server with every connection still open. */
export function closeBoth(client: KubeClient, server: Server): void {
  client.close();
  server.closeAllConnections();
  server.close();
}
