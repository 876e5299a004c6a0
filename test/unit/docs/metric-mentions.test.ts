import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { REPO, readRepoFile } from './doc-tables.js';

/**
 * docs/metrics.md is checked against the metrics registry by its own test; every other
 * page that names a `headroom_*` metric must name one metrics.md lists, so a renamed
 * metric cannot linger in the concepts, troubleshooting or README text.
 */
describe('docs: metric names outside docs/metrics.md', () => {
  const metricsDoc = readRepoFile('docs/metrics.md');
  const known = new Set([...metricsDoc.matchAll(/`(headroom_[a-z0-9_]+)`/g)].map((m) => m[1]!));
  const pages = ['README.md', 'charts/headroom/README.md',
    ...readdirSync(join(REPO, 'docs')).filter((f) => f.endsWith('.md') && f !== 'metrics.md').map((f) => `docs/${f}`)];

  it('metrics.md lists metrics', () => {
    expect(known.size).to.be.greaterThan(10);
  });

  for (const page of pages) {
    it(`${page} names only metrics docs/metrics.md lists`, () => {
      // A histogram's series (_bucket, _count, _sum) count as the histogram.
      const isKnown = (n: string) => known.has(n) || known.has(n.replace(/_(bucket|count|sum)$/, ''));
      const named = [...readRepoFile(page).matchAll(/\bheadroom_[a-z0-9_]+/g)].map((m) => m[0]);
      expect([...new Set(named)].filter((n) => !isKnown(n)), page).to.deep.equal([]);
    });
  }
});
