import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { headroomMetrics } from '../controller/metric-inventory.js';

interface Panel {
  type: string;
  title: string;
  targets?: Array<{ expr: string }>;
}

const DASHBOARD = JSON.parse(readFileSync(new URL('../../../charts/headroom/dashboards/headroom.json', import.meta.url), 'utf8')) as { uid: string; panels: Panel[] };

/** Series names a PromQL expression reads (headroom_*), and the labels it groups or filters by. */
function queried(expr: string): { metrics: string[]; labels: string[] } {
  const metrics = [...expr.matchAll(/\b(headroom_[a-z0-9_]+)/g)].map((m) => m[1]!);
  const grouped = [...expr.matchAll(/\bby \(([^)]*)\)/g)].flatMap((m) => m[1]!.split(',').map((l) => l.trim()));
  const matched = [...expr.matchAll(/[{,]\s*([a-z_]+)\s*=~?/g)].map((m) => m[1]!);
  return { metrics, labels: [...new Set([...grouped, ...matched])] };
}

/** A histogram's series are its name plus _bucket, _sum and _count. */
function seriesOf(metrics: ReturnType<typeof headroomMetrics>): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const m of metrics) {
    const names = m.type === 'histogram' ? ['_bucket', '_sum', '_count'].map((s) => m.name + s) : [m.name];
    for (const n of names) out.set(n, m.type === 'histogram' && n.endsWith('_bucket') ? [...m.labels, 'le'] : m.labels);
  }
  return out;
}

describe('Grafana dashboard (charts/headroom/dashboards/headroom.json)', () => {
  const series = seriesOf(headroomMetrics());
  const panels = DASHBOARD.panels.filter((p) => p.type !== 'row');

  it('every panel queries at least one Headroom metric, and every metric it queries exists in the registry', () => {
    expect(panels.length).to.be.greaterThan(10);
    for (const p of panels) {
      expect(p.targets?.length, p.title).to.be.greaterThan(0);
      for (const t of p.targets!) {
        const { metrics } = queried(t.expr);
        expect(metrics.length, `${p.title}: ${t.expr}`).to.be.greaterThan(0);
        for (const m of metrics) expect(series.has(m), `${p.title}: ${m} is not a metric Headroom exposes`).to.equal(true);
      }
    }
  });

  it('every label a query groups or filters by is a label of a metric it reads (job comes from the scrape)', () => {
    for (const p of panels) {
      for (const t of p.targets!) {
        const { metrics, labels } = queried(t.expr);
        const known = new Set(['job', ...metrics.flatMap((m) => series.get(m) ?? [])]);
        for (const l of labels) expect(known.has(l), `${p.title}: label ${l} in ${t.expr}`).to.equal(true);
      }
    }
  });

  it('covers the families an operator needs: nodes, NodePools, pods, scheduling, disruption, CAPI calls', () => {
    const read = new Set(panels.flatMap((p) => p.targets!.flatMap((t) => queried(t.expr).metrics)));
    for (const m of [
      'headroom_nodes_created_total', 'headroom_nodes_terminated_total', 'headroom_nodes_allocatable', 'headroom_nodepools_usage', 'headroom_nodepools_limit',
      'headroom_pods_state', 'headroom_scheduler_unschedulable_pods_count', 'headroom_pods_startup_duration_seconds_bucket',
      'headroom_scheduler_scheduling_duration_seconds_bucket', 'headroom_voluntary_disruption_decisions_total', 'headroom_voluntary_disruption_eligible_nodes',
      'headroom_voluntary_disruption_blocked_nodes', 'headroom_cloudprovider_duration_seconds_bucket', 'headroom_cloudprovider_errors_total',
    ]) expect(read.has(m), m).to.equal(true);
  });

  it('the query reader finds a metric that does not exist (so the check can fail)', () => {
    const { metrics, labels } = queried('sum by (nodepool) (rate(headroom_nodes_vanished_total{job=~"$job",reason="x"}[5m]))');
    expect(metrics).to.deep.equal(['headroom_nodes_vanished_total']);
    expect(series.has(metrics[0]!)).to.equal(false);
    expect(labels.sort()).to.deep.equal(['job', 'nodepool', 'reason']);
  });
});
