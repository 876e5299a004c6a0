import { expect } from 'chai';
import type { NodePoolDisruption } from '../../../src/api/nodepool.js';
import { DEFAULT_DISRUPTION } from '../../../src/disruption/allowance.js';
import { ConsolidationDue } from '../../../src/disruption/consolidation-due.js';
import type { PassSettings } from '../../../src/disruption/settings.js';

const underutilized: NodePoolDisruption = { ...DEFAULT_DISRUPTION, consolidationPolicy: 'WhenEmptyOrUnderutilized', consolidateAfterMs: 30_000 };
const settings = (d: NodePoolDisruption = underutilized): PassSettings => ({ settingsOf: () => d, all: [d] });

describe('ConsolidationDue', () => {
  it('is off when the option is off, or when no setting consolidates underutilised nodes', () => {
    expect(new ConsolidationDue(false).due(settings(), [], new Map(), 0)).to.equal(false);
    expect(new ConsolidationDue(true).due(settings({ ...DEFAULT_DISRUPTION, consolidationPolicy: 'WhenEmpty' }), [], new Map(), 0)).to.equal(false);
    expect(new ConsolidationDue(true).due(settings({ ...underutilized, consolidateAfterMs: null }), [], new Map(), 0)).to.equal(false);
  });

  it('after finding nothing, looks again only when the nodes change or a node\'s pods have been unchanged for consolidateAfter since', () => {
    const due = new ConsolidationDue(true);
    const nodes: unknown[] = [];
    expect(due.due(settings(), nodes, new Map(), 0)).to.equal(true);
    due.foundNothing(nodes, 100_000);
    // n-1's pods unchanged since 80 s: 30 s later (110 s) is after the last look (100 s).
    const settled = new Map([['n-0', 0], ['n-1', 80_000]]);
    expect(due.due(settings(), nodes, settled, 105_000)).to.equal(false);
    expect(due.due(settings(), nodes, settled, 110_000)).to.equal(true);
    due.foundNothing(nodes, 110_000);
    expect(due.due(settings(), nodes, settled, 500_000)).to.equal(false);
    // A new nodes list (the state changed): due at once.
    expect(due.due(settings(), [], settled, 500_000)).to.equal(true);
  });
});
