import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const BINARIES = ['kube-apiserver', 'kube-scheduler', 'kube-controller-manager', 'etcd', 'kwok', 'helm'] as const;
export type Binary = (typeof BINARIES)[number];

export interface Assets {
  readonly dir: string;
  path(binary: Binary): string;
  /** kwok's node/pod "fast" stages, for `kwok --config`. */
  readonly kwokStages: string;
}

let cached: Assets | undefined;

/**
 * The directory of real binaries: $HEADROOM_TEST_ASSETS if set, else the cache of
 * build-binaries.sh. A cold build takes minutes, longer than any test hook should
 * block, so it is not started from here: run `bash test/harness/build-binaries.sh`
 * (or `.ci/run`) once first.
 */
export function resolveAssets(): Assets {
  if (cached) return cached;
  let dir = process.env.HEADROOM_TEST_ASSETS;
  if (!dir) {
    const script = join(dirname(fileURLToPath(import.meta.url)), 'build-binaries.sh');
    try {
      const out = execFileSync('bash', [script, '--check'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
      dir = out.trim().split('\n').at(-1) ?? '';
    } catch {
      throw new Error('the real Kubernetes test binaries are not built yet: run `bash test/harness/build-binaries.sh` '
        + '(minutes on a cold cache) or `bash .ci/run`, or set HEADROOM_TEST_ASSETS to a directory of prebuilt binaries');
    }
  }
  for (const b of BINARIES) {
    if (!existsSync(join(dir, b))) throw new Error(`test binaries: ${join(dir, b)} is missing (HEADROOM_TEST_ASSETS=${dir})`);
  }
  const kwokStages = join(dir, 'kwok-stages.yaml');
  if (!existsSync(kwokStages)) throw new Error(`test binaries: ${kwokStages} is missing; rerun test/harness/build-binaries.sh`);
  const d = dir;
  cached = { dir: d, path: (b) => join(d, b), kwokStages };
  return cached;
}

/** The real Cluster API core manager and the files it comes with (build-cluster-api.sh). */
export interface ClusterApiAssets {
  readonly dir: string;
  /** sigs.k8s.io/cluster-api/core built as a binary. */
  readonly manager: string;
  /** Every CRD of the core module (core/config/crd/bases). */
  readonly crdDir: string;
  /** Its Mutating/ValidatingWebhookConfigurations (core/config/webhook/manifests.yaml). */
  readonly webhooks: string;
}

let cachedClusterApi: ClusterApiAssets | undefined;

/**
 * $HEADROOM_CAPI_ASSETS if set, else the cache of build-cluster-api.sh (which
 * build-binaries.sh runs). Like resolveAssets, never builds: a cold build takes minutes.
 */
export function resolveClusterApiAssets(): ClusterApiAssets {
  if (cachedClusterApi) return cachedClusterApi;
  const script = join(dirname(fileURLToPath(import.meta.url)), 'build-cluster-api.sh');
  let dir: string;
  try {
    const out = execFileSync('bash', [script, '--check'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    dir = out.trim().split('\n').at(-1) ?? '';
  } catch {
    throw new Error('the Cluster API manager is not built yet: run `bash test/harness/build-binaries.sh` '
      + '(minutes on a cold cache) or `bash .ci/run`, or set HEADROOM_CAPI_ASSETS to a directory with cluster-api-manager, crds/ and webhooks.yaml');
  }
  cachedClusterApi = { dir, manager: join(dir, 'cluster-api-manager'), crdDir: join(dir, 'crds'), webhooks: join(dir, 'webhooks.yaml') };
  return cachedClusterApi;
}

let cachedKubectl: string | undefined;

/**
 * kubectl (the control plane's Kubernetes release), for `headroom dev-cluster --demo`
 * and its test: $HEADROOM_KUBECTL if set, else a kubectl in $HEADROOM_TEST_ASSETS, else
 * the cache of build-kubectl.sh (which build-binaries.sh runs). Never builds.
 */
export function resolveKubectl(): string {
  if (cachedKubectl) return cachedKubectl;
  const fromEnv = process.env.HEADROOM_KUBECTL;
  if (fromEnv) {
    if (!existsSync(fromEnv)) throw new Error(`HEADROOM_KUBECTL=${fromEnv} does not exist`);
    return (cachedKubectl = fromEnv);
  }
  const inAssets = process.env.HEADROOM_TEST_ASSETS ? join(process.env.HEADROOM_TEST_ASSETS, 'kubectl') : undefined;
  if (inAssets && existsSync(inAssets)) return (cachedKubectl = inAssets);
  const script = join(dirname(fileURLToPath(import.meta.url)), 'build-kubectl.sh');
  try {
    const out = execFileSync('bash', [script, '--check'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    cachedKubectl = out.trim().split('\n').at(-1) ?? '';
  } catch {
    throw new Error('kubectl is not built yet: run `bash test/harness/build-binaries.sh` (or build-kubectl.sh; minutes on a cold cache) '
      + 'or `bash .ci/run`, or set HEADROOM_KUBECTL to a kubectl binary');
  }
  return cachedKubectl;
}
