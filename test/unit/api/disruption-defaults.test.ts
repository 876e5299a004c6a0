import { expect } from 'chai';
import { parse } from 'yaml';
import {
  DEFAULT_BUDGETS, DEFAULT_CONSOLIDATE_AFTER_MS, DEFAULT_CONSOLIDATION_POLICY, DEFAULT_EXPIRE_AFTER_MS, DISRUPTION_DEFAULTS_AS_WRITTEN,
} from '../../../src/api/disruption-defaults.js';
import { parseNodePool } from '../../../src/api/nodepool.js';
import { DEFAULT_DISRUPTION } from '../../../src/disruption/allowance.js';
import { readRepoFile, section, tableRows } from '../docs/doc-tables.js';

interface Prop { default?: unknown; properties?: Record<string, Prop> }

/** The `disruption` schema of the NodePool CRD's stored version. */
function crdDisruption(): Record<string, Prop> {
  const crd = parse(readRepoFile('charts/headroom/crds/headroom.dev_nodepools.yaml')) as {
    spec: { versions: Array<{ storage: boolean; schema: { openAPIV3Schema: Prop } }> };
  };
  const v = crd.spec.versions.find((x) => x.storage)!;
  return v.schema.openAPIV3Schema.properties!.spec!.properties!.disruption!.properties!;
}

describe('one set of disruption defaults (DECISIONS.md item 1)', () => {
  it('are WhenEmptyOrUnderutilized, 30s, Never, 10% for disruptions that move pods and 10 empty nodes at once', () => {
    expect(DISRUPTION_DEFAULTS_AS_WRITTEN).to.deep.equal({
      consolidationPolicy: 'WhenEmptyOrUnderutilized', consolidateAfter: '30s', expireAfter: 'Never',
      budgets: [{ nodes: '10%', reasons: ['Underutilized', 'Drifted', 'Expired'] }, { nodes: '10', reasons: ['Empty'] }],
    });
  });

  it('the CRD defaults each field to the module value', () => {
    const d = crdDisruption();
    expect(d.consolidationPolicy!.default).to.equal(DISRUPTION_DEFAULTS_AS_WRITTEN.consolidationPolicy);
    expect(d.consolidateAfter!.default).to.equal(DISRUPTION_DEFAULTS_AS_WRITTEN.consolidateAfter);
    expect(d.expireAfter!.default).to.equal(DISRUPTION_DEFAULTS_AS_WRITTEN.expireAfter);
    expect(d.budgets!.default).to.deep.equal(DISRUPTION_DEFAULTS_AS_WRITTEN.budgets);
  });

  it('a NodePool with no disruption field and a group in no NodePool get the same settings', () => {
    const pool = parseNodePool({ apiVersion: 'headroom.dev/v1alpha1', kind: 'NodePool', metadata: { name: 'p' }, spec: { nodeGroupSelector: {} } });
    expect(pool.disruption).to.deep.equal(DEFAULT_DISRUPTION);
    expect(DEFAULT_DISRUPTION).to.deep.equal({
      consolidationPolicy: DEFAULT_CONSOLIDATION_POLICY, consolidateAfterMs: DEFAULT_CONSOLIDATE_AFTER_MS, expireAfterMs: DEFAULT_EXPIRE_AFTER_MS, budgets: DEFAULT_BUDGETS,
    });
  });

  it('docs/reference.md states the same defaults for NodePool fields and for groups in no pool', () => {
    const reference = readRepoFile('docs/reference.md');
    const rows = new Map(tableRows(section(reference, 'NodePool (`headroom.dev/v1alpha1`)')).map((c) => [c[0]!, c[2]!]));
    expect(rows.get('`spec.disruption.consolidationPolicy`')).to.equal(`\`${DISRUPTION_DEFAULTS_AS_WRITTEN.consolidationPolicy}\``);
    expect(rows.get('`spec.disruption.consolidateAfter`')).to.equal(`\`${DISRUPTION_DEFAULTS_AS_WRITTEN.consolidateAfter}\``);
    expect(rows.get('`spec.disruption.expireAfter`')).to.equal(`\`${DISRUPTION_DEFAULTS_AS_WRITTEN.expireAfter}\``);
    const written = `\`[${DEFAULT_BUDGETS.map((b) => `{nodes: ${/%$/.test(b.nodes) ? b.nodes : `"${b.nodes}"`}, reasons: [${b.reasons.join(', ')}]}`).join(', ')}]\``;
    expect(rows.get('`spec.disruption.budgets`')).to.equal(written);
    const defaults = section(reference, 'Disruption defaults').join('\n');
    for (const v of ['WhenEmptyOrUnderutilized', '`30s`', '`Never`', written]) expect(defaults).to.contain(v);
  });
});
