import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { KubeConfig, V1CustomResourceDefinition } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { resolveAssets } from './assets.js';
import { KubeRequestError, kubeRequest } from './kube-request.js';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/**
 * Cluster API v1.14.0 CRDs, the first of: $HEADROOM_CAPI_CRDS;
 * `<repo>/../shared/crds/cluster-api-v1.14.0` (shared/ is a sibling of the checkout);
 * `<assets>/cluster-api-v1.14.0-crds`, which build-binaries.sh extracts from the
 * sigs.k8s.io/cluster-api module (the same files).
 */
export function capiCrdDir(assetsDir?: string): string {
  if (process.env.HEADROOM_CAPI_CRDS) {
    if (!existsSync(process.env.HEADROOM_CAPI_CRDS)) throw new Error(`HEADROOM_CAPI_CRDS=${process.env.HEADROOM_CAPI_CRDS} does not exist`);
    return process.env.HEADROOM_CAPI_CRDS;
  }
  const shared = join(repoRoot, '..', 'shared', 'crds', 'cluster-api-v1.14.0');
  if (existsSync(shared)) return shared;
  const candidates = [shared, join(assetsDir ?? resolveAssets().dir, 'cluster-api-v1.14.0-crds')];
  const dir = candidates.find((d) => existsSync(d));
  if (!dir) throw new Error(`Cluster API CRDs not found in ${candidates.join(' or ')} (set HEADROOM_CAPI_CRDS)`);
  return dir;
}

/** The kwok provider's CRDs (kwok-provider.ts), installed with the real Cluster API manager. */
export function kwokProviderCrdDir(): string {
  return join(repoRoot, 'test', 'harness', 'crds');
}

/**
 * SIG Autoscaling's CapacityBuffer and ProvisioningRequest CRDs, unchanged from
 * Cluster Autoscaler 1.36.1: `<repo>/../shared/crds/autoscaling.x-k8s.io-cluster-autoscaler-1.36.1`
 * where present, else the chart's copy of the same files (a unit test keeps them identical).
 */
export const AUTOSCALING_CRDS = 'autoscaling.x-k8s.io-cluster-autoscaler-1.36.1';
export function autoscalingCrdDir(): string {
  const shared = join(repoRoot, '..', 'shared', 'crds', AUTOSCALING_CRDS);
  return existsSync(shared) ? shared : join(repoRoot, 'charts', 'headroom', 'files', 'autoscaling.x-k8s.io');
}

/** Our own CRDs (chart), the upstream autoscaling.x-k8s.io ones, and test-only ones, whichever exist. */
export function ownCrdDirs(): string[] {
  return [join(repoRoot, 'charts', 'headroom', 'crds'), autoscalingCrdDir(), join(repoRoot, 'test', 'fixtures', 'crds')].filter((d) => existsSync(d));
}

export interface LoadedCrd {
  readonly crd: V1CustomResourceDefinition;
  /** The file it came from, for error messages. */
  readonly source: string;
}

/** Every CustomResourceDefinition in the *.yaml / *.yml / *.json files of `dirs`. */
export function readCrds(dirs: readonly string[]): LoadedCrd[] {
  const out: LoadedCrd[] = [];
  for (const dir of dirs) {
    for (const f of readdirSync(dir).filter((n) => /\.(ya?ml|json)$/.test(n)).sort()) {
      for (const doc of parseAllDocuments(readFileSync(join(dir, f), 'utf8'))) {
        if (doc.errors.length > 0) throw new Error(`${join(dir, f)}: ${doc.errors[0]!.message}`);
        const obj = doc.toJS() as V1CustomResourceDefinition | null;
        if (obj?.kind === 'CustomResourceDefinition') out.push({ crd: obj, source: join(dir, f) });
      }
    }
  }
  return out;
}

/** Creates (or replaces) the CRDs and waits until every one is Established. */
export async function installCrds(kc: KubeConfig, crds: readonly LoadedCrd[], timeoutMs = 60_000): Promise<void> {
  const base = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
  const postBy = Date.now() + timeoutMs;
  await Promise.all(
    crds.map(async ({ crd, source }) => {
      const name = crd.metadata!.name!;
      try {
        // A loaded apiserver may answer ready before its apiextensions routes are served (404, or 503): retried.
        for (;;) {
          try {
            await kubeRequest(kc, 'POST', base, crd);
            break;
          } catch (err) {
            if (!(err instanceof KubeRequestError) || (err.code !== 404 && err.code !== 503) || Date.now() > postBy) throw err;
            await new Promise((r) => setTimeout(r, 250));
          }
        }
      } catch (err) {
        if (!(err instanceof KubeRequestError)) throw err;
        if (err.code !== 409) throw new Error(`kube-apiserver rejected CRD ${name} from ${source}: ${err.message}`);
        const existing = await kubeRequest<V1CustomResourceDefinition>(kc, 'GET', `${base}/${name}`);
        const body = { ...crd, metadata: { ...crd.metadata, resourceVersion: existing.metadata!.resourceVersion } };
        await kubeRequest(kc, 'PUT', `${base}/${name}`, body);
      }
    }),
  );
  const deadline = Date.now() + timeoutMs;
  const waitUntil = async (what: string, ok: () => Promise<boolean>): Promise<void> => {
    for (;;) {
      if (await ok().catch(() => false)) return;
      if (Date.now() > deadline) throw new Error(`${what} after ${timeoutMs}ms`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  for (const { crd } of crds) {
    const name = crd.metadata!.name!;
    await waitUntil(`CRD ${name} not Established`, async () => {
      const got = await kubeRequest<V1CustomResourceDefinition>(kc, 'GET', `${base}/${name}`);
      return got.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True') ?? false;
    });
    // Established can come before the resource's storage is ready: on a loaded machine
    // the first requests then get 429 "storage is (re)initializing". Wait for a LIST.
    for (const v of crd.spec.versions.filter((x) => x.served)) {
      await waitUntil(`${crd.spec.names.plural}.${crd.spec.group}/${v.name} not listable`, async () => {
        await kubeRequest(kc, 'GET', `/apis/${crd.spec.group}/${v.name}/${crd.spec.names.plural}?limit=1`);
        return true;
      });
    }
  }
}
