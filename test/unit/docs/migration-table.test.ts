import { expect } from 'chai';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { commands } from '../../../src/cli/main.js';
import { findUnknownField, knownFieldsOf } from '../../../src/cluster/known-fields.js';
import { readRepoFile, REPO, section, tableRows } from './doc-tables.js';

/**
 * docs/migration.md's Cluster Autoscaler section is one table that answers every Cluster
 * Autoscaler flag and annotation an operator of the clusterapi provider sets (issue 25,
 * item 6), and every Headroom flag, chart value, annotation and NodePool field it names
 * exists in the code.
 */
const CLUSTER_AUTOSCALER = [
  '--expendable-pods-priority-cutoff', '--skip-nodes-with-system-pods', '--skip-nodes-with-local-storage',
  '--skip-nodes-with-custom-controller-pods', '--max-graceful-termination-sec', '--scale-down-unneeded-time',
  '--scale-down-utilization-threshold', '--scale-down-unready-time', '--scale-down-delay-after-add', '--scale-down-delay-after-delete',
  '--scale-down-delay-after-failure', '--ignore-daemonsets-utilization', '--startup-taint', '--ignore-taint', '--balancing-ignore-label',
  '--ok-total-unready-count', '--max-empty-bulk-delete', '--scale-down-enabled', '--max-node-provision-time', '--expander',
  '--max-nodes-total', '--cores-total', '--memory-total', '--node-group-auto-discovery', '--cloud-config', '--scan-interval',
  '--balance-similar-node-groups', '--leader-elect', '--address',
  'cluster-autoscaler-status', 'cluster-autoscaler.kubernetes.io/enable-ds-eviction', 'cluster-autoscaler.kubernetes.io/pod-scale-up-delay',
  'cluster-autoscaler.kubernetes.io/safe-to-evict', 'cluster-autoscaler.kubernetes.io/scale-down-disabled', 'cluster.x-k8s.io/delete-machine',
  'cluster.x-k8s.io/autoscaling-options-maxnodeprovisiontime',
];

/** Every source file's text, for the annotation and label keys the table names. */
function sourceText(dir = join(REPO, 'src')): string {
  return readdirSync(dir, { withFileTypes: true })
    .map((e) => (e.isDirectory() ? sourceText(join(dir, e.name)) : e.name.endsWith('.ts') ? readFileSync(join(dir, e.name), 'utf8') : ''))
    .join('\n');
}

const KEY = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?\.[a-z]+\/[A-Za-z][-A-Za-z0-9_.]*$/;

describe('docs/migration.md: Cluster Autoscaler, one table checked against the code', () => {
  const lines = section(readRepoFile('docs/migration.md'), "From Cluster Autoscaler's clusterapi provider");
  const rows = tableRows(lines);
  const codes = (cell: string) => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);

  it('is one table', () => {
    const tables = lines.filter((l, i) => l.startsWith('|') && !(lines[i - 1] ?? '').startsWith('|'));
    expect(tables).to.have.length(1);
  });

  it('answers every Cluster Autoscaler flag and annotation', () => {
    const named = rows.map((r) => r[0]!).join(' ');
    expect(CLUSTER_AUTOSCALER.filter((n) => !named.includes(`\`${n}`) && !named.includes(n))).to.deep.equal([]);
    for (const r of rows) expect(r[1], r[0]).to.match(/\w/);
  });

  it('names only real headroom flags', async () => {
    const flags = new Set<string>();
    for (const name of Object.keys(commands)) for (const o of Object.keys((await commands[name]!()).options)) flags.add(`--${o}`);
    const named = rows.flatMap((r) => codes(r[1]!)).map((c) => /^--[a-z][a-z0-9-]*/.exec(c)?.[0]).filter((f): f is string => f !== undefined);
    expect(named.length).to.be.greaterThan(10);
    expect(named.filter((f) => !flags.has(f))).to.deep.equal([]);
  });

  it('names only real chart values', () => {
    const values = parse(readRepoFile('charts/headroom/values.yaml')) as Record<string, unknown>;
    const has = (path: string) => path.split('.').reduce<unknown>((o, k) => (o && typeof o === 'object' && k in o ? (o as Record<string, unknown>)[k] : undefined), values) !== undefined;
    const named = rows.flatMap((r) => [...r[1]!.matchAll(/chart `([^`]+)`/g)].map((m) => m[1]!));
    expect(named.length).to.be.greaterThan(5);
    expect(named.filter((v) => !has(v))).to.deep.equal([]);
  });

  it('names only annotations, labels and taints the code knows, and real NodePool fields', () => {
    const src = sourceText();
    const keys = rows.flatMap((r) => codes(r[1]!)).map((c) => c.replace(/: .*$/, '')).filter((c) => KEY.test(c));
    expect(keys.length).to.be.greaterThan(5);
    expect(keys.filter((k) => !src.includes(`'${k}'`) && !src.includes(`\`${k}`) && !src.includes(`"${k}"`))).to.deep.equal([]);
    const pool = knownFieldsOf('headroom.dev/v1alpha1', 'NodePool')!;
    const fields = rows.flatMap((r) => codes(r[1]!)).filter((c) => /^spec\.[a-zA-Z.]+$/.test(c));
    expect(fields.length).to.be.greaterThan(3);
    const bad = fields.filter((f) => {
      const obj: Record<string, unknown> = {};
      f.split('.').reduce<Record<string, unknown>>((o, k, i, all) => (o[k] = i === all.length - 1 ? 'x' : {}) as Record<string, unknown>, obj);
      return findUnknownField({ apiVersion: 'headroom.dev/v1alpha1', kind: 'NodePool', ...obj }, pool) !== undefined;
    });
    expect(bad).to.deep.equal([]);
  });
});
