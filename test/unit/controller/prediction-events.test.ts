import { expect } from 'chai';
import { PredictionEvents } from '../../../src/controller/prediction-events.js';
import type { PredictionDecision } from '../../../src/prediction/predictor.js';

function decision(key: string, pods: number): PredictionDecision {
  return {
    key, pool: 'batch', horizonMs: 240_000, excess: pods, pods, nodes: pods * 0.5, costPerHour: pods * 0.05,
    reason: pods > 0 ? 'predicted' : 'not-rising',
    forecast: { current: 2, point: 2 + pods, upper: 2 + pods, method: 'schedule', significant: pods > 0, noise: 0 },
  };
}

describe('prediction events (added / released, on the workload)', () => {
  it('emits Added when a workload starts holding predicted pods, nothing while it keeps holding, Released when it stops', () => {
    const ev = new PredictionEvents();
    const first = ev.next([decision('CronJob/ns/report', 3), decision('Deployment/ns/web', 0)]);
    expect(first).to.have.length(1);
    expect(first[0]!.target).to.deep.equal({ apiVersion: 'batch/v1', kind: 'CronJob', namespace: 'ns', name: 'report' });
    expect(first[0]!.spec.reason).to.equal('PredictedCapacityAdded');
    expect(first[0]!.spec.note).to.match(/3 predicted pods .*NodePool batch: schedule forecast of 5 pods within 4m, 2 now/);
    expect(ev.next([decision('CronJob/ns/report', 4)])).to.deep.equal([]);
    const released = ev.next([decision('CronJob/ns/report', 0)]);
    expect(released.map((e) => [e.target.kind, e.spec.reason])).to.deep.equal([['CronJob', 'PredictedCapacityReleased']]);
    expect(ev.next([])).to.deep.equal([]);
  });
});
