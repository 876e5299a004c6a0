import { expect } from 'chai';
import type { NodePoolDisruption } from '../../../src/api/nodepool.js';
import { DEFAULT_DISRUPTION } from '../../../src/disruption/allowance.js';
import { expiryConfigured, passSettings, shortestConsolidateAfter } from '../../../src/disruption/settings.js';
import { group } from '../packing/snapshot-builders.js';

describe('disruption settings of a pass', () => {
  const spot: NodePoolDisruption = { consolidationPolicy: 'WhenEmpty', consolidateAfterMs: 60_000, expireAfterMs: null, budgets: [{ nodes: '1' }] };
  const poolless: NodePoolDisruption = { ...DEFAULT_DISRUPTION, consolidateAfterMs: 5000 };

  it("a group gets its pool's settings as the snapshot resolved them, a group in no (or an unknown) pool the pool-less ones", () => {
    const s = passSettings({ disruption: { spot } }, poolless);
    expect(s.settingsOf(group('a', { nodePool: 'spot' }))).to.equal(spot);
    expect(s.settingsOf(group('b'))).to.equal(poolless);
    expect(s.settingsOf(group('c', { nodePool: 'gone' }))).to.equal(poolless);
    expect(shortestConsolidateAfter(s.all)).to.equal(5000);
    expect(expiryConfigured(s.all)).to.equal(false);
    expect(expiryConfigured(passSettings({ disruption: { spot: { ...spot, expireAfterMs: 1 } } }, poolless).all)).to.equal(true);
    expect(shortestConsolidateAfter([{ ...spot, consolidateAfterMs: null }])).to.equal(Infinity);
  });
});
