import { formatDuration } from './duration.js';
import type { TraceResult } from './result.js';
import { PRICE_NOTE, perDayRows, summaryRows, sweepRows } from './summary-table.js';

const COLORS: Record<string, string> = { headroom: '#1f77b4', reactive: '#ff7f0e', periodic: '#2ca02c', oracle: '#9467bd' };

/** Tick spacings the time axis may use, in seconds: whole minutes, hours or days. */
const TICK_STEPS = [60, 300, 600, 900, 1800, 3600, 7200, 10_800, 21_600, 43_200, 86_400, 172_800, 604_800];

/**
 * The time axis' ticks for a run of `durationSeconds`: at most 7, at multiples of the
 * smallest whole step that keeps them so (1h on a 6 h trace: 0h 1h ... 6h; whole days
 * past two days), each labelled exactly (no rounded "2h" at 1.5 h).
 */
export function timeTicks(durationSeconds: number): { at: number; label: string }[] {
  // Past two days, whole days read better than hours.
  const steps = durationSeconds > 172_800 ? TICK_STEPS.filter((s) => s % 86_400 === 0) : TICK_STEPS;
  const step = steps.find((s) => durationSeconds / s <= 6) ?? Math.ceil(durationSeconds / 6 / 604_800) * 604_800;
  const out: { at: number; label: string }[] = [];
  for (let at = 0; at <= durationSeconds + 1e-9; at += step) out.push({ at, label: tickLabel(at, step) });
  return out;
}

function tickLabel(seconds: number, step: number): string {
  if (step % 86_400 === 0) return `${seconds / 86_400}d`;
  const h = Math.floor(seconds / 3600);
  const m = Math.round((seconds % 3600) / 60);
  return m === 0 ? `${h}h` : h === 0 ? `${m}m` : `${h}h${m}m`;
}
/** The forecast chart's two lines. */
const ACTUAL_COLOR = '#444444';
const FORECAST_COLOR = '#d62728';
/** The static-spare line of `--buffer-sweep`. */
const SWEEP_COLOR = '#7f7f7f';

/**
 * A self-contained report: the summary table and the per-day table as HTML and, per trace, three charts
 * (pending pods, nodes, cumulative cost) with one line per policy, and for a
 * predicting policy a fourth: workload pods against what was forecast for that
 * time one horizon earlier (upper quantile), drawn on
 * canvases by a small inline script from inline JSON. No network, no libraries.
 * After drawing, each canvas records how many pixels it painted in
 * `data-painted`, which the headless-browser test reads back.
 */
