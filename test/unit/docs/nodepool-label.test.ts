import { expect } from 'chai';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { nodeSyncedLabels } from '../../../src/api/capi-node-labels.js';
import { NODEPOOL_LABEL } from '../../../src/api/nodepool.js';
import { readRepoFile, REPO } from './doc-tables.js';

/**
 * `headroom.dev/nodepool` is on standalone Machines only: CAPI does not copy it to their
 * Nodes (issue 25, item 7: migration.md said "and their Nodes", reference.md said not).
 * Every paragraph of the docs that puts the label and Nodes together must say "not".
 */
describe('docs: headroom.dev/nodepool is on Machines, not Nodes', () => {
  it('the code does not expect CAPI to copy it to the Node', () => {
    expect(nodeSyncedLabels({ [NODEPOOL_LABEL]: 'default' })).to.deep.equal({});
  });

  it('no doc says it is on Nodes', () => {
    const files = [...readdirSync(join(REPO, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`), 'README.md', 'charts/headroom/README.md'];
    const wrong: string[] = [];
    let mentions = 0;
    for (const file of files) {
      for (const para of readRepoFile(file).split(/\n\s*\n|\n(?=\|)/)) {
        if (!para.includes(`\`${NODEPOOL_LABEL}\``)) continue;
        mentions++;
        if (/\bNodes?\b/.test(para) && !/(?<!-)\bnot\b(?!-)/.test(para)) wrong.push(`${file}: ${para.slice(0, 120)}`);
      }
    }
    expect(mentions).to.be.greaterThan(1);
    expect(wrong).to.deep.equal([]);
  });
});
