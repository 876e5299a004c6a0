import { expect } from 'chai';
import { main } from '../../../src/cli/main.js';

/** `headroom dev-cluster` refuses bad invocations with one line and exit 2, before starting anything. */
describe('headroom dev-cluster (invocation)', () => {
  async function run(...args: string[]): Promise<{ code: number; err: string }> {
    const errors: string[] = [];
    const original = console.error;
    console.error = (...a: unknown[]) => { errors.push(a.join(' ')); };
    try {
      return { code: await main(['dev-cluster', ...args]), err: errors.join('\n') };
    } finally {
      console.error = original;
    }
  }

  it('refuses --demo without the real Cluster API', async () => {
    const r = await run('--demo', '--machines', 'fixture');
    expect(r.code).to.equal(2);
    expect(r.err).to.equal('headroom: dev-cluster: --demo needs --machines capi (the real Cluster API manager)');
  });

  it('refuses a --consolidate-after that is not a duration, or Never', async () => {
    for (const bad of ['5', 'soon', 'Never', '']) {
      const r = await run('--demo', '--consolidate-after', bad);
      expect(r.code, bad).to.equal(2);
      expect(r.err.split('\n'), bad).to.have.length(1);
      expect(r.err).to.include('--consolidate-after must be a Go duration');
    }
  });

  it('refuses --consolidate-after without --demo', async () => {
    const r = await run('--consolidate-after', '5s');
    expect(r.code).to.equal(2);
    expect(r.err).to.include('applies to --demo only');
  });
});
