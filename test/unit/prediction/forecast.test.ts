import { expect } from 'chai';
import { forecast, methodPoints, noiseBand, trendOf, trendSlope } from '../../../src/prediction/forecast.js';
import { DAY_MS, STEP_MS, type WorkloadModel, observeCount } from '../../../src/prediction/model.js';
import { Random } from '../../../src/sim/random.js';

const T0 = Date.UTC(2024, 0, 1);
const H = 4 * 60_000;

/** Feeds count(t) every 30 s from T0 for `minutes`. */
function feed(count: (t: number) => number, minutes: number, start = T0): WorkloadModel {
  let m: WorkloadModel | undefined;
  for (let t = start; t < start + minutes * STEP_MS; t += 30_000) m = observeCount(m, t, count(t - start), H, methodPoints);
  return m!;
}

describe('prediction/forecast', () => {
  it('follows a linear rise: the trend forecaster wins and forecasts ahead of it', () => {
    const m = feed((t) => 50 + (5 * t) / STEP_MS, 90); // 5 pods per minute
    expect(trendSlope(m)).to.be.closeTo(5, 0.5);
    const f = forecast(m, m.lastAt, H, 0.9);
    expect(f.method).to.equal('trend');
    expect(f.significant).to.equal(true);
    expect(f.point - f.current).to.be.closeTo(20, 3);
    expect(f.upper).to.be.at.least(f.point);
  });

  it('does not chase jitter: normal noise around a flat level is not a rise', () => {
    const rng = Random.stream(7, 'noise');
    const m = feed(() => Math.round(300 + rng.normal(0, 8)), 180);
    const f = forecast(m, m.lastAt, H, 0.9);
    expect(noiseBand(m)).to.be.greaterThan(5);
    expect(f.significant).to.equal(false);
  });

  it('finds a slow rise hidden in jitter on a longer window, and no trend in jitter alone', () => {
    const rng = Random.stream(3, 'slow');
    // 0.3 pods per minute under jitter of stddev 2 (every 30 s): invisible over 20 minutes, clear over 80.
    const rising = feed((t) => Math.round(100 + (0.3 * t) / STEP_MS + rng.normal(0, 2)), 90);
    expect(trendOf(rising)!.real).to.equal(true);
    expect(trendOf(rising)!.slope).to.be.closeTo(0.3, 0.25);
    let falsePositives = 0;
    for (let seed = 0; seed < 20; seed++) {
      const r = Random.stream(seed, 'flat');
      if (trendOf(feed(() => Math.round(100 + r.normal(0, 2)), 90))!.real) falsePositives++;
    }
    expect(falsePositives).to.be.at.most(1);
  });

  it('ignores a one-off step (flash crowd): no trend after it', () => {
    const m = feed((t) => (t < 60 * STEP_MS ? 100 : 900), 70);
    const slope = trendSlope(m)!;
    expect(Math.abs(slope)).to.be.lessThan(1);
    expect(forecast(m, m.lastAt, H, 0.9).significant).to.equal(false);
  });

  it('learns a daily shape once a day has been seen, and forecasts the morning rise from it', () => {
    // Flat at 100 except a daily step up to 400 at 09:00 for two hours: no trend precedes it.
    const shape = (t: number) => {
      const h = (t % DAY_MS) / 3_600_000;
      return h >= 9 && h < 11 ? 400 : 100;
    };
    const m = feed(shape, 2 * 24 * 60 + 8 * 60 + 57); // two days, then 08:57 on day three
    const f = forecast(m, m.lastAt, H, 0.9);
    expect(f.current).to.equal(100);
    expect(f.method).to.equal('daily');
    expect(f.point).to.be.greaterThan(200);
    expect(f.significant).to.equal(true);
  });

  it('holds a daily rise shorter than a profile slot in full once the window reaches its slot', () => {
    // Flat at 100 except 14:02-14:08 at 400 every day: one ten-minute slot (14:00-14:10) holds it,
    // and interpolating between slot centres spreads it over twenty minutes.
    const shape = (t: number) => {
      const min = (t % DAY_MS) / 60_000;
      return min >= 14 * 60 + 2 && min < 14 * 60 + 8 ? 400 : 100;
    };
    const before = feed(shape, 2 * 24 * 60 + 13 * 60 + 57); // two days, then 13:57 on day three
    const f = forecast(before, before.lastAt, H, 0.9);
    expect(f.current).to.equal(100);
    expect(f.method).to.equal('daily');
    expect(f.point).to.be.below(390); // the point (scored) is interpolated
    expect(f.upper).to.be.at.least(390); // what is held is the slot's rise
    expect(f.significant).to.equal(true);
    // Inside the slot, before the rise (a controller started at 14:01): still held.
    const inside = feed(shape, 2 * 24 * 60 + 14 * 60 + 1);
    expect(forecast(inside, inside.lastAt, H, 0.9).upper).to.be.at.least(390);
  });

  it('is deterministic and leaves the input model unchanged', () => {
    const m = feed((t) => 10 + t / STEP_MS, 40);
    const copy = JSON.stringify(m);
    const a = forecast(m, m.lastAt, H, 0.9);
    observeCount(m, m.lastAt + 5 * STEP_MS, 999, H, methodPoints);
    expect(JSON.stringify(m)).to.equal(copy);
    expect(forecast(m, m.lastAt, H, 0.9)).to.deep.equal(a);
  });
});
