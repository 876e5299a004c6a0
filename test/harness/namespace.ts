import { randomBytes } from 'node:crypto';
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';

/**
 * Creates a uniquely named namespace (`<prefix>-<random>`) so test files sharing
 * one control plane do not see each other's objects. Returns its name.
 */
export async function createTestNamespace(kc: KubeConfig, prefix: string): Promise<string> {
  const name = `${prefix.toLowerCase().replace(/[^a-z0-9-]/g, '-').slice(0, 50)}-${randomBytes(3).toString('hex')}`;
  await kc.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name, labels: { 'headroom.dev/test': 'true' } } } });
  return name;
}

/** Deletes a namespace (kube-controller-manager's namespace controller empties it). */
export async function deleteTestNamespace(kc: KubeConfig, name: string): Promise<void> {
  try {
    await kc.makeApiClient(CoreV1Api).deleteNamespace({ name });
  } catch (err) {
    if ((err as { code?: number }).code !== 404) throw err;
  }
}
