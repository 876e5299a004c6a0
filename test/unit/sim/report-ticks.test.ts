import { expect } from 'chai';
import { timeTicks } from '../../../src/sim/report-html.js';

describe('simulation report: time-axis ticks', () => {
  const labels = (hours: number) => timeTicks(hours * 3600).map((t) => t.label).join(' ');

  it('are whole labels at whole steps (a 6 h trace: every hour, not "0h 2h 3h 5h 6h")', () => {
    expect(labels(6)).to.equal('0h 1h 2h 3h 4h 5h 6h');
    expect(labels(3)).to.equal('0h 30m 1h 1h30m 2h 2h30m 3h');
    expect(labels(8)).to.equal('0h 2h 4h 6h 8h');
    expect(labels(24)).to.equal('0h 6h 12h 18h 24h');
    expect(labels(72)).to.equal('0d 1d 2d 3d');
    expect(labels(21 * 24)).to.equal('0d 7d 14d 21d');
  });

  it('never put more than seven on an axis, and each sits at its own time', () => {
    for (const seconds of [90, 3600, 5000, 7 * 3600, 50 * 3600, 10 * 86_400, 31 * 86_400]) {
      const t = timeTicks(seconds);
      expect(t.length, String(seconds)).to.be.within(2, 7);
      expect(t[0]!.at).to.equal(0);
      for (let i = 1; i < t.length; i++) expect(t[i]!.at - t[i - 1]!.at).to.equal(t[1]!.at);
      expect(t[t.length - 1]!.at).to.be.at.most(seconds);
    }
  });
});
