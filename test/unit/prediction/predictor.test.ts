import type { V1Pod } from '@kubernetes/client-node';
import { expect } from 'chai';
import type { CronJobSignal, WorkloadSignal } from '../../../src/prediction/signals.js';
import { type PredictionInput, evaluatePrediction } from '../../../src/prediction/predictor.js';
import { type PredictionPool, PREDICTED_POD_PRIORITY } from '../../../src/prediction/virtual-pods.js';
import { type PredictionState, emptyPredictionState } from '../../../src/prediction/state.js';
import { toSchedulingPod } from '../../../src/scheduling/pod-demand.js';

const T0 = Date.UTC(2024, 0, 1);
const MIN = 60_000;

const pod = (cpu: string, name = 'web-abc-1'): V1Pod => ({
  apiVersion: 'v1', kind: 'Pod',
  metadata: { name, namespace: 'default', labels: { app: 'web', 'pod-template-hash': 'abc' }, ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-abc', uid: 'u', controller: true }] },
  spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'i', resources: { requests: { cpu, memory: '1Gi' } } }] },
});

const pool = (settings: Partial<PredictionPool['settings']> = {}): PredictionPool => ({
  name: 'default',
  settings: { enabled: true, quantile: 0.9, ...settings },
  groups: [{ id: 'MachineDeployment/default/small', allocatable: { cpu: 2000, memory: 8 * 2 ** 30, pods: 110 }, pricePerHour: 0.1, labels: {}, taints: [] }],
});

/** Runs passes every 15 s with count(t) pods of 500m; returns the last output. */
function run(count: (minute: number) => number, minutes: number, extra: Partial<PredictionInput> = {}, state: PredictionState = emptyPredictionState()) {
  const template = toSchedulingPod(pod('500m'));
  let s = state;
  let out;
  for (let t = T0; t <= T0 + minutes * MIN; t += 15_000) {
    const w: WorkloadSignal = { key: 'Deployment/default/web', count: count((t - T0) / MIN), template, optOut: false };
    out = evaluatePrediction(s, { now: t, workloads: [w], pools: [pool()], defaultBootHorizonMs: 2 * MIN, ...extra });
    s = out.state;
  }
  return out!;
}

