import { expect } from 'chai';
import { parse } from 'yaml';
import { parseNodePool } from '../../../src/api/nodepool.js';
import { planFromInputs } from '../../../src/cli/plan.js';
import { nodePoolStatuses } from '../../../src/controller/nodepool-status.js';
import { loadObjects } from '../../../src/cluster/load-objects.js';
import { invalidBudgetSchedules } from '../../../src/disruption/budget-schedule.js';
import { parseCron } from '../../../src/prediction/cron-schedule.js';
import { readRepoFile } from '../docs/doc-tables.js';

const POOL = (schedule: string) => `apiVersion: headroom.dev/v1alpha1
kind: NodePool
metadata: {name: p, generation: 1}
spec:
  nodeGroupSelector: {}
  disruption: {budgets: [{nodes: "10%"}, {nodes: "0", schedule: ${JSON.stringify(schedule)}, duration: 8h}]}
`;

describe('a budget schedule that is not cron is never silently "always in force" (issue 25, item 4)', () => {
  it('names the budget and why', () => {
    const pool = parseNodePool(parse(POOL('every day')));
    expect(invalidBudgetSchedules(pool.disruption.budgets)).to.deep.equal([
      'spec.disruption.budgets[1].schedule "every day": not a cron schedule (expected 5 fields, got 2); the budget is treated as always in force',
    ]);
    expect(invalidBudgetSchedules(parseNodePool(parse(POOL('0 9 * * 1-5'))).disruption.budgets)).to.deep.equal([]);
  });

  it('the NodePool gets Ready=False, reason InvalidBudgetSchedule', () => {
    const s = nodePoolStatuses(loadObjects(POOL('every day')), '2026-12-02T00:00:00Z').get('p')!;
    expect(s.conditions[0]).to.include({ type: 'Ready', status: 'False', reason: 'InvalidBudgetSchedule' });
    expect(s.conditions[0]!.message).to.contain('"every day"');
  });

  it('plan fails with one line naming the pool and the budget', async () => {
    let err: Error | undefined;
    await planFromInputs([{ source: 'p.yaml', text: POOL('every day') }]).catch((e: Error) => { err = e; });
    expect(err?.message).to.equal('NodePool p: spec.disruption.budgets[1].schedule "every day": not a cron schedule (expected 5 fields, got 2)');
  });

  it("the CRD's pattern refuses what the parser refuses for want of fields, and accepts the usual forms", () => {
    const crd = parse(readRepoFile('charts/headroom/crds/headroom.dev_nodepools.yaml')) as { spec: { versions: Array<{ schema: { openAPIV3Schema: Record<string, never> } }> } };
    const spec = crd.spec.versions[0]!.schema.openAPIV3Schema as unknown as { properties: { spec: { properties: { disruption: { properties: { budgets: { items: { properties: { schedule: { pattern: string } } } } } } } } } };
    const pattern = new RegExp(spec.properties.spec.properties.disruption.properties.budgets.items.properties.schedule.pattern);
    for (const ok of ['@daily', '0 9 * * 1-5', '*/15 0-6 1,15 * *']) {
      expect(pattern.test(ok), ok).to.equal(true);
      expect(typeof parseCron(ok), ok).to.equal('object');
    }
    for (const bad of ['every day', '0 9 * *', 'daily', '0 9 * * MON']) expect(pattern.test(bad), bad).to.equal(false);
  });
});
