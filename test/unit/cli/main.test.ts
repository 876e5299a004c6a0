import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { main } from '../../../src/cli/main.js';

/** Runs main() with console output captured. */
async function run(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const { log, error } = console;
  console.log = (...a: unknown[]) => void out.push(a.join(' '));
  console.error = (...a: unknown[]) => void err.push(a.join(' '));
  try {
    const code = await main(argv);
    return { code, out: out.join('\n'), err: err.join('\n') };
  } finally {
    console.log = log;
    console.error = error;
  }
}

describe('headroom main', () => {
  it('lists every command in --help and exits 0', async () => {
    const r = await run(['--help']);
    expect(r.code).to.equal(0);
    for (const name of ['plan', 'simulate', 'controller', 'serve', 'dev-cluster']) expect(r.out).to.match(new RegExp(`^  ${name} `, 'm'));
  });

  it('prints the version of package.json with --version and exits 0 (issue 25, item 8)', async () => {
    const { version } = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string };
    for (const argv of [['--version'], ['version']]) {
      const r = await run(argv);
      expect(r.code).to.equal(0);
      expect(r.out).to.equal(`headroom ${version}`);
    }
    expect((await run(['--help'])).out).to.contain('headroom --version');
  });

  it('exits 2 with one line for no command or an unknown one', async () => {
    expect((await run([])).code).to.equal(2);
    const r = await run(['frobnicate']);
    expect(r.code).to.equal(2);
    expect(r.err.split('\n')).to.have.length(1);
    expect(r.err).to.contain('unknown command "frobnicate"');
  });

  it('exits 2 for an unknown flag of a lazily loaded command', async () => {
    const r = await run(['plan', '--no-such-flag']);
    expect(r.code).to.equal(2);
    expect(r.err).to.match(/^headroom: plan: /);
  });

  it('prints a command\'s usage for --help', async () => {
    const r = await run(['plan', '--help']);
    expect(r.code).to.equal(0);
    expect(r.out).to.contain('-f');
  });

  it('exits 1 with one line naming the object and field on bad input', async () => {
    const r = await run(['plan', '-f', 'test/fixtures/bad/bad-quantity.yaml']);
    expect(r.code).to.equal(1);
    expect(r.err.split('\n')).to.have.length(1);
    expect(r.err).to.contain('12Qi');
  });
});
