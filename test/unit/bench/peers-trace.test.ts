import { expect } from 'chai';
import { realFigures, realFiguresFromRuns, harnessBootS, simulate, SIM_SETUPS } from '../../bench/peers-calibrate.js';
import type { RunMetrics } from '../../bench/peers-metrics.js';
import { SCENARIOS, groupPrice, type Scenario } from '../../bench/peers-scenarios.js';
import { groupShape, scenarioDurationS, scenarioTrace, SET_LABEL, ZONE_LABEL } from '../../bench/peers-trace.js';
import type { DeploymentWorkload } from '../../../src/sim/trace.js';

const scenario = (name: string): Scenario => SCENARIOS.find((s) => s.name === name)!;
const O = { bootS: 11, reserved: { cpuMilli: 200, memoryMi: 64 } };
const ZERO: RunMetrics = {
  pods: 1, podsRan: 1, toRunningFirstS: 0, toRunningP50S: 0, toRunningP90S: 0, toRunningLastS: 0, pendingPodSeconds: 0, nodesCreated: 0,
  costWindow: 0, steadyPerHour: NaN, evictions: 0, preemptions: 0, firstScaleUpS: 0, scaleDownS: NaN, nodesLeft: 0,
};

describe('bench:peers scenarios as simulator traces (issue 28 calibration)', () => {
  it('every scenario converts to a trace the simulator accepts, with its groups, shifted by the warm-up', () => {
    for (const s of SCENARIOS) {
      const t = scenarioTrace(s, O);
      expect(t.name).to.equal(`peers-${s.name}`);
      expect(t.duration).to.equal((scenarioDurationS(s) + 15) * 1000);
      expect(t.nodeGroups.map((g) => g.object.metadata?.name)).to.deep.equal(s.groups.map((g) => g.name));
      for (const g of t.nodeGroups) expect(g.bootDelay).to.deep.equal({ kind: 'constant', value: 11_000 });
    }
  });

  it('a group is the bench MachineDeployment from 0, less what the autoscaler reserves per node, at the same price, in its zone', () => {
    const t = scenarioTrace(scenario('zone-spread'), O);
    const a = t.nodeGroups[0]!.object.metadata!.annotations!;
    expect(a['capacity.cluster-autoscaler.kubernetes.io/cpu']).to.equal('7800m');
    expect(a['capacity.cluster-autoscaler.kubernetes.io/memory']).to.equal(`${32 * 1024 - 64}Mi`);
    expect(a['cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size']).to.equal('0');
    expect(a['cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size']).to.equal('10');
    expect(a['headroom.dev/price']).to.equal(groupPrice(scenario('zone-spread').groups[0]!).toFixed(4));
    expect(a['capacity.cluster-autoscaler.kubernetes.io/labels']).to.equal(`${ZONE_LABEL}=zone-a`);
    expect(t.nodeGroups[0]!.object.spec?.replicas).to.equal(0);
    expect(groupShape({ name: 'x', cpu: 4, memoryGi: 16, maxSize: 1 }, { cpuMilli: 0, memoryMi: 0 })).to.deep.equal({ cpu: '4000m', memory: '16384Mi' });
  });

  it('a GPU group keeps its GPUs (gpu-type and gpu-count) and its pods their GPU requests and limits', async () => {
    const t = scenarioTrace(scenario('gpu-burst'), O);
    const gpu = t.nodeGroups.find((g) => g.object.metadata?.name === 'gpu')!.object.metadata!.annotations!;
    expect(gpu['capacity.cluster-autoscaler.kubernetes.io/gpu-type']).to.equal('nvidia.com/gpu');
    expect(gpu['capacity.cluster-autoscaler.kubernetes.io/gpu-count']).to.equal('2');
    const small = t.nodeGroups.find((g) => g.object.metadata?.name === 'small')!.object.metadata!.annotations!;
    expect(small['capacity.cluster-autoscaler.kubernetes.io/gpu-count']).to.equal(undefined);
    const train = (t.workloads as DeploymentWorkload[]).find((w) => w.name === 'train')!;
    expect(train.template.spec?.containers[0]!.resources?.limits).to.deep.equal({ 'nvidia.com/gpu': '1' });
    // Simulated (periodic, tuned like ca-tuned), every pod runs: 6 one-GPU pods need 3 two-GPU nodes at least.
    const m = await simulate(scenario('gpu-burst'), SIM_SETUPS.find((x) => x.name === 'ca-tuned')!, 5);
    expect(m.last).to.be.a('number').and.to.be.below(120);
    expect(m.nodes).to.be.at.least(3);
  });

  it('pod sets become Deployments stepped to their count at the step and to 0 at the delete (plus any delay); the spread constraint is kept', () => {
    const mixed = scenarioTrace(scenario('mixed-burst'), O).workloads as DeploymentWorkload[];
    expect(mixed.map((w) => [w.kind, w.name, w.replicas.points])).to.have.deep.members([
      ['Deployment', 'mixed-s', [{ at: 0, replicas: 0 }, { at: 15_000, replicas: 40 }]],
      ['Deployment', 'mixed-m', [{ at: 0, replicas: 0 }, { at: 15_000, replicas: 12 }]],
      ['Deployment', 'mixed-l', [{ at: 0, replicas: 0 }, { at: 15_000, replicas: 3 }]],
    ]);
    const l = mixed.find((w) => w.name === 'mixed-l')!;
    expect(l.replicas.interpolation).to.equal('step');
    expect(l.template.spec?.containers[0]!.resources?.requests).to.deep.equal({ cpu: '6', memory: '12Gi' });

    const down = scenarioTrace(scenario('scale-down'), { ...O, deleteDelayS: 300 }).workloads[0] as DeploymentWorkload;
    expect(down.replicas.points).to.deep.equal([{ at: 0, replicas: 0 }, { at: 15_000, replicas: 40 }, { at: 375_000, replicas: 0 }]);

    const spread = scenarioTrace(scenario('zone-spread'), O).workloads[0] as DeploymentWorkload;
    expect(spread.template.metadata?.labels).to.deep.equal({ [SET_LABEL]: 'spread' });
    expect(spread.template.spec?.topologySpreadConstraints).to.deep.equal([
      { maxSkew: 1, topologyKey: ZONE_LABEL, whenUnsatisfiable: 'DoNotSchedule', labelSelector: { matchLabels: { [SET_LABEL]: 'spread' } } },
    ]);
  });

  it('the diurnal writer becomes one Deployment schedule; the CronJob keeps its schedule with a pod per completion', () => {
    const s = scenario('diurnal');
    const w = scenarioTrace(s, O).workloads as DeploymentWorkload[];
    expect(w).to.have.length(1);
    const steps = s.steps.filter((x) => x.kind === 'replicas');
    expect(w[0]!.replicas.points.slice(1)).to.deep.equal(steps.map((x) => ({ at: (x.at + 15) * 1000, replicas: x.replicas })));
    const cron = scenarioTrace(scenario('cronjob'), O).workloads[0]!;
    expect(cron).to.deep.include({ kind: 'CronJob', schedule: '*/1 * * * *', completions: 12, parallelism: 12 });
  });

  it('reads the real figures and the harness boot from the comparison summary table', () => {
    const md = [
      '### Summary (median)', '',
      '| scenario | boot | setup | runs | first scale-up s | to Running first s | p50 s | p90 s | last s | pending pod-s | nodes | $ in window | steady $/h | evictions | scale-down s | nodes left |',
      '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
      '| small-burst | short | headroom | 1 | 1.4 | 10.3 | 18.6 | 18.8 | 18.8 | 1202 | 4 | 0.065 | 2.11 | 0 | – | 0 |',
      '| small-burst | short | ca-tuned | 1 | 7.1 (7.0–7.2) | 18.8 | 19.1 | 19.7 | 19.7 | 1535 | 6 | 0.067 | 2.30 | 0 | – | 0 |',
      '| small-burst | jittered | ca-tuned | 1 | 9 | 99 | 99 | 99 | 99 | 1 | 9 | 0 | 0 | 0 | – | 0 |',
      '', '### Every run', '| 1 | small-burst | short | ca-faq | 80/80 | 1 | 2 | 3 | 4 | 5 | 6 | 7 |',
    ].join('\n');
    const real = realFigures(md);
    expect([...real.keys()]).to.deep.equal(['small-burst/headroom', 'small-burst/ca-tuned']);
    expect(real.get('small-burst/ca-tuned')).to.deep.equal({ firstScaleUp: 7.1, first: 18.8, p50: 19.1, last: 19.7, nodes: 6 });
    // Scale-up to first Running: 8.9 and 11.7 s.
    expect(harnessBootS(real)).to.be.closeTo(10.3, 1e-9);
    expect(() => realFigures('no table')).to.throw(/Summary/);
    // The continuous scenarios (a predictive autoscaler may have bought the first pods' node before them) do not count.
    const withDiurnal = new Map([...real, ['diurnal/headroom', { firstScaleUp: 20, first: 0.2, p50: 0.2, last: 9, nodes: 9 }]]);
    expect(harnessBootS(withDiurnal)).to.be.closeTo(10.3, 1e-9);
  });

  it('reads the real figures of a runs.jsonl: medians per scenario/setup over the short-boot runs', () => {
    const run = (setup: string, round: number, boot: string, first: number, p50: number) => ({
      scenario: 'small-burst', setup, boot, round,
      metrics: { ...ZERO, firstScaleUpS: 7, toRunningFirstS: first, toRunningP50S: p50, toRunningLastS: p50 + 1, nodesCreated: round },
    });
    const real = realFiguresFromRuns([run('ca-tuned', 1, 'short', 18, 19), run('ca-tuned', 2, 'short', 20, 23), run('ca-tuned', 3, 'short', 19, 20), run('ca-tuned', 4, 'jittered', 99, 99)]);
    expect([...real.keys()]).to.deep.equal(['small-burst/ca-tuned']);
    expect(real.get('small-burst/ca-tuned')).to.deep.equal({ firstScaleUp: 7, first: 19, p50: 20, last: 21, nodes: 2 });
  });

  it('the calibrated periodic policy waits for the throttled loop; uncalibrated it does not (small-burst)', async function () {
    this.timeout(30_000);
    const s = scenario('small-burst');
    const by = (n: string) => SIM_SETUPS.find((x) => x.name === n)!;
    const fast = await simulate(s, by('periodic-uncalibrated'), 11);
    const throttled = await simulate(s, by('ca-defaults'), 11);
    const tuned = await simulate(s, by('ca-tuned'), 11);
    // Every pod bound; all 80 at once (one scale-up covers them).
    for (const f of [fast, throttled, tuned]) expect(f.last - f.first).to.be.below(1);
    // Throttled: a loop's state is 28.8 s old when it writes, and the pods come during a loop.
    expect(throttled.first - tuned.first).to.be.above(28.8);
    // Tuned: the loop triggered by the pods finds them very new, the next (5 s timer) scales.
    expect(tuned.first).to.be.within(11 + 5, 11 + 5 + 1.5);
    expect(fast.first).to.be.within(11, 11 + 10);
  });

  it('the calibrated periodic policy waits 30 s for GPU pods, as Cluster Autoscaler does (gpu-burst against small-burst)', async function () {
    this.timeout(30_000);
    const tuned = SIM_SETUPS.find((x) => x.name === 'ca-tuned')!;
    const gpu = await simulate(scenario('gpu-burst'), tuned, 11);
    const small = await simulate(scenario('small-burst'), tuned, 11);
    // No loop scales while the oldest GPU pod is under 30 s old; then the boot.
    expect(gpu.first).to.be.within(30 + 11, 30 + 11 + 6);
    expect(small.first).to.be.below(30);
  });
});
