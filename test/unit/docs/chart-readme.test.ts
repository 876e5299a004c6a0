import { expect } from 'chai';
import { chartValues, TABLE_BEGIN, TABLE_END, valuesTable } from '../../../scripts/chart-values.js';
import { readRepoFile, tableRows } from './doc-tables.js';

const REGENERATE = 'regenerate it with `node --import tsx scripts/chart-values.ts --write`';

describe('charts/headroom/README.md values table', () => {
  const values = chartValues(readRepoFile('charts/headroom/values.yaml'));
  const readme = readRepoFile('charts/headroom/README.md');
  const table = readme.slice(readme.indexOf(TABLE_BEGIN) + TABLE_BEGIN.length, readme.indexOf(TABLE_END));
  const rows = tableRows(table.split('\n')).map((cells) => ({ key: (cells[0] ?? '').replace(/`/g, ''), default: (cells[1] ?? '').replace(/^`|`$/g, '').replace(/\\\|/g, '|') }));

  it('lists every key of values.yaml and no other', () => {
    expect(readme.indexOf(TABLE_BEGIN), 'table markers').to.be.greaterThan(0);
    expect(rows.map((r) => r.key), REGENERATE).to.deep.equal(values.map((v) => v.key));
  });

  it('gives each key its default from values.yaml', () => {
    const documented = Object.fromEntries(rows.map((r) => [r.key, r.default]));
    for (const v of values) expect(documented[v.key], `${v.key}: ${REGENERATE}`).to.equal(v.default);
  });

  it('describes every value as values.yaml does', () => {
    expect(table.trim(), REGENERATE).to.equal(valuesTable(values));
    const undescribed = values.filter((v) => v.description === '').map((v) => v.key);
    expect(undescribed, 'values without a `# --` comment in values.yaml (nor on their parent map)').to.deep.equal([]);
  });
});

describe('scripts/chart-values.ts', () => {
  it('walks maps with keys, keeps lists and empty maps as leaves, and reads `# --` comments', () => {
    const values = chartValues([
      '# The chart.',
      '',
      '# -- Log level.',
      'logLevel: info',
      '# -- The pod securityContext.',
      'podSecurityContext:',
      '  runAsUser: 65532',
      '  # -- Overridden here.',
      '  fsGroup: 1',
      'tolerations: []',
      'labels: {}',
      'image:',
      '  # ordinary comment, not a description',
      '  tag: ""',
    ].join('\n'));
    expect(values).to.deep.equal([
      { key: 'logLevel', default: '"info"', description: 'Log level.' },
      { key: 'podSecurityContext.runAsUser', default: '65532', description: 'The pod securityContext.' },
      { key: 'podSecurityContext.fsGroup', default: '1', description: 'Overridden here.' },
      { key: 'tolerations', default: '[]', description: '' },
      { key: 'labels', default: '{}', description: '' },
      { key: 'image.tag', default: '""', description: '' },
    ]);
  });

  it('escapes pipes and angle brackets in cells', () => {
    expect(valuesTable([{ key: 'a', default: '"x|y"', description: '<release>-headroom' }]).split('\n')[2])
      .to.equal('| `a` | `"x\\|y"` | &lt;release>-headroom |');
  });
});
