import { randomBytes } from 'node:crypto';
import type { KubeConfig, V1Node } from '@kubernetes/client-node';
import { KubeRequestError, kubeRequest } from './kube-request.js';

/**
 * The kwok Nodes the test stand-ins make (machine-fixture.ts, kwok-provider.ts):
 * created (or found, if a pass before made it), listed by label, deleted.
 */

/** Creates the Node; returns the existing one if it is there already. */
export async function createNode(kc: KubeConfig, node: V1Node): Promise<V1Node> {
  try {
    return await kubeRequest<V1Node>(kc, 'POST', '/api/v1/nodes', node);
  } catch (err) {
    if (err instanceof KubeRequestError && err.code === 409) return kubeRequest<V1Node>(kc, 'GET', `/api/v1/nodes/${node.metadata!.name}`);
    throw err;
  }
}

/** Deletes the Node; one that is gone already is no error. */
export async function deleteNode(kc: KubeConfig, name: string): Promise<void> {
  try {
    await kubeRequest(kc, 'DELETE', `/api/v1/nodes/${name}`);
  } catch (err) {
    if (!(err instanceof KubeRequestError && err.code === 404)) throw err;
  }
}

export async function listNodes(kc: KubeConfig, labelSelector: string): Promise<V1Node[]> {
  return (await kubeRequest<{ items: V1Node[] }>(kc, 'GET', `/api/v1/nodes?labelSelector=${encodeURIComponent(labelSelector)}`)).items;
}

/** A name suffix like the apiserver's generateName (5 characters, no vowels). */
export function randomSuffix(): string {
  const alphabet = 'bcdfghjklmnpqrstvwxz2456789';
  return [...randomBytes(5)].map((b) => alphabet[b % alphabet.length]).join('');
}
