import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { headroomMetrics } from './metric-inventory.js';

const DOC = readFileSync(new URL('../../../docs/metrics.md', import.meta.url), 'utf8');

interface DocRow {
  name: string;
  type: string;
  labels: string[];
  meaning: string;
}

/** Table rows naming a metric: | `headroom_x` | type | `a`, `b` | meaning | ... */
function documented(text: string): DocRow[] {
  const rows: DocRow[] = [];
  for (const line of text.split('\n')) {
    const m = /^\| `(headroom_[a-z0-9_]+)` \| ([a-z]+) \|([^|]*)\|([^|]*)\|/.exec(line);
    if (!m) continue;
    const labels = [...m[3]!.matchAll(/`([a-z_]+)`/g)].map((l) => l[1]!);
    rows.push({ name: m[1]!, type: m[2]!, labels, meaning: m[4]!.trim() });
  }
  return rows;
}

describe('docs/metrics.md', () => {
  const metrics = headroomMetrics();
  const rows = documented(DOC);

  it('lists every metric in the registry, and no metric the registry does not have', () => {
    expect(metrics.length).to.be.greaterThan(30);
    const inRegistry = metrics.map((m) => m.name);
    const inDoc = rows.map((r) => r.name).sort();
    expect(inRegistry.filter((n) => !inDoc.includes(n)), 'undocumented metrics').to.deep.equal([]);
    expect(inDoc.filter((n) => !inRegistry.includes(n)), 'documented metrics that do not exist').to.deep.equal([]);
    expect(new Set(inDoc).size, 'a metric listed twice').to.equal(inDoc.length);
  });

  it('gives each metric its type and exact labels, and says what it means', () => {
    const byName = new Map(rows.map((r) => [r.name, r]));
    for (const m of metrics) {
      const row = byName.get(m.name)!;
      expect(row.type, m.name).to.equal(m.type);
      expect(row.labels, m.name).to.deep.equal(m.labels);
      expect(row.meaning.length, `${m.name} has no meaning`).to.be.greaterThan(10);
    }
  });

  it('counters end in _total and nothing else does; histograms and gauges hold no ever-growing count', () => {
    for (const m of metrics) {
      if (m.type === 'counter') expect(m.name, m.name).to.match(/_total$/);
      else expect(m.name, m.name).not.to.match(/_total$/);
    }
  });

  it('no metric is labelled by pod or node name (bounded cardinality)', () => {
    for (const m of metrics) expect(m.labels, m.name).not.to.include.members(['pod', 'node', 'node_name', 'pod_name', 'uid']);
  });

  it('the parser sees a row that is missing, wrong or extra (so the comparison can fail)', () => {
    const first = rows[0]!;
    const without = DOC.split('\n').filter((l) => !l.startsWith(`| \`${first.name}\``)).join('\n');
    expect(documented(without).map((r) => r.name)).not.to.include(first.name);
    const extra = documented(`${DOC}\n| \`headroom_gone_total\` | counter |  | A metric that was removed. |\n`);
    expect(extra.map((r) => r.name)).to.include('headroom_gone_total');
    expect(documented('| `headroom_x_total` | counter | `a`, `b` | meaning here |')[0]).to.deep.equal({
      name: 'headroom_x_total', type: 'counter', labels: ['a', 'b'], meaning: 'meaning here',
    });
  });
});
