import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { loadBuiltinTrace } from '../../src/sim/builtin.js';
import { POLICY_FACTORIES, simulationSnapshot } from '../../src/sim/policies.js';
import { renderReport, timeTicks } from '../../src/sim/report-html.js';
import { POLICY_NAMES, type TraceResult } from '../../src/sim/result.js';
import { runTrace } from '../../src/sim/run.js';

const run = promisify(execFile);

/** Debian's chromium package (`apt-get install -y chromium`); HEADROOM_CHROMIUM overrides. */
const CHROMIUM = process.env.HEADROOM_CHROMIUM ?? 'chromium';

async function dumpDom(file: string): Promise<string> {
  const profile = mkdtempSync(join(tmpdir(), 'headroom-chromium-'));
  try {
    const { stdout } = await run(CHROMIUM, [
      '--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
      '--disable-sync', '--no-first-run', `--user-data-dir=${profile}`, '--dump-dom', `file://${file}`,
    ], { timeout: 90_000, maxBuffer: 64 * 1024 * 1024 });
    return stdout;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new Error(`${CHROMIUM} not found: install Debian's chromium package (apt-get install -y chromium) or set HEADROOM_CHROMIUM`);
    }
    throw err;
  } finally {
    rmSync(profile, { recursive: true, force: true });
  }
}

describe('simulation report in headless Chromium', function () {
  this.timeout(180_000);
  let dir: string;
  let results: TraceResult[];
  let html: string;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'headroom-report-'));
    // Two short traces: enough to get every chart kind for every policy.
    const traces = [loadBuiltinTrace('flash-burst'), { ...loadBuiltinTrace('cron-batch'), duration: 2 * 3_600_000 }];
    results = [];
    for (const t of traces) {
      results.push(await runTrace(t, {
        seed: 1, buildSnapshot: simulationSnapshot,
        policies: POLICY_NAMES.map((name) => ({ name, factory: POLICY_FACTORIES[name] })),
      }));
    }
    html = renderReport(results, 'test');
    writeFileSync(join(dir, 'report.html'), html);
  });

  after(() => rmSync(dir, { recursive: true, force: true }));

  it('is self-contained: no network references', () => {
    expect(html).to.not.match(/(src|href)\s*=\s*["']?(https?:)?\/\//i);
    expect(html).to.not.match(/@import|url\(/i);
  });

  it('draws every chart, with a line for every policy', async () => {
    const dom = await dumpDom(join(dir, 'report.html'));
    const drawn = /<body[^>]*data-charts-drawn="(\d+)"/.exec(dom);
    expect(drawn, 'the inline script ran').to.not.equal(null);
    // Three charts per trace, and headroom's forecast against actual demand.
    expect(Number(drawn![1])).to.equal(results.length * 4);
    const canvases = [...dom.matchAll(/<canvas[^>]*>/g)].map((m) => m[0]);
    expect(canvases).to.have.length(results.length * 4);
    for (const c of canvases) {
      const attr = (name: string) => Number(new RegExp(`${name}="(\\d+)"`).exec(c)?.[1] ?? NaN);
      // Axes, grid and labels alone paint a few thousand pixels; a blank canvas paints none.
      expect(attr('data-painted'), c).to.be.greaterThan(2000);
      const metric = /data-metric="(\w+)"/.exec(c)![1]! as 'pending' | 'nodes' | 'cost' | 'forecast';
      const r = results[Number(/data-trace="(\d+)"/.exec(c)![1])]!;
      // A line that is zero throughout lies on the axis, blended into it: only lines off the axis are counted.
      const lines = metric === 'forecast' ? ['actual', 'forecast'] : POLICY_NAMES.filter((p) => r.policies[p]!.series[metric].some((v) => v > 0));
      for (const p of lines) expect(attr(`data-painted-${p}`), `${p} in ${c}`).to.be.greaterThan(50);
    }
    for (const metric of ['pending', 'nodes', 'cost', 'forecast']) expect(dom).to.include(`data-metric="${metric}"`);
    expect(html).to.include('cost (price x hours, boot included) is the price measure');
    // The summary table rendered with one row per trace and policy, the oracle's included.
    const summary = /<table>([\s\S]*?)<\/table>/.exec(dom)![1]!;
    expect((summary.match(/<tr>/g) ?? []).length).to.equal(1 + results.length * POLICY_NAMES.length);
    for (const r of results) expect(summary).to.match(new RegExp(`<td>${r.trace}</td><td>oracle</td>`));
    // The time axis carries whole labels (issue 25: a 6 h trace showed "0h 2h 3h 5h 6h").
    for (const c of canvases) {
      const r = results[Number(/data-trace="(\d+)"/.exec(c)![1])]!;
      expect(/data-x-ticks="([^"]*)"/.exec(c)?.[1], c).to.equal(timeTicks(r.durationSeconds).map((t) => t.label).join(' '));
    }
  });

  it('shows the oracle at about zero pending, and pending and cost per simulated day', async () => {
    const dom = await dumpDom(join(dir, 'report.html'));
    const perDay = /<table id="per-day">([\s\S]*?)<\/table>/.exec(dom);
    expect(perDay, 'the per-day table').to.not.equal(null);
    const rows = [...perDay![1]!.matchAll(/<tr>(.*?)<\/tr>/g)].map((m) => [...m[1]!.matchAll(/<t[dh][^>]*>(.*?)<\/t[dh]>/g)].map((c) => c[1]!));
    expect(rows[0]).to.deep.equal(['trace', 'policy', 'pending pod-s per day', 'cost per day']);
    expect(rows).to.have.length(1 + results.length * POLICY_NAMES.length);
    for (const r of results) {
      for (const p of POLICY_NAMES) {
        const row = rows.find((x) => x[0] === r.trace && x[1] === p)!;
        const s = r.policies[p]!.summary;
        // Both traces are shorter than a day: one day, equal to the totals.
        expect(row[2]!.split(' | ').map(Number), `${r.trace}/${p}`).to.deep.equal(s.perDay.pendingPodSeconds);
        expect(row[3]!.split(' | ').map(Number)).to.deep.equal(s.perDay.cost);
        expect(s.perDay.cost[0]).to.be.closeTo(s.cost, 0.02);
      }
      // flash-burst's spike is not forecastable, but the oracle reads it from the trace.
      const oracle = r.policies.oracle!.summary;
      expect(oracle.pendingPodSeconds, r.trace).to.be.lessThan(0.1 * r.policies.reactive!.summary.pendingPodSeconds);
    }
    expect(dom).to.include('the price of perfect foresight');
  });
});