describe('prediction/predictor', () => {
  it('holds predicted pods of the workload shape, at the lowest priority, for a real rise', () => {
    const out = run((m) => 20 + Math.floor(4 * m), 60);
    const d = out.decisions.find((x) => x.key === 'Deployment/default/web')!;
    expect(d.reason).to.equal('predicted');
    expect(out.pods.length).to.equal(d.pods);
    expect(out.pods.length).to.be.greaterThan(8); // ~4/min over a 3-minute horizon plus margin
    for (const p of out.pods) {
      expect(p.predicted).to.equal(true);
      // Demand on its way, not spare: the Disruptor's delay after add guards what is added for it.
      expect(p.predictedDemand).to.equal(true);
      expect(p.priority).to.equal(PREDICTED_POD_PRIORITY);
      expect(p.requests.cpu).to.equal(500);
      expect(p.nodeName).to.equal(undefined);
    }
    expect(new Set(out.pods.map((p) => p.key)).size).to.equal(out.pods.length);
  });

  it('holds nothing for a flat workload', () => {
    const out = run(() => 100, 60);
    expect(out.pods).to.have.length(0);
  });

  it('respects maxPredictedNodes and maxExtraCostPerHour', () => {
    const rise = (m: number) => 20 + Math.floor(10 * m);
    const capped = run(rise, 60, { pools: [pool({ maxPredictedNodes: 2 })] });
    // 500m pods on 2-CPU nodes: a quarter node each, so two nodes hold at most 8.
    expect(capped.pods.length).to.equal(8);
    expect(capped.decisions[0]!.reason).to.equal('capped');
    const cost = run(rise, 60, { pools: [pool({ maxExtraCostPerHour: 0.1 })] });
    expect(cost.pods.length).to.equal(4);
  });

  it('does nothing when the pool is not enabled or the workload opted out', () => {
    expect(run((m) => 20 + 4 * m, 60, { pools: [pool({ enabled: false })] }).pods).to.have.length(0);
    const template = toSchedulingPod(pod('500m'));
    let s = emptyPredictionState();
    let pods = 0;
    for (let t = T0; t <= T0 + 60 * MIN; t += 15_000) {
      const out = evaluatePrediction(s, { now: t, workloads: [{ key: 'Deployment/default/web', count: 20 + Math.floor(4 * (t - T0) / MIN), template, optOut: true }], pools: [pool()] });
      s = out.state;
      pods = out.pods.length;
    }
    expect(pods).to.equal(0);
  });

  it('acts on a rise its daily profile foresees at once, without the sustain a trend needs', () => {
    // Flat at 10 except a daily step to 40 at 09:00 for two hours: after two days the profile knows it.
    const template = toSchedulingPod(pod('500m'));
    const count = (t: number) => {
      const h = ((t - T0) % (24 * 60 * MIN)) / (60 * MIN);
      return h >= 9 && h < 11 ? 40 : 10;
    };
    let s = emptyPredictionState();
    let first: { at: number; reason: string; pods: number } | undefined;
    const end = T0 + 2 * 24 * 60 * MIN + 9 * 60 * MIN;
    for (let t = T0; t < end && !first; t += 15_000) {
      const w: WorkloadSignal = { key: 'Deployment/default/web', count: count(t), template, optOut: false };
      const out = evaluatePrediction(s, { now: t, workloads: [w], pools: [pool()], defaultBootHorizonMs: 3 * MIN });
      s = out.state;
      const d = out.decisions[0]!;
      // One node-equivalent (4 pods of 500m on a 2-cpu node): below it a pool holds spare only.
      if (t > T0 + 2 * 24 * 60 * MIN && d.forecast.method === 'daily' && d.forecast.significant && d.excess >= 4) first = { at: t, reason: d.reason, pods: d.pods };
    }
    expect(first, 'the daily profile foresees the day-three rise before 09:00').to.not.equal(undefined);
    expect(first!.reason).to.equal('predicted');
    expect(first!.pods).to.be.greaterThan(0);
    expect(first!.at).to.be.below(end);
  });

  it('does not act on a real rise smaller than one node-equivalent in all (hysteresis)', () => {
    // 20 -> 22 pods of 500m over ten minutes: a real rise, but with its forecast excess under one 2-CPU node.
    // Spare off, to see the rise logic alone (spare holds a jitter margin on any workload).
    let held = 0;
    for (const minutes of [40, 45, 48, 52, 60]) held += run((m) => (m < 30 ? 20 : m < 40 ? 20 + Math.floor((m - 30) / 5) : 22), minutes, { spare: false }).pods.length;
    expect(held).to.equal(0);
    // With spare on, what is held is spare, never a rise acted on.
    const withSpare = run((m) => (m < 30 ? 20 : m < 40 ? 20 + Math.floor((m - 30) / 5) : 22), 60);
    expect(withSpare.decisions.map((d) => d.reason)).to.not.include('predicted');
    // The same rise ten times larger is acted on.
    expect(run((m) => (m < 30 ? 20 : 20 + Math.floor(4 * (m - 30))), 50).pods.length).to.be.greaterThan(0);
  });

  it('never calls jitter around a flat level a rise; holds a spare for it that is bounded and steady', () => {
    const flat = (spare: boolean, settings: Partial<PredictionPool['settings']> = {}) => {
      let seed = 12345;
      const jitter = () => {
        seed = (seed * 1103515245 + 12345) % 2 ** 31;
        return Math.round((seed / 2 ** 31 - 0.5) * 30);
      };
      const template = toSchedulingPod(pod('500m'));
      let s = emptyPredictionState();
      const held: number[] = [];
      const kept: number[] = [];
      const reasons = new Set<string>();
      let demandPods = 0;
      for (let t = T0; t <= T0 + 240 * MIN; t += 15_000) {
        const out = evaluatePrediction(s, { now: t, workloads: [{ key: 'Deployment/default/web', count: 300 + jitter(), template, optOut: false }], pools: [pool(settings)], spare });
        s = out.state;
        if (t >= T0 + 60 * MIN) {
          held.push(out.pods.length);
          kept.push(out.keepPods.length);
        }
        for (const d of out.decisions) reasons.add(d.reason);
        demandPods += [...out.pods, ...out.keepPods].filter((p) => p.predictedDemand).length;
      }
      return { held, kept, reasons, demandPods };
    };
    const off = flat(false);
    expect(off.held.every((n) => n === 0)).to.equal(true);
    expect(off.reasons.has('predicted')).to.equal(false);
    const on = flat(true, { maxSparePercent: 10 });
    expect(on.reasons.has('predicted')).to.equal(false);
    // Spare, not demand: what is added for it does not hold consolidation back (the Disruptor's delay after add).
    expect(on.held.some((n) => n > 0)).to.equal(true);
    expect(on.demandPods).to.equal(0);
    // Jitter of +-15 around 300: spare above the recent level costs at most 10% of ~315 pods; a
    // dip (at most 30 below the recent peak) comes back and is held on top, uncharged.
    const mean = on.held.reduce((a, n) => a + n, 0) / on.held.length;
    expect(mean).to.be.greaterThan(0).and.at.most(32);
    expect(Math.max(...on.held)).to.be.at.most(32 + 30);
    // The Disruptor keeps at least what the Provisioner holds, so it never removes what is about to be re-added.
    on.held.forEach((n, i) => expect(on.kept[i]).to.be.at.least(n));
    // Capacity held (pods now + spare) moves far less than the jitter: the target is held, the level stable.
    const tight = flat(true, { maxSparePercent: 1 });
    expect(Math.max(...tight.held)).to.be.at.most(Math.max(...on.held));
  });

  it('judges a dip against the forecast, not one sample: heavy jitter keeps capacity for its level; a real fall does not', () => {
    // A flat 200 with jitter of +-30 (the held-out "heavy jitter" kind), then one sample 45 below.
    let seed = 777;
    const jitter = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return Math.round((seed / 2 ** 31 - 0.5) * 60);
    };
    const template = toSchedulingPod(pod('500m'));
    const step = (s: PredictionState, t: number, count: number) =>
      evaluatePrediction(s, { now: t, workloads: [{ key: 'Deployment/default/web', count, template, optOut: false }], pools: [pool({ maxSparePercent: 10 })] });
    let s = emptyPredictionState();
    let t = T0;
    for (; t < T0 + 120 * MIN; t += 15_000) s = step(s, t, 200 + jitter()).state;
    // One sample far below: the Disruptor still keeps room for the level the forecast sees
    // (the old rule judged the dip against the sample itself, charged the rest to the spare
    // budget and kept room for 203 pods of the ~220 the workload runs at).
    const dip = step(s, t, 155);
    expect(dip.decisions[0]!.forecast.point).to.be.greaterThan(200);
    expect(dip.keepPods.length + 155).to.be.at.least(dip.decisions[0]!.forecast.point);
    // A real fall to 100 that lasts: once the forecast has followed it, only spare is kept.
    let fell = s;
    let out = dip;
    for (let u = t; u < t + 40 * MIN; u += 15_000) {
      out = step(fell, u, 100);
      fell = out.state;
    }
    expect(out.keepPods.length).to.be.at.most(Math.ceil(0.1 * 100 * 1.5));
  });

  it('prepares for a CronJob run one horizon ahead and stops once the run started', () => {
    const template = toSchedulingPod(pod('1'));
    const cron = (nextRun: number): CronJobSignal => ({ key: 'CronJob/default/batch', nextRun, pods: 30, template, optOut: false });
    const next = T0 + 30 * MIN;
    const at = (now: number, c: CronJobSignal) => evaluatePrediction(emptyPredictionState(), { now, workloads: [], cronJobs: [c], pools: [pool()], defaultBootHorizonMs: 2 * MIN });
    expect(at(next - 10 * MIN, cron(next)).pods).to.have.length(0);
    expect(at(next - 2 * MIN, cron(next)).pods).to.have.length(30);
    // After it fired, the next run is the following one.
    expect(at(next + MIN, cron(next + 60 * MIN)).pods).to.have.length(0);
  });

  it('learns the boot horizon from observed boots and looks that far ahead', () => {
    const boots = [1, 2, 3, 4].map((i) => ({ groupId: 'MachineDeployment/default/small', machine: `m${i}`, ms: 10 * MIN }));
    const template = toSchedulingPod(pod('1'));
    const c: CronJobSignal = { key: 'CronJob/default/batch', nextRun: T0 + 9 * MIN, pods: 4, template, optOut: false };
    const without = evaluatePrediction(emptyPredictionState(), { now: T0, workloads: [], cronJobs: [c], pools: [pool()], defaultBootHorizonMs: 2 * MIN });
    expect(without.pods).to.have.length(0);
    const withBoots = evaluatePrediction(emptyPredictionState(), { now: T0, workloads: [], cronJobs: [c], pools: [pool()], defaultBootHorizonMs: 2 * MIN, boots });
    expect(withBoots.decisions[0]!.horizonMs).to.equal(11 * MIN);
    expect(withBoots.pods).to.have.length(4);
  });
});
