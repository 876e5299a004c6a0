import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { expect } from 'chai';
import { REPO, readRepoFile } from './doc-tables.js';

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
export function slug(heading: string): string {
  return heading.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
}

function anchors(markdown: string): Set<string> {
  const out = new Set<string>();
  let inFence = false;
  for (const line of markdown.split('\n')) {
    if (line.startsWith('```')) inFence = !inFence;
    const m = !inFence && /^#{1,6} (.*)$/.exec(line);
    if (m) out.add(slug(m[1]!));
  }
  return out;
}

/** The relative links of a markdown file (outside code fences): [text](target). */
function links(markdown: string): string[] {
  const out: string[] = [];
  let inFence = false;
  for (const line of markdown.split('\n')) {
    if (line.startsWith('```')) inFence = !inFence;
    if (inFence) continue;
    for (const m of line.matchAll(/\]\(([^)\s]+)\)/g)) {
      const target = m[1]!;
      if (!/^[a-z]+:/.test(target)) out.push(target);
    }
  }
  return out;
}

/** The docs set, the README and the chart README: every relative link and anchor resolves. */
describe('docs: links', () => {
  const docs = readdirSync(join(REPO, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`);
  const files = ['README.md', 'charts/headroom/README.md', ...docs];

  for (const file of files) {
    it(`${file}: every relative link resolves`, () => {
      const broken: string[] = [];
      for (const link of links(readRepoFile(file))) {
        const [path, anchor] = link.split('#') as [string, string | undefined];
        const target = path === '' ? join(REPO, file) : normalize(join(REPO, dirname(file), path));
        if (!existsSync(target)) {
          broken.push(`${link} (no ${relative(REPO, target)})`);
          continue;
        }
        if (anchor && target.endsWith('.md') && statSync(target).isFile() && !anchors(readRepoFile(relative(REPO, target))).has(anchor)) {
          broken.push(`${link} (no heading #${anchor})`);
        }
      }
      expect(broken).to.deep.equal([]);
    });
  }

  it('makes anchors the way GitHub does', () => {
    expect(slug('NodePool (`headroom.dev/v1alpha1`)')).to.equal('nodepool-headroomdevv1alpha1');
    expect(slug('Try it locally: `headroom dev-cluster --demo`')).to.equal('try-it-locally-headroom-dev-cluster---demo');
  });
});
