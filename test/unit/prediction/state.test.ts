import { expect } from 'chai';
import { methodPoints } from '../../../src/prediction/forecast.js';
import { DAY_MS, WEEK_MS, type WorkloadModel, observeCount } from '../../../src/prediction/model.js';
import {
  MAX_MODEL_BYTES, MAX_STATE_BYTES, MAX_WORKLOADS, PredictionStateError, boundState, emptyPredictionState,
  parsePredictionState, serializePredictionState,
} from '../../../src/prediction/state.js';

const T0 = Date.UTC(2024, 0, 1);

/** A model that has seen more than a week of awkward (non-integer-looking) counts: every array full. */
function saturated(): WorkloadModel {
  let m: WorkloadModel | undefined;
  for (let t = T0; t < T0 + WEEK_MS + DAY_MS; t += 60_000) {
    m = observeCount(m, t, 1000 + Math.round(999 * Math.sin(t / 7_777_777)), 4 * 60_000, methodPoints);
  }
  return m!;
}

describe('prediction/state', () => {
  const model = saturated();

  it('keeps a saturated workload model under 64 KB', () => {
    expect(Buffer.byteLength(JSON.stringify(model))).to.be.lessThan(MAX_MODEL_BYTES);
  });

  it('keeps MAX_WORKLOADS saturated models under 5 MB, and drops the stalest beyond that', () => {
    const state = emptyPredictionState();
    for (let i = 0; i < MAX_WORKLOADS + 5; i++) state.workloads[`Deployment/ns/w${i}`] = { ...model, lastAt: model.lastAt + i };
    const bounded = boundState(state);
    expect(Object.keys(bounded.workloads)).to.have.length(MAX_WORKLOADS);
    expect(bounded.workloads['Deployment/ns/w0']).to.equal(undefined);
    expect(Buffer.byteLength(serializePredictionState(bounded))).to.be.lessThan(MAX_STATE_BYTES);
  });

  it('round-trips through JSON and keeps the weekly profile', () => {
    const state = { ...emptyPredictionState(), workloads: { 'Deployment/ns/web': model } };
    const back = parsePredictionState(serializePredictionState(state));
    expect(back.workloads['Deployment/ns/web']!.weekly).to.deep.equal(model.weekly);
    expect(back.workloads['Deployment/ns/web']!.weekly.every((v) => v !== null)).to.equal(true);
  });

  it('rejects garbage, and drops a malformed model alone', () => {
    expect(() => parsePredictionState('nope')).to.throw(PredictionStateError);
    expect(() => parsePredictionState('{"version":2,"workloads":{}}')).to.throw(PredictionStateError);
    const text = JSON.stringify({ version: 1, workloads: { good: model, bad: { version: 1, last: 'x' } }, boot: {}, hysteresis: {} });
    expect(Object.keys(parsePredictionState(text).workloads)).to.deep.equal(['good']);
  });
});
