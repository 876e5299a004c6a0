/**
 * Runs the real helm binary (from the test-binary cache, see test/harness/assets.ts)
 * on charts/headroom and parses what it renders. Shared by the helm*.test.ts files.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { resolveAssets } from '../harness/assets.js';

export const CHART_DIR = fileURLToPath(new URL('../../charts/headroom', import.meta.url));
/** helm built from source defaults --kube-version to v1.20; the chart needs >= 1.28. */
export const KUBE_VERSION = 'v1.36.0';

export interface HelmResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  [field: string]: unknown;
}

// helm keeps a cache and a repository config under $HOME; keep them out of it.
const helmHome = mkdtempSync(join(tmpdir(), 'headroom-helm-'));
process.once('exit', () => rmSync(helmHome, { recursive: true, force: true }));

export function helm(args: string[], opts: { kubeconfig?: string; timeoutMs?: number } = {}): Promise<HelmResult> {
  const env = {
    ...process.env,
    HELM_CACHE_HOME: join(helmHome, 'cache'),
    HELM_CONFIG_HOME: join(helmHome, 'config'),
    HELM_DATA_HOME: join(helmHome, 'data'),
    ...(opts.kubeconfig ? { KUBECONFIG: opts.kubeconfig } : {}),
  };
  return new Promise((resolve, reject) => {
    execFile(resolveAssets().path('helm'), args, { env, timeout: opts.timeoutMs ?? 120_000, maxBuffer: 64 << 20 }, (err, stdout, stderr) => {
      if (err && typeof err.code !== 'number') return reject(err);
      resolve({ code: err ? (err.code as number) : 0, stdout, stderr });
    });
  });
}

/** `--set` pairs as helm args. */
export function setArgs(values: Record<string, string | number | boolean>): string[] {
  return Object.entries(values).flatMap(([k, v]) => ['--set', `${k}=${v}`]);
}

export function parseManifests(text: string): K8sObject[] {
  return parseAllDocuments(text)
    .map((d) => {
      if (d.errors.length > 0) throw new Error(`rendered YAML does not parse: ${d.errors[0]!.message}`);
      return d.toJS() as K8sObject | null;
    })
    .filter((o): o is K8sObject => o !== null && typeof o === 'object');
}

/** `helm template` with the given values; throws with helm's stderr when it fails. */
export async function renderChart(namespace: string, values: Record<string, string | number | boolean> = {}, release = 'hr'): Promise<K8sObject[]> {
  const r = await helm(['template', release, CHART_DIR, '--namespace', namespace, '--kube-version', KUBE_VERSION, ...setArgs(values)]);
  if (r.code !== 0) throw new Error(`helm template failed: ${r.stderr.trim()}`);
  return parseManifests(r.stdout);
}

export function ofKind<T = K8sObject>(objects: K8sObject[], kind: string): (T & K8sObject)[] {
  return objects.filter((o) => o.kind === kind) as (T & K8sObject)[];
}

export function onlyOne<T = K8sObject>(objects: K8sObject[], kind: string): T & K8sObject {
  const found = ofKind<T>(objects, kind);
  if (found.length !== 1) throw new Error(`expected exactly one ${kind}, rendered ${found.length}`);
  return found[0]!;
}
