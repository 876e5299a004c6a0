import type { AdmissionregistrationV1Api, V1MutatingWebhookConfiguration } from '@kubernetes/client-node';

/** When this annotation is set, cert-manager's cainjector owns the caBundle. */
export const CERT_MANAGER_INJECT_CA_FROM = 'cert-manager.io/inject-ca-from';

export type CaBundleResult = 'updated' | 'unchanged' | 'cert-manager';

/**
 * Writes `caPem` (base64) into clientConfig.caBundle of every webhook in our
 * MutatingWebhookConfiguration, unless cert-manager is configured to inject it.
 * Read-modify-replace with the resourceVersion, retried on conflict.
 */
export async function injectCaBundle(
  api: AdmissionregistrationV1Api,
  configurationName: string,
  caPem: string,
  attempts = 5,
): Promise<CaBundleResult> {
  const caBundle = Buffer.from(caPem).toString('base64');
  for (let attempt = 1; ; attempt++) {
    const config = await api.readMutatingWebhookConfiguration({ name: configurationName });
    if (config.metadata?.annotations?.[CERT_MANAGER_INJECT_CA_FROM]) return 'cert-manager';
    const updated = withCaBundle(config, caBundle);
    if (!updated) return 'unchanged';
    try {
      await api.replaceMutatingWebhookConfiguration({ name: configurationName, body: updated });
      return 'updated';
    } catch (err) {
      if (attempt >= attempts || !isConflict(err)) throw err;
    }
  }
}

/** The configuration with every webhook's caBundle set, or undefined when nothing changes. */
export function withCaBundle(config: V1MutatingWebhookConfiguration, caBundle: string): V1MutatingWebhookConfiguration | undefined {
  const webhooks = config.webhooks ?? [];
  if (webhooks.every((w) => w.clientConfig.caBundle === caBundle)) return undefined;
  return {
    ...config,
    webhooks: webhooks.map((w) => ({ ...w, clientConfig: { ...w.clientConfig, caBundle } })),
  };
}

function isConflict(err: unknown): boolean {
  return (err as { code?: number })?.code === 409;
}
