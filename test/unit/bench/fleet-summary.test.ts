import { expect } from 'chai';
import { FLEET_BENCH_HELP, fleetRun, type FleetRun, type FleetRunObservations, linearFit, parseFleetBenchArgs, runOrder, summarizeFleet } from '../../bench/fleet-summary.js';

describe('bench:fleet options and summary (test/bench/fleet-summary.ts)', () => {
  it('defaults, every flag, --help', () => {
    expect(parseFleetBenchArgs([])).to.deep.equal({
      options: { clusters: [0, 1, 2, 4], nodes: 20, podsPerNode: 10, burst: 4, rounds: 1, settleS: 10, windowS: 20, json: false },
    });
    expect(parseFleetBenchArgs(['--clusters', '1, 8,16', '--nodes', '100', '--pods-per-node', '0', '--burst', '2', '--rounds', '3', '--settle', '0', '--window', '30', '--json'])).to.deep.equal({
      options: { clusters: [1, 8, 16], nodes: 100, podsPerNode: 0, burst: 2, rounds: 3, settleS: 0, windowS: 30, json: true },
    });
    expect(parseFleetBenchArgs(['--help'])).to.deep.equal({ help: FLEET_BENCH_HELP });
    // The help names every flag the parser takes.
    for (const flag of ['--clusters', '--nodes', '--pods-per-node', '--burst', '--rounds', '--settle', '--window', '--json', '--help']) expect(FLEET_BENCH_HELP).to.include(flag);
  });

  it('bad input: one line naming the flag', () => {
    const error = (argv: string[]) => (parseFleetBenchArgs(argv) as { error: string }).error;
    expect(error(['--nodes=-3'])).to.equal('bench:fleet: --nodes takes a whole number of at least 0, got "-3"');
    expect(error(['--burst', '0'])).to.equal('bench:fleet: --burst takes a whole number of at least 1, got "0"');
    expect(error(['--window', '1.5'])).to.match(/--window takes a whole number of at least 2/);
    expect(error(['--clusters', '1,x'])).to.match(/--clusters takes whole numbers separated by commas/);
    expect(error(['--clusters', '2,1'])).to.match(/ascending without repeats/);
    expect(error(['--clusters', '1,1'])).to.match(/ascending without repeats/);
    expect(error(['--clusters', '0'])).to.match(/at least one count above 0/);
    expect(error(['--frobnicate'])).to.match(/^bench:fleet: Unknown option '--frobnicate'/);
    for (const argv of [['--nodes=-3'], ['--frobnicate'], ['--clusters', '']]) expect(error(argv)).to.not.include('\n');
  });

  it('rounds alternate the order of the cluster counts', () => {
    expect(runOrder([0, 1, 4], 3).map((r) => `${r.round}:${r.clusters}`)).to.deep.equal(['1:0', '1:1', '1:4', '2:4', '2:1', '2:0', '3:0', '3:1', '3:4']);
  });

  it('least squares: slope, intercept and r2; too few distinct points give NaN; NaN points left out', () => {
    const exact = linearFit([[0, 100], [1, 110], [2, 120], [4, 140]]);
    expect(exact).to.deep.include({ points: 4 });
    expect(exact.slope).to.be.closeTo(10, 1e-12);
    expect(exact.intercept).to.be.closeTo(100, 1e-12);
    expect(exact.r2).to.be.closeTo(1, 1e-12);
    // y = 1 + 2x with noise +-1: the fit by hand (x: 0,1,2,3; y: 2,2,6,6).
    const noisy = linearFit([[0, 2], [1, 2], [2, 6], [3, 6]]);
    expect(noisy.slope).to.be.closeTo(1.6, 1e-12);
    expect(noisy.intercept).to.be.closeTo(1.6, 1e-12);
    expect(noisy.r2).to.be.closeTo(0.8, 1e-12);
    expect(linearFit([[2, 5], [2, 7]]).slope).to.be.NaN;
    expect(linearFit([[1, 5]]).intercept).to.be.NaN;
    expect(linearFit([[0, 1], [1, NaN], [2, 3]])).to.deep.include({ slope: 1, intercept: 1, points: 2 });
    // A flat line is a perfect fit.
    expect(linearFit([[0, 3], [5, 3]])).to.deep.include({ slope: 0, intercept: 3, r2: 1 });
  });

  const S = 1_000_000;
  const obs = (clusters: number, round: number, rss: number, live: number, cpuS: number): FleetRunObservations => ({
    clusters, round, ownedAfterMs: 2500, rssSamplesMb: [rss - 1, rss, rss + 5], heapSamplesMb: [live + 20, live + 40, NaN], heapLiveMb: live,
    windowCpuS: [10, 10 + cpuS], windowMs: 20_000,
    burst: Array.from({ length: clusters }, (_, i) => ({ cluster: `w${i}`, firstPodMs: S, firstWriteMs: S + 1000 + 100 * i, ...(i === 3 ? {} : { allWrittenMs: S + 1500 + 100 * i }) })),
    burstCpuS: [20, 21], burstWallMs: 2000, burstRssPeakMb: rss + 30,
  });

  it('a run: medians of the samples, CPU over the window in millicores, scale-up times per cluster in seconds (NaN when never written)', () => {
    const r = fleetRun(obs(4, 1, 300, 50, 2));
    expect(r).to.deep.include({ clusters: 4, round: 1, ownedAfterS: 2.5, rssMb: 300, heapUsedMb: 80, heapLiveMb: 50, cpuMillicores: 100, burstCpuMillicores: 500, burstRssPeakMb: 330 });
    expect(r.scaleUpFirstS).to.deep.equal([1, 1.1, 1.2, 1.3]);
    expect(r.scaleUpAllS.slice(0, 3)).to.deep.equal([1.5, 1.6, 1.7]);
    expect(r.scaleUpAllS[3]).to.be.NaN;
    const none = fleetRun(obs(0, 1, 280, 40, 1));
    expect(none.scaleUpFirstS).to.deep.equal([]);
  });

  it('the summary: medians per N over rounds, per-cluster costs as the slope through every run, missed scale-ups counted', () => {
    // 200 MB + 10 MB a cluster, live heap 40 + 5, CPU 50 m + 25 m; round 2 a little higher.
    const runs: FleetRun[] = [];
    for (const round of [1, 2]) {
      for (const n of [0, 1, 2]) runs.push(fleetRun(obs(n, round, 200 + 10 * n + (round - 1) * 2, 40 + 5 * n, (50 + 25 * n) / 50)));
    }
    const s = summarizeFleet(runs);
    expect(s.byClusters.map((b) => [b.clusters, b.runs, b.rssMb, b.heapLiveMb, b.cpuMillicores])).to.deep.equal([[0, 2, 201, 40, 50], [1, 2, 211, 45, 75], [2, 2, 221, 50, 100]]);
    expect(s.byClusters[2]).to.deep.include({ scaleUpFirstP50S: 1.05, scaleUpFirstMaxS: 1.1, scaleUpAllMaxS: 1.6 });
    expect(s.byClusters[0]!.burstCpuMillicores, 'no burst without clusters').to.be.NaN;
    expect(s.perCluster.rssMb.slope).to.be.closeTo(10, 1e-9);
    expect(s.perCluster.rssMb.intercept).to.be.closeTo(201, 1e-9);
    expect(s.perCluster.heapLiveMb.slope).to.be.closeTo(5, 1e-9);
    expect(s.perCluster.cpuMillicores.slope).to.be.closeTo(25, 1e-9);
    expect(s.missedScaleUps).to.equal(0);
    // A cluster whose group never reached the burst: counted, and its max is Infinity, not hidden.
    const missed = summarizeFleet([fleetRun(obs(4, 1, 300, 50, 2))]);
    expect(missed.missedScaleUps).to.equal(1);
    expect(missed.byClusters[0]!.scaleUpAllMaxS).to.equal(Infinity);
  });
});
