import { expect } from 'chai';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { readRepoFile, REPO, tableRows } from './doc-tables.js';

/** docs/adr/README.md lists every ADR, in number order, under its own title (issue 25, item 8). */
describe('docs/adr/README.md: the ADR index', () => {
  const files = readdirSync(join(REPO, 'docs', 'adr')).filter((f) => /^\d{4}-.*\.md$/.test(f)).sort();
  const rows = tableRows(readRepoFile('docs/adr/README.md').split('\n'));
  const linked = rows.map((r) => /^\[(\d{4})\]\(([^)]+)\)$/.exec(r[0]!));

  it('links every ADR file once, and nothing else, in number order', () => {
    expect(files.length).to.be.greaterThan(50);
    expect(linked.every((m) => m !== null)).to.equal(true);
    expect(linked.map((m) => m![2])).to.deep.equal(files);
    for (const m of linked) expect(m![2]!.startsWith(m![1]!)).to.equal(true);
  });

  it("gives each ADR the title of its first heading", () => {
    for (const [i, file] of files.entries()) {
      const heading = readRepoFile(`docs/adr/${file}`).split('\n')[0]!.replace(/^#\s*(ADR\s*)?0*\d+[.:]\s*/, '').trim();
      expect(rows[i]![1]!.replace(/\\\|/g, '|'), file).to.equal(heading);
    }
  });
});
