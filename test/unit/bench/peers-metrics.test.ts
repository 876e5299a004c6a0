import { expect } from 'chai';
import { formatSpread, median, parseRunsJsonl, percentile, runMetrics, runsTable, summarize, summaryTable, type RunMetrics, type RunObservations } from '../../bench/peers-metrics.js';

const S = 1_000_000;
const base: RunObservations = {
  startMs: S, endMs: S + 200_000, windowS: 100, prices: { small: 0.2, large: 0.8 },
  pods: [
    { name: 'a', createdMs: S, runningMs: S + 10_000 },
    { name: 'b', createdMs: S, runningMs: S + 20_000 },
    { name: 'c', createdMs: S + 5000, runningMs: S + 45_000 },
    { name: 'd', createdMs: S + 5000 },
  ],
  nodes: [
    { name: 'n1', group: 'small', createdMs: S + 8000 },
    { name: 'n2', group: 'large', createdMs: S + 40_000, goneMs: S + 140_000 },
  ],
  firstScaleUpMs: S + 3000,
};

describe('bench:peers metrics and summary (test/bench/peers-metrics.ts)', () => {
  it('percentile (nearest rank) and median', () => {
    expect(percentile([5, 1, 3, 2, 4], 50)).to.equal(3);
    expect(percentile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 90)).to.equal(9);
    expect(percentile([], 50)).to.be.NaN;
    expect(median([4, 1, 3, 2])).to.equal(2.5);
    expect(median([3, NaN, 1])).to.equal(2);
    expect(median([NaN])).to.be.NaN;
  });

  it('a run: time to Running over the pods that ran, pending pod-seconds until Running or the end, cost over the window only', () => {
    const m = runMetrics(base);
    expect(m).to.deep.include({ pods: 4, podsRan: 3, toRunningFirstS: 10, toRunningP50S: 20, toRunningP90S: 40, toRunningLastS: 40, nodesCreated: 2, evictions: 0, firstScaleUpS: 3 });
    // 10 + 20 + 40 + (200 - 5) for the pod that never ran.
    expect(m.pendingPodSeconds).to.equal(265);
    // small from 8 s to the window's end (100 s): 92 s x 0.2; large 40..100 s: 60 s x 0.8.
    expect(m.costWindow).to.be.closeTo((92 * 0.2 + 60 * 0.8) / 3600, 1e-12);
    // Not every pod ran: no steady state.
    expect(m.steadyPerHour).to.be.NaN;
    expect(m.scaleDownS).to.be.NaN;
  });

  it('steady $/h: the nodes up at the window\'s end (or the last Running, if later), or just before demand went away; none for continuous scenarios', () => {
    const all = { ...base, pods: base.pods.slice(0, 3) };
    // At 100 s both nodes are up; a node that came after the last pod ran (45 s) still counts.
    expect(runMetrics(all).steadyPerHour).to.be.closeTo(1.0, 1e-12);
    // n2 gone at 140 s: with a 150 s window only n1 is left.
    expect(runMetrics({ ...all, windowS: 150 }).steadyPerHour).to.be.closeTo(0.2, 1e-12);
    // Demand gone at 30 s: n2 (40 s) was not up yet.
    expect(runMetrics({ ...all, demandGoneMs: S + 30_000 }).steadyPerHour).to.be.closeTo(0.2, 1e-12);
    expect(runMetrics({ ...all, continuous: true }).steadyPerHour).to.be.NaN;
  });

  it('scale-down: demand gone -> the last node gone; NaN with the nodes left when some stayed', () => {
    const gone = { ...base, demandGoneMs: S + 60_000, nodes: [{ ...base.nodes[0]!, goneMs: S + 150_000 }, base.nodes[1]!] };
    expect(runMetrics(gone)).to.deep.include({ scaleDownS: 90, nodesLeft: 0 });
    const left = runMetrics({ ...base, demandGoneMs: S + 60_000 });
    expect(left.scaleDownS).to.be.NaN;
    expect(left.nodesLeft).to.equal(1);
  });

  it('evictions count the pods marked evicted, preemptions those kube-scheduler preempted; a node of an unpriced group is an error, not a zero', () => {
    const m = runMetrics({ ...base, pods: [{ ...base.pods[0]!, goneMs: S + 50_000, evicted: true }, { name: 'p', createdMs: S, goneMs: S + 9000, preempted: true }, base.pods[1]!] });
    expect(m).to.deep.include({ evictions: 1, preemptions: 1 });
    expect(runMetrics(base).preemptions).to.equal(0);
    expect(() => runMetrics({ ...base, nodes: [{ name: 'x', group: 'gpu', createdMs: S }] })).to.throw(/no price for group gpu/);
  });

  it('summarize: medians and ranges per (scenario, boot, setup), in first-seen order, NaNs left out', () => {
    const m = (p50: number, scaleDownS = NaN) => ({ ...runMetrics(base), toRunningP50S: p50, scaleDownS }) as RunMetrics;
    const rows = summarize([
      { scenario: 's', setup: 'headroom', boot: 'short', round: 1, metrics: m(10, 50) },
      { scenario: 's', setup: 'ca', boot: 'short', round: 1, metrics: m(40) },
      { scenario: 's', setup: 'headroom', boot: 'short', round: 2, metrics: m(14) },
      { scenario: 's', setup: 'ca', boot: 'short', round: 2, metrics: m(30, 70) },
      { scenario: 's', setup: 'headroom', boot: 'short', round: 3, metrics: m(11, 60) },
    ]);
    expect(rows.map((r) => [r.setup, r.runs])).to.deep.equal([['headroom', 3], ['ca', 2]]);
    expect(rows[0]!.metrics.toRunningP50S).to.deep.equal({ median: 11, min: 10, max: 14 });
    expect(rows[1]!.metrics.toRunningP50S).to.deep.equal({ median: 35, min: 30, max: 40 });
    expect(rows[0]!.metrics.scaleDownS).to.deep.equal({ median: 55, min: 50, max: 60 });
    expect(rows[1]!.metrics.scaleDownS).to.deep.equal({ median: 70, min: 70, max: 70 });
    expect(formatSpread(rows[0]!.metrics.toRunningP50S)).to.equal('11.0 (10.0–14.0)');
    expect(formatSpread(rows[1]!.metrics.scaleDownS, 0)).to.equal('70');
    expect(formatSpread({ median: NaN, min: NaN, max: NaN })).to.equal('–');
    const table = summaryTable(rows).split('\n');
    expect(table).to.have.length(4);
    expect(table[2]).to.match(/^\| s \| short \| headroom \| 3 \|/);
  });

  it('runsTable: one line per run, in order, with its note', () => {
    const lines = runsTable([
      { scenario: 's', setup: 'a', boot: 'short', round: 1, metrics: runMetrics(base), note: '1 pods never Running' },
      { scenario: 's', setup: 'b', boot: 'short', round: 1, metrics: runMetrics(base) },
    ]).split('\n');
    expect(lines).to.have.length(4);
    expect(lines[2]).to.match(/^\| 1 \| s \| short \| a \| 3\/4 \|.*1 pods never Running \|$/);
  });
  it('parseRunsJsonl: null (a NaN through JSON) and a metric the file predates read back as NaN; failed runs are left out; bad lines are errors', () => {
    const { preemptions: _, ...metrics } = { ...runMetrics(base), scaleDownS: NaN };
    const text = [
      JSON.stringify({ scenario: 's', setup: 'headroom', boot: 'short', round: 1, metrics, daemonset: true, at: 'x' }),
      '',
      JSON.stringify({ scenario: 's', boot: 'short', daemonset: true, setup: 'ca', round: 1, error: 'boom' }),
      JSON.stringify({ scenario: 's', setup: 'ca', boot: 'short', round: 1, metrics, note: '1 pods never Running within 300 s' }),
    ].join('\n');
    const runs = parseRunsJsonl(text);
    expect(runs.map((r) => r.setup)).to.deep.equal(['headroom', 'ca']);
    expect(runs[0]!.metrics.scaleDownS).to.be.NaN;
    expect(runs[0]!.metrics.preemptions).to.be.NaN;
    expect(runs[0]!.metrics.toRunningP50S).to.equal(20);
    expect(runs[1]!.note).to.equal('1 pods never Running within 300 s');
    expect(summaryTable(summarize(runs))).to.include('| preempted |');
    expect(() => parseRunsJsonl('{')).to.throw(/line 1: not JSON/);
    expect(() => parseRunsJsonl('{"metrics":{}}')).to.throw(/line 1: no scenario/);
  });
});
