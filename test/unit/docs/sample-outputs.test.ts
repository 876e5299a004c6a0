import { expect } from 'chai';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { planFromInputs, planText, readInputs } from '../../../src/cli/plan.js';
import { readRepoFile, REPO } from './doc-tables.js';

/**
 * Sample `headroom plan` output in the docs is what `plan` prints (issue 25, item 7:
 * concepts.md showed a plan that was not the fixture's). A ```sh block whose one command is
 * `headroom plan -f FILE...` (or `node bin/headroom.js plan ...`), followed at once by a
 * ```text block, is run, and the block must be its output.
 */
interface Sample { file: string; files: string[]; shown: string }

function samples(): Sample[] {
  const out: Sample[] = [];
  const docs = [...readdirSync(join(REPO, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`), 'README.md'];
  for (const file of docs) {
    const re = /```sh\n(?:npm run build && )?(?:node bin\/headroom\.js|headroom) plan((?: -f \S+)+)\n```\n\n```text\n([\s\S]*?)\n```/g;
    for (const m of readRepoFile(file).matchAll(re)) {
      out.push({ file, files: m[1]!.trim().split(/\s*-f\s+/).filter(Boolean), shown: m[2]! });
    }
  }
  return out;
}

describe('docs: sample plan output is what plan prints', () => {
  it('concepts.md has one, at least', () => {
    expect(samples().map((s) => s.file)).to.include('docs/concepts.md');
  });

  for (const s of samples()) {
    it(`${s.file}: plan -f ${s.files.join(' -f ')}`, async () => {
      const result = await planFromInputs(readInputs(s.files.map((f) => join(REPO, f))));
      expect(s.shown).to.equal(planText(result));
    });
  }
});
