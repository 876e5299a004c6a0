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

  it('looks again when a predicted pod it kept room for is gone, not when one is added (issue 24: a forecast\'s spare that falls frees room)', () => {
    const due = new ConsolidationDue(true);
    const nodes: unknown[] = [];
    const pods = (...names: string[]) => names.map((n) => ({ key: `default/${n}` }));
    due.foundNothing(nodes, 100_000, pods('predicted-deployment-web-0', 'predicted-deployment-web-1'));
    // The same kept pods (a new list), or more: nothing the last look did not see could be freed.
    expect(due.due(settings(), nodes, new Map(), 200_000, pods('predicted-deployment-web-0', 'predicted-deployment-web-1'))).to.equal(false);
    expect(due.due(settings(), nodes, new Map(), 200_000, pods('predicted-deployment-web-0', 'predicted-deployment-web-1', 'predicted-deployment-web-2'))).to.equal(false);
    // One fewer, or another workload's in its place: the room it kept may go.
    expect(due.due(settings(), nodes, new Map(), 200_000, pods('predicted-deployment-web-0'))).to.equal(true);
    expect(due.due(settings(), nodes, new Map(), 200_000, pods('predicted-deployment-web-0', 'predicted-deployment-api-0'))).to.equal(true);
    expect(due.due(settings(), nodes, new Map(), 200_000)).to.equal(true);
    // Nothing kept when it found nothing: no predicted pod can be gone.
    due.foundNothing(nodes, 300_000);
    expect(due.due(settings(), nodes, new Map(), 400_000)).to.equal(false);
  });
});
