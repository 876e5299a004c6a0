import { expect } from 'chai';
import { BUILTIN_TRACES, builtinTraceKind, loadBuiltinTrace } from '../../../src/sim/builtin.js';
import { NOISY_VARIANT_PEAK_FRACTION, noisyVariant, schedulePeak } from '../../../src/sim/noisy-variant.js';
import type { DeploymentWorkload, ReplicaSchedule, Trace } from '../../../src/sim/trace.js';
import { replicaSteps } from '../../../src/sim/workloads.js';

const deployments = (t: Trace) => t.workloads.filter((w): w is DeploymentWorkload => w.kind === 'Deployment');

/** The replica count at every re-evaluation, from the change points. */
function everyStep(s: ReplicaSchedule, duration: number, seed: number, stream: string): number[] {
  const steps = replicaSteps(s, duration, seed, stream);
  const out: number[] = [];
  let i = 0;
  for (let t = 0; t < duration; t += s.every) {
    while (i + 1 < steps.length && steps[i + 1]![0] <= t) i++;
    out.push(steps[i]![1]);
  }
  return out;
}

describe('sim noisy variants', () => {
  it('finds a schedule peak without its noise', () => {
    expect(schedulePeak({ points: [{ at: 0, replicas: 5 }, { at: 60_000, replicas: 40 }, { at: 120_000, replicas: 10 }], interpolation: 'step', every: 30_000, noise: { stddev: 50 } }, 600_000)).to.equal(40);
    expect(schedulePeak({ points: [], interpolation: 'linear', diurnal: { min: 10, max: 110, peakAt: 0, period: 86_400_000 }, every: 60_000 }, 86_400_000)).to.equal(110);
  });

  it('adds per-minute noise of 2% of each Deployment\'s peak, in quadrature with its own, and leaves jobs alone', () => {
    for (const base of ['diurnal', 'multi-day', 'ramp']) {
      const quiet = loadBuiltinTrace(base);
      const noisy = loadBuiltinTrace(`${base}-noisy`);
      expect(noisy).to.deep.equal(noisyVariant(quiet));
      expect(noisy.name).to.equal(`${base}-noisy`);
      expect(noisy.description).to.include('Noisy variant');
      expect(noisy.nodeGroups).to.deep.equal(quiet.nodeGroups);
      deployments(quiet).forEach((q, i) => {
        const n = deployments(noisy)[i]!;
        const peak = schedulePeak(q.replicas, quiet.duration);
        expect(n.replicas.noise!.stddev).to.be.closeTo(Math.hypot(q.replicas.noise?.stddev ?? 0, NOISY_VARIANT_PEAK_FRACTION * peak), 1e-9);
        expect(n.replicas.every).to.be.at.most(60_000);
        expect(n.replicas.points).to.deep.equal(q.replicas.points);
      });
    }
    const withJob: Trace = { ...loadBuiltinTrace('diurnal'), workloads: [...loadBuiltinTrace('cron-batch').workloads] };
    const v = noisyVariant(withJob);
    expect(v.workloads.filter((w) => w.kind !== 'Deployment')).to.deep.equal(withJob.workloads.filter((w) => w.kind !== 'Deployment'));
  });

  it('draws noise of about the stated size around the quiet schedule, the same for the same seed', () => {
    const quiet = loadBuiltinTrace('diurnal');
    const noisy = loadBuiltinTrace('diurnal-noisy');
    const q = deployments(quiet).find((w) => w.name === 'web')!;
    const n = deployments(noisy).find((w) => w.name === 'web')!;
    const a = everyStep(q.replicas, quiet.duration, 1, 'replicas/default/web');
    const b = everyStep(n.replicas, noisy.duration, 1, 'replicas/default/web');
    expect(b).to.deep.equal(everyStep(n.replicas, noisy.duration, 1, 'replicas/default/web'));
    expect(b).to.not.deep.equal(everyStep(n.replicas, noisy.duration, 2, 'replicas/default/web'));
    const residuals = a.map((x, i) => b[i]! - x);
    const mean = residuals.reduce((s, x) => s + x, 0) / residuals.length;
    const sd = Math.sqrt(residuals.reduce((s, x) => s + (x - mean) ** 2, 0) / residuals.length);
    // web peaks at 1,400: 2% is 28 pods; 1,440 draws estimate it to within a few percent.
    expect(sd).to.be.closeTo(28, 2.5);
    expect(Math.abs(mean)).to.be.below(3);
  });

  it('lists each noisy variant right after its trace, and sorts the suite into forecastable traces and guards', () => {
    expect(BUILTIN_TRACES.filter((n) => n.endsWith('-noisy'))).to.deep.equal(['diurnal-noisy', 'multi-day-noisy', 'ramp-noisy']);
    for (const n of BUILTIN_TRACES.filter((x) => x.endsWith('-noisy'))) {
      expect(BUILTIN_TRACES.indexOf(n)).to.equal(BUILTIN_TRACES.indexOf(n.replace('-noisy', '') as never) + 1);
    }
    expect(BUILTIN_TRACES.filter((n) => builtinTraceKind(n) === 'guard')).to.deep.equal(['flash-burst', 'noise']);
    expect(() => loadBuiltinTrace('noise-noisy')).to.throw(/unknown built-in trace "noise-noisy"/);
  });
});
