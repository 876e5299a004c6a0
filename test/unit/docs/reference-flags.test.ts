import { expect } from 'chai';
import { commands } from '../../../src/cli/main.js';
import { firstColumnCodes, readRepoFile, section, sorted } from './doc-tables.js';

/**
 * docs/reference.md lists every flag of every `headroom` command: the flags it names in
 * the command's table are exactly the command's parseArgs options, short forms included,
 * and the command's own --help text names each of them too.
 */
describe('docs/reference.md: command-line flags', () => {
  const reference = readRepoFile('docs/reference.md');

  for (const name of Object.keys(commands)) {
    it(`lists exactly the flags of headroom ${name}`, async () => {
      const cmd = await commands[name]!();
      const codes = firstColumnCodes(section(reference, `\`headroom ${name}\``));
      const long = codes.filter((c) => c.startsWith('--'));
      const short = codes.filter((c) => /^-[A-Za-z]$/.test(c));
      expect(sorted(long), `docs/reference.md, "headroom ${name}" table`).to.deep.equal(sorted(Object.keys(cmd.options).map((o) => `--${o}`)));
      const shorts = Object.values(cmd.options).flatMap((o) => (o.short ? [`-${o.short}`] : []));
      expect(sorted(short), `short flags of headroom ${name}`).to.deep.equal(sorted(shorts));
    });

    it(`headroom ${name} --help names each of its flags`, async () => {
      const cmd = await commands[name]!();
      const missing = Object.keys(cmd.options).filter((o) => !new RegExp(`--${o}(?![-\\w])`).test(cmd.usage));
      expect(missing, `flags missing from headroom ${name} --help`).to.deep.equal([]);
    });
  }

  it('has a section for every command and none for a command that does not exist', () => {
    const documented = [...reference.matchAll(/^### `headroom ([a-z-]+)`$/gm)].map((m) => m[1]!);
    expect(sorted(documented)).to.deep.equal(sorted(Object.keys(commands)));
  });
});
