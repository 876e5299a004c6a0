import { expect } from 'chai';
import { readdirSync } from 'node:fs';
import { commands, TOP_LEVEL_FLAGS } from '../../../src/cli/main.js';
import { readRepoFile } from './doc-tables.js';

/**
 * Every `--flag` the docs name is a flag of some `headroom` command (issue 25, item 7:
 * metrics.md named a `--metrics-port` that never existed). Left out: migration.md,
 * whose tables name the other autoscalers' flags; comparison.md, which names Cluster
 * Autoscaler's flags and bench:peers'; scale.md and development.md, which name the
 * benchmark and check scripts' flags; and the few flags of other programs below.
 */
const OTHER_PROGRAMS = new Set([
  '--set', // helm
  '--config', // kube-scheduler
  '--admission-control-config-file', // kube-apiserver
  '--flag', // reference.md's placeholder for "any flag"
]);
const SKIPPED = new Set(['migration.md', 'comparison.md', 'scale.md', 'development.md']);

describe('docs: every --flag named is a real flag', () => {
  it('of some headroom command, in docs/*.md, README.md and the chart README', async () => {
    const flags = new Set<string>(TOP_LEVEL_FLAGS);
    for (const name of Object.keys(commands)) for (const o of Object.keys((await commands[name]!()).options)) flags.add(`--${o}`);
    const files = [...readdirSync(new URL('../../../docs/', import.meta.url)).filter((f) => f.endsWith('.md') && !SKIPPED.has(f)).map((f) => `docs/${f}`), 'README.md', 'charts/headroom/README.md'];
    const unknown: string[] = [];
    for (const file of files) {
      for (const m of readRepoFile(file).matchAll(/`(--[a-z][a-z0-9-]*)/g)) {
        if (!flags.has(m[1]!) && !OTHER_PROGRAMS.has(m[1]!)) unknown.push(`${file}: ${m[1]}`);
      }
    }
    expect(unknown).to.deep.equal([]);
  });
});