export function renderReport(results: TraceResult[], generatedAt: string): string {
  const data = results.map((r) => ({
    trace: r.trace,
    description: r.description,
    duration: r.durationSeconds,
    ticks: timeTicks(r.durationSeconds),
    policies: Object.entries(r.policies).map(([name, run]) => ({ name, color: COLORS[name] ?? '#555', series: run.series })),
    sweep: r.bufferSweep && r.policies.headroom ? { line: r.bufferSweep, headroom: { pendingPodSeconds: r.policies.headroom.summary.pendingPodSeconds, cost: r.policies.headroom.summary.cost } } : null,
    forecast: Object.entries(r.policies).map(([name, run]) => (run.forecast ? { policy: name, ...run.forecast } : undefined)).find((f) => f) ?? null,
  }));
  const rows = summaryRows(results);
  const table = [
    '<table><thead><tr>',
    ...rows.header.map((h) => `<th>${esc(h)}</th>`),
    '</tr></thead><tbody>',
    ...rows.rows.map((r) => `<tr>${r.map((c, i) => `<td${i > 1 ? ' class="n"' : ''}>${esc(c)}</td>`).join('')}</tr>`),
    '</tbody></table>',
  ].join('');
  const days = perDayRows(results);
  const perDay = [
    '<table id="per-day"><thead><tr>',
    ...days.header.map((h) => `<th>${esc(h)}</th>`),
    '</tr></thead><tbody>',
    ...days.rows.map((r) => `<tr>${r.map((c, i) => `<td${i > 1 ? ' class="n"' : ''}>${esc(c)}</td>`).join('')}</tr>`),
    '</tbody></table>',
  ].join('');
  const sweep = sweepRows(results);
  const sweepHtml = sweep.rows.length === 0 ? '' : [
    '<h3>Prediction against static spare</h3><p>Headroom as run, against Headroom without prediction plus a static CapacityBuffer of p% of each Deployment (pending pod-s @ cost); the last column is that line\'s pending at Headroom\'s cost.</p>',
    '<table id="buffer-sweep"><thead><tr>', ...sweep.header.map((h) => `<th>${esc(h)}</th>`), '</tr></thead><tbody>',
    ...sweep.rows.map((r) => `<tr>${r.map((c, i) => `<td${i > 1 ? ' class="n"' : ''}>${esc(c)}</td>`).join('')}</tr>`),
    '</tbody></table>',
  ].join('');
  const notes = [...new Set(results.flatMap((r) => Object.entries(r.policies).flatMap(([name, run]) => run.notes.map((n) => `${name}: ${n}`))))];
  const notesHtml = notes.length ? `<p><strong>Notes:</strong></p><ul>${notes.map((n) => `<li>${esc(n)}</li>`).join('')}</ul>` : '';
  const sections = results.map((r, i) => `
<section>
  <h2>${esc(r.trace)} <small>${esc(formatDuration(r.durationSeconds * 1000))}, seed ${r.seed}</small></h2>
  <p>${esc(r.description)}</p>
  <div class="legend">${Object.keys(r.policies).map((p) => `<span style="color:${COLORS[p] ?? '#555'}">&#9632; ${esc(p)}</span>`).join(' ')}</div>
  <div class="charts">
    <figure><figcaption>Pending pods</figcaption><canvas class="chart" width="420" height="220" data-trace="${i}" data-metric="pending"></canvas></figure>
    <figure><figcaption>Nodes</figcaption><canvas class="chart" width="420" height="220" data-trace="${i}" data-metric="nodes"></canvas></figure>
    <figure><figcaption>Cumulative cost</figcaption><canvas class="chart" width="420" height="220" data-trace="${i}" data-metric="cost"></canvas></figure>
${data[i]!.sweep ? `    <figure><figcaption>Pending pod-s against cost: <span style="color:${SWEEP_COLOR}">static spare 0-20%, no prediction</span>, and <span style="color:${COLORS.headroom}">headroom as run</span></figcaption><canvas class="chart" width="420" height="220" data-trace="${i}" data-metric="sweep"></canvas></figure>
` : ''}${data[i]!.forecast ? `    <figure><figcaption>Workload pods (<span style="color:${ACTUAL_COLOR}">actual</span>) and ${esc(data[i]!.forecast!.policy)}'s forecast for that time (<span style="color:${FORECAST_COLOR}">upper quantile, made one horizon earlier</span>)</figcaption><canvas class="chart" width="420" height="220" data-trace="${i}" data-metric="forecast"></canvas></figure>
` : ''}  </div>
</section>`).join('\n');
  // `<` is escaped so that no string in the data can close the script element.
  const json = JSON.stringify(data).replace(/</g, '\\u003c');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Headroom simulation report</title>
<style>
body { font: 14px/1.4 system-ui, sans-serif; margin: 24px; color: #222; }
table { border-collapse: collapse; margin: 12px 0 24px; }
th, td { border-bottom: 1px solid #ddd; padding: 4px 10px; text-align: left; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
th { background: #f4f4f4; }
.charts { display: flex; flex-wrap: wrap; gap: 12px; }
figure { margin: 0; }
figcaption { font-weight: 600; }
canvas { border: 1px solid #ddd; }
h2 small { font-weight: normal; color: #777; }
.legend span { margin-right: 12px; font-weight: 600; }
</style>
</head>
<body>
<h1>Headroom simulation report</h1>
<p>Generated ${esc(generatedAt)}. Pending seconds are per pod, from creation to binding; pending pod-s sums them over all pods, waited pods counts those pending over 5 s. Cost and node-hours count Machines from creation (boot included) to deletion: ${esc(PRICE_NOTE)}. Utilization is requested over allocatable on Ready nodes, time-weighted.</p>
${table}
<h3>Per simulated day</h3>
<p>Pending pod-seconds and cost of each simulated day, day 1 first (the last day may be partial): the first day, with nothing learnt yet, apart from the days after it. <code>oracle</code> reads the trace's future (capacity asked one boot time before its pods): its cost is the price of perfect foresight.</p>
${perDay}
${sweepHtml}
${notesHtml}
${sections}
<script type="application/json" id="data">${json}</script>
<script>
(function () {
  var data = JSON.parse(document.getElementById('data').textContent);
  var canvases = document.querySelectorAll('canvas.chart');
  for (var c = 0; c < canvases.length; c++) draw(canvases[c]);
  document.body.setAttribute('data-charts-drawn', String(canvases.length));

  function draw(canvas) {
    var trace = data[Number(canvas.getAttribute('data-trace'))];
    var metric = canvas.getAttribute('data-metric');
    if (metric === 'sweep') return drawSweep(canvas, trace.sweep);
    // Lines to draw: one per policy, or actual and forecast (null = no sample: a gap).
    var lines = metric === 'forecast'
      ? [{ name: 'actual', color: '${ACTUAL_COLOR}', s: trace.forecast.actual }, { name: 'forecast', color: '${FORECAST_COLOR}', s: trace.forecast.forecast }]
      : trace.policies.map(function (p) { return { name: p.name, color: p.color, s: p.series[metric] }; });
    var ctx = canvas.getContext('2d');
    var W = canvas.width, H = canvas.height, L = 48, R = 8, T = 8, B = 24;
    ctx.fillStyle = '#fff';
    ctx.fillRect(0, 0, W, H);
    var max = 0;
    lines.forEach(function (l) {
      for (var i = 0; i < l.s.length; i++) if (l.s[i] !== null && l.s[i] > max) max = l.s[i];
    });
    if (max <= 0) max = 1;
    ctx.strokeStyle = '#ccc';
    ctx.fillStyle = '#555';
    ctx.font = '10px sans-serif';
    ctx.lineWidth = 1;
    for (var g = 0; g <= 4; g++) {
      var y = T + (H - T - B) * (1 - g / 4);
      ctx.beginPath(); ctx.moveTo(L, y); ctx.lineTo(W - R, y); ctx.stroke();
      var v = max * g / 4;
      ctx.fillText(metric === 'cost' ? v.toFixed(1) : String(Math.round(v)), 2, y + 3);
    }
    var labels = [];
    trace.ticks.forEach(function (t) {
      var x = L + (W - L - R) * (trace.duration > 0 ? t.at / trace.duration : 0);
      ctx.fillText(t.label, Math.min(x - 8, W - R - ctx.measureText(t.label).width), H - 8);
      labels.push(t.label);
    });
    canvas.setAttribute('data-x-ticks', labels.join(' '));
    // Each line is counted right after it is stroked (later lines may cover it), so a
    // headless test can tell that every policy's line was drawn.
    lines.forEach(function (l) {
      var s = l.s;
      ctx.strokeStyle = l.color;
      ctx.lineWidth = 1.5;
      ctx.beginPath();
      var pen = false;
      for (var i = 0; i < s.length; i++) {
        if (s[i] === null) { pen = false; continue; }
        var px = L + (W - L - R) * (s.length > 1 ? i / (s.length - 1) : 0);
        var py = T + (H - T - B) * (1 - s[i] / max);
        if (!pen) ctx.moveTo(px, py); else ctx.lineTo(px, py);
        pen = true;
      }
      ctx.stroke();
      canvas.setAttribute('data-painted-' + l.name, String(countColor(ctx, W, H, l.color)));
    });
    var img = ctx.getImageData(0, 0, W, H).data, painted = 0;
    for (var k = 0; k < img.length; k += 4) if (img[k] < 250 || img[k + 1] < 250 || img[k + 2] < 250) painted++;
    canvas.setAttribute('data-painted', String(painted));
  }

  // Cost on x, pending pod-s on y: the static-spare points joined in cost order, headroom a dot.
  function drawSweep(canvas, sweep) {
    var ctx = canvas.getContext('2d');
    var W = canvas.width, H = canvas.height, L = 56, R = 8, T = 8, B = 24;
    ctx.fillStyle = '#fff';
    ctx.fillRect(0, 0, W, H);
    var pts = sweep.line.slice().sort(function (a, b) { return a.cost - b.cost; });
    var all = pts.concat([sweep.headroom]);
    var xs = all.map(function (p) { return p.cost; }), ys = all.map(function (p) { return p.pendingPodSeconds; });
    var x0 = Math.min.apply(null, xs), x1 = Math.max.apply(null, xs), y1 = Math.max.apply(null, ys);
    if (x1 <= x0) x1 = x0 + 1;
    if (y1 <= 0) y1 = 1;
    var X = function (c) { return L + (W - L - R) * (c - x0) / (x1 - x0); };
    var Y = function (v) { return T + (H - T - B) * (1 - v / y1); };
    ctx.strokeStyle = '#ccc'; ctx.fillStyle = '#555'; ctx.font = '10px sans-serif'; ctx.lineWidth = 1;
    for (var g = 0; g <= 4; g++) {
      var y = T + (H - T - B) * (1 - g / 4);
      ctx.beginPath(); ctx.moveTo(L, y); ctx.lineTo(W - R, y); ctx.stroke();
      ctx.fillText(String(Math.round(y1 * g / 4)), 2, y + 3);
    }
    ctx.fillText('cost ' + x0.toFixed(1), L, H - 8);
    ctx.fillText(x1.toFixed(1), W - R - 30, H - 8);
    ctx.strokeStyle = '${SWEEP_COLOR}'; ctx.fillStyle = '${SWEEP_COLOR}'; ctx.lineWidth = 1.5;
    ctx.beginPath();
    pts.forEach(function (p, i) { if (i === 0) ctx.moveTo(X(p.cost), Y(p.pendingPodSeconds)); else ctx.lineTo(X(p.cost), Y(p.pendingPodSeconds)); });
    ctx.stroke();
    pts.forEach(function (p) { ctx.fillRect(X(p.cost) - 2, Y(p.pendingPodSeconds) - 2, 4, 4); ctx.fillText(p.percent + '%', X(p.cost) + 3, Y(p.pendingPodSeconds) - 3); });
    canvas.setAttribute('data-painted-static', String(countColor(ctx, W, H, '${SWEEP_COLOR}')));
    ctx.fillStyle = '${COLORS.headroom}';
    ctx.beginPath(); ctx.arc(X(sweep.headroom.cost), Y(sweep.headroom.pendingPodSeconds), 5, 0, 2 * Math.PI); ctx.fill();
    canvas.setAttribute('data-painted-headroom', String(countColor(ctx, W, H, '${COLORS.headroom}')));
    var img = ctx.getImageData(0, 0, W, H).data, painted = 0;
    for (var k = 0; k < img.length; k += 4) if (img[k] < 250 || img[k + 1] < 250 || img[k + 2] < 250) painted++;
    canvas.setAttribute('data-painted', String(painted));
  }

  function countColor(ctx, W, H, color) {
    var img = ctx.getImageData(0, 0, W, H).data, hits = 0;
    var r = parseInt(color.slice(1, 3), 16), g = parseInt(color.slice(3, 5), 16), b = parseInt(color.slice(5, 7), 16);
    for (var k = 0; k < img.length; k += 4) if (Math.abs(img[k] - r) < 40 && Math.abs(img[k + 1] - g) < 40 && Math.abs(img[k + 2] - b) < 40) hits++;
    return hits;
  }
})();
</script>
</body>
</html>
`;
}

function esc(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}
