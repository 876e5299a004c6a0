import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { expect } from 'chai';
import { CAPACITY_ANNOTATION_PREFIX } from '../../../src/api/capacity-annotations.js';
import { firstColumnCodes, REPO, readRepoFile, section, sorted } from './doc-tables.js';

/**
 * The annotation, label and taint keys Headroom uses are string constants in src/. Every
 * such key under the domains Headroom and its neighbours (Cluster API, Cluster
 * Autoscaler, Karpenter, SIG Autoscaling, cert-manager) use must be in one of the tables
 * of docs/reference.md's "Annotations, labels and taints", and every key there must
 * still be in src/. A new key anywhere in src/ fails this test until it is documented.
 */
const DOMAINS = /^(?:[a-z0-9-]+\.)*(?:headroom\.dev|x-k8s\.io|karpenter\.sh|cluster-autoscaler\.kubernetes\.io|cert-manager\.io|controller\.kubernetes\.io)$/;
/** A quoted key `domain/name` (API group/version strings like `cluster.x-k8s.io/v1beta2` excluded below). */
const QUOTED_KEY = /(['"`])((?:[a-z0-9](?:[-a-z0-9]*[a-z0-9])?\.)+[a-z]{2,}\/[A-Za-z0-9][-A-Za-z0-9_.]*)\1/g;
/** Keys built from the capacity annotation prefix, e.g. `${CAPACITY_ANNOTATION_PREFIX}cpu`. */
const PREFIXED_KEY = /`\$\{CAPACITY_ANNOTATION_PREFIX\}([A-Za-z0-9][-A-Za-z0-9_.]*)`/g;
const API_VERSION = /\/v\d+(?:(?:alpha|beta)\d+)?$/;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    return statSync(p).isDirectory() ? sourceFiles(p) : p.endsWith('.ts') ? [p] : [];
  });
}

export function keysInSource(text: string): string[] {
  const keys: string[] = [];
  for (const m of text.matchAll(QUOTED_KEY)) {
    const key = m[2]!;
    if (DOMAINS.test(key.split('/')[0]!) && !API_VERSION.test(key)) keys.push(key);
  }
  for (const m of text.matchAll(PREFIXED_KEY)) keys.push(`${CAPACITY_ANNOTATION_PREFIX}${m[1]!}`);
  return keys;
}

describe('docs/reference.md: annotations, labels and taints', () => {
  const files = [...sourceFiles(join(REPO, 'src')), ...sourceFiles(join(REPO, 'workers'))];
  const inSource = new Map<string, string>();
  for (const f of files) for (const k of keysInSource(readFileSync(f, 'utf8'))) inSource.set(k, relative(REPO, f));
  const documented = sorted(firstColumnCodes(section(readRepoFile('docs/reference.md'), 'Annotations, labels and taints')));

  it('finds the keys it should in src/ (the scan works)', () => {
    for (const k of ['cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size', 'capacity.cluster-autoscaler.kubernetes.io/memory', 'headroom.dev/price', 'karpenter.sh/do-not-disrupt']) {
      expect(inSource.has(k), k).to.equal(true);
    }
  });

  it('documents every key src/ uses', () => {
    const missing = [...inSource].filter(([k]) => !documented.includes(k)).map(([k, f]) => `${k} (${f})`);
    expect(missing, 'keys in src/ missing from docs/reference.md').to.deep.equal([]);
  });

  it('documents no key src/ does not use', () => {
    expect(documented.filter((k) => !inSource.has(k)), 'keys in docs/reference.md that src/ no longer has').to.deep.equal([]);
  });

  it('recognises quoted keys and prefix-built capacity keys, not API versions or other domains', () => {
    const text = [
      "const A = 'headroom.dev/new-thing';",
      'const B = `${CAPACITY_ANNOTATION_PREFIX}maxPods`;',
      "const C = 'cluster.x-k8s.io/v1beta2';",
      "const D = 'kubernetes.io/hostname';",
      "const E = \"cluster-autoscaler.kubernetes.io/safe-to-evict\";",
    ].join('\n');
    expect(keysInSource(text)).to.deep.equal(['headroom.dev/new-thing', 'cluster-autoscaler.kubernetes.io/safe-to-evict', 'capacity.cluster-autoscaler.kubernetes.io/maxPods']);
  });
});
