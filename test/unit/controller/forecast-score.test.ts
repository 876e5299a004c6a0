import { expect } from 'chai';
import { ForecastScore, pinballLoss } from '../../../src/controller/forecast-score.js';

describe('forecast score (pinball loss per workload)', () => {
  it('pinball loss weighs under-forecasts by q and over-forecasts by 1 - q', () => {
    expect(pinballLoss(10, 6, 0.9)).to.be.closeTo(3.6, 1e-9);
    expect(pinballLoss(6, 10, 0.9)).to.be.closeTo(0.4, 1e-9);
    expect(pinballLoss(5, 5, 0.9)).to.equal(0);
  });

  it('judges each forecast at the end of its horizon against the peak seen during it', () => {
    const s = new ForecastScore();
    s.forecast('w', 0, 60_000, 8, 0.9);
    s.actual('w', 10_000, 5);
    s.actual('w', 30_000, 12); // the peak
    expect(s.loss('w')).to.equal(undefined);
    s.actual('w', 60_000, 4);
    expect(s.loss('w')).to.be.closeTo(0.9 * (12 - 8), 1e-9);
    // A second forecast that was right on: the mean halves.
    s.forecast('w', 60_000, 60_000, 4, 0.9);
    s.actual('w', 120_000, 4);
    expect(s.loss('w')).to.be.closeTo((3.6 + 0) / 2, 1e-9);
  });

  it('stays bounded: open forecasts and scores per workload, and only retained workloads', () => {
    const s = new ForecastScore(4, 3);
    for (let i = 0; i < 10; i++) s.forecast('w', i, 1, 1, 0.5);
    s.actual('w', 100, 1);
    expect(s.loss('w')).to.equal(0);
    s.forecast('x', 0, 1, 1, 0.5);
    s.actual('x', 1, 3);
    s.retain(new Set(['w']));
    expect(s.loss('x')).to.equal(undefined);
    expect(s.loss('w')).to.equal(0);
  });
});
