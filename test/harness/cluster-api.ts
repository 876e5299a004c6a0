/**
 * The real Cluster API core manager (sigs.k8s.io/cluster-api/core, built by
 * build-cluster-api.sh) against the test control plane: started by
 * `ControlPlane.startClusterApi()` or `startControlPlane({ clusterApi: true })`.
 *
 * What it takes to run it outside a management cluster's Deployment:
 *  - every CRD of the core module (installed by the caller; a watch on a missing kind
 *    would stop the manager), and the kwok provider's CRDs (crds/kwok-provider.yaml);
 *  - a serving certificate for its webhook server, issued by the control plane's CA
 *    (certs/pki.ts, node-forge), for 127.0.0.1;
 *  - its Mutating/ValidatingWebhookConfigurations and the CRDs' conversion webhook,
 *    rewritten from `service: webhook-service` to `url: https://127.0.0.1:<port>/...`
 *    with that CA as caBundle (there is no Service network in the test control plane);
 *  - flags: --kubeconfig (admin), leader election off, health and diagnostics on
 *    loopback ports, the MachinePool gate on (beta, on by default in v1.14: said
 *    explicitly so a default change cannot silently drop MachinePool tests),
 *    ClusterTopology and RuntimeSDK off (no ClusterClass in these tests).
 */
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { KubeConfig, V1CustomResourceDefinition } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { type CertificateAuthority, issueCertificate } from '../../certs/pki.js';
import type { ClusterApiAssets } from './assets.js';
import { readCrds } from './crds.js';
import { KubeRequestError, kubeRequest } from './kube-request.js';

export interface ClusterApiOptions {
  /** Only reconcile objects in this namespace (the manager's --namespace). */
  readonly namespace?: string;
  /** Feature gates on top of the defaults below, e.g. { MachineTaintPropagation: true }. */
  readonly featureGates?: Readonly<Record<string, boolean>>;
  /** Extra manager flags. */
  readonly args?: readonly string[];
}

export const CLUSTER_API_FEATURE_GATES: Readonly<Record<string, boolean>> = {
  MachinePool: true,
  ClusterTopology: false,
  RuntimeSDK: false,
};

/** Manager flags for the given ports and cert dir. */
export function managerArgs(kubeconfigPath: string, ports: { webhook: number; health: number; diagnostics: number }, certDir: string, opts: ClusterApiOptions): string[] {
  const gates = { ...CLUSTER_API_FEATURE_GATES, ...opts.featureGates };
  return [
    `--kubeconfig=${kubeconfigPath}`,
    '--leader-elect=false',
    `--webhook-port=${ports.webhook}`,
    `--webhook-cert-dir=${certDir}`,
    `--health-addr=127.0.0.1:${ports.health}`,
    `--diagnostics-address=127.0.0.1:${ports.diagnostics}`,
    '--insecure-diagnostics=true',
    `--feature-gates=${Object.entries(gates).map(([k, v]) => `${k}=${v}`).join(',')}`,
    ...(opts.namespace ? [`--namespace=${opts.namespace}`] : []),
    ...(opts.args ?? []),
  ];
}

/** Writes tls.crt / tls.key for the webhook server (loopback SANs) into `dir`. */
export function writeWebhookCert(ca: CertificateAuthority, dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const pair = issueCertificate(ca, {
    commonName: 'capi-webhook-service',
    dnsNames: ['localhost', 'capi-webhook-service.capi-system.svc'],
    ipAddresses: ['127.0.0.1', '::1'],
    usages: ['server'],
  });
  writeFileSync(join(dir, 'tls.crt'), pair.certPem, { mode: 0o600 });
  writeFileSync(join(dir, 'tls.key'), pair.keyPem, { mode: 0o600 });
}

interface WebhookClientConfig {
  url?: string;
  caBundle?: string;
  service?: { name: string; namespace: string; path?: string; port?: number };
}
interface WebhookConfiguration {
  apiVersion: string;
  kind: string;
  metadata: { name: string };
  webhooks: Array<{ name: string; clientConfig: WebhookClientConfig; namespaceSelector?: unknown }>;
}

/**
 * The module's webhook configurations with each service reference replaced by a
 * loopback URL on `port`, names prefixed `capi-`, and (with `namespace`) scoped to
 * that namespace like the manager itself.
 */
export function loopbackWebhookConfigurations(manifests: string, port: number, caPem: string, namespace?: string): WebhookConfiguration[] {
  const caBundle = Buffer.from(caPem).toString('base64');
  return parseAllDocuments(manifests)
    .map((d) => d.toJS() as WebhookConfiguration | null)
    .filter((o): o is WebhookConfiguration => o?.kind === 'MutatingWebhookConfiguration' || o?.kind === 'ValidatingWebhookConfiguration')
    .map((o) => ({
      ...o,
      metadata: { name: `capi-${o.metadata.name}` },
      webhooks: o.webhooks.map((w) => {
        const path = w.clientConfig.service?.path;
        if (!path) throw new Error(`CAPI webhook ${w.name} has no service path`);
        return {
          ...w,
          clientConfig: { url: `https://127.0.0.1:${port}${path}`, caBundle },
          ...(namespace ? { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': namespace } } } : {}),
        };
      }),
    }));
}

async function createOrReplace(kc: KubeConfig, collection: string, obj: { metadata: { name: string } }): Promise<void> {
  try {
    await kubeRequest(kc, 'POST', collection, obj);
  } catch (err) {
    if (!(err instanceof KubeRequestError) || err.code !== 409) throw err;
    const existing = await kubeRequest<{ metadata: { resourceVersion: string } }>(kc, 'GET', `${collection}/${obj.metadata.name}`);
    await kubeRequest(kc, 'PUT', `${collection}/${obj.metadata.name}`, { ...obj, metadata: { ...obj.metadata, resourceVersion: existing.metadata.resourceVersion } });
  }
}

/**
 * Points the apiserver at the manager's webhook server: admission webhooks, and the
 * conversion webhook of every CRD of the module that converts by webhook.
 */
export async function wireWebhooks(kc: KubeConfig, assets: ClusterApiAssets, port: number, caPem: string, namespace?: string): Promise<void> {
  const caBundle = Buffer.from(caPem).toString('base64');
  // The module's kustomization patches every one of its CRDs to convert through the
  // manager (core/config/crd/patches/webhook_in_*.yaml); the bases alone say None,
  // which would serve v1beta1 as v1beta2 objects relabelled.
  for (const { crd } of readCrds([assets.crdDir])) {
    await kubeRequest<V1CustomResourceDefinition>(kc, 'PATCH', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata!.name!}`, {
      spec: {
        conversion: {
          strategy: 'Webhook',
          webhook: { conversionReviewVersions: ['v1'], clientConfig: { url: `https://127.0.0.1:${port}/convert`, caBundle } },
        },
      },
    });
  }
  for (const cfg of loopbackWebhookConfigurations(readFileSync(assets.webhooks, 'utf8'), port, caPem, namespace)) {
    const plural = cfg.kind === 'MutatingWebhookConfiguration' ? 'mutatingwebhookconfigurations' : 'validatingwebhookconfigurations';
    await createOrReplace(kc, `/apis/admissionregistration.k8s.io/v1/${plural}`, cfg);
  }
}
