import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { stringify } from 'yaml';
import { CliError, UsageError } from '../../../src/cli/command.js';
import { main } from '../../../src/cli/main.js';
import { simulateCommand } from '../../../src/cli/simulate.js';
import { group, podTemplate } from './fixtures.js';

/** Runs the CLI in-process and captures what it writes. */
async function cli(args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const write = process.stdout.write.bind(process.stdout);
  const ewrite = process.stderr.write.bind(process.stderr);
  const log = console.log;
  const error = console.error;
  process.stdout.write = ((s: string) => { out += s; return true; }) as typeof process.stdout.write;
  process.stderr.write = ((s: string) => { err += s; return true; }) as typeof process.stderr.write;
  console.log = (...a: unknown[]) => { out += `${a.join(' ')}\n`; };
  console.error = (...a: unknown[]) => { err += `${a.join(' ')}\n`; };
  try {
    const code = await main(args);
    return { code, out, err };
  } finally {
    process.stdout.write = write;
    process.stderr.write = ewrite;
    console.log = log;
    console.error = error;
  }
}

describe('headroom simulate', function () {
  this.timeout(120_000);
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'headroom-sim-cli-'));
    writeFileSync(join(dir, 'trace.yaml'), stringify({
      name: 'tiny', duration: '30m',
      nodeGroups: [group({ name: 'md', cpu: '4', memory: '16Gi', price: '0.2' })],
      workloads: [{ kind: 'Deployment', name: 'web', template: podTemplate('web', '1', '1Gi'), replicas: { points: [{ at: '0s', replicas: 0 }, { at: '1m', replicas: 6 }], interpolation: 'step' } }],
    }));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('--no-prediction runs headroom without prediction (and says so in the notes)', async () => {
    const on = await cli(['simulate', '--trace', join(dir, 'trace.yaml'), '--policy', 'headroom']);
    const off = await cli(['simulate', '--trace', join(dir, 'trace.yaml'), '--policy', 'headroom', '--no-prediction']);
    expect(off.code, off.err).to.equal(0);
    expect(off.out).to.include('headroom: no prediction: disabled');
    expect(on.out).to.not.include('no prediction');
  });

  it('prints exactly the documented JSON shape and writes the report', async () => {
    const r = await cli(['simulate', '--trace', join(dir, 'trace.yaml'), '--policy', 'reactive,periodic', '--seed', '4', '--json', '--out', join(dir, 'out')]);
    expect(r.code, r.err).to.equal(0);
    const json = JSON.parse(r.out);
    expect(Object.keys(json)).to.deep.equal(['trace', 'seed', 'policies']);
    expect(json.trace).to.equal('tiny');
    expect(json.seed).to.equal(4);
    expect(Object.keys(json.policies)).to.deep.equal(['reactive', 'periodic']);
    for (const p of Object.values(json.policies) as Record<string, unknown>[]) {
      expect(Object.keys(p)).to.deep.equal(['pendingSeconds', 'pendingPodSeconds', 'waitedPods', 'nodeHours', 'cost', 'peakNodes', 'utilization', 'scaleActions', 'evictions', 'costFloor', 'perDay']);
      expect(Object.keys(p.pendingSeconds as object)).to.deep.equal(['p50', 'p95', 'p99', 'max']);
      expect(Object.keys(p.perDay as object)).to.deep.equal(['pendingPodSeconds', 'cost']);
      expect(Object.keys(p.utilization as object)).to.deep.equal(['cpu', 'memory']);
    }
    expect(json.policies.reactive.peakNodes).to.equal(2);
    expect(readFileSync(join(dir, 'out', 'report.html'), 'utf8')).to.include('<canvas');
    expect(r.err).to.match(/report: .*report\.html/);
  });

  it('prints the table by default, with no progress bar when stderr is not a terminal', async () => {
    const r = await cli(['simulate', '--trace', join(dir, 'trace.yaml'), '--policy', 'reactive']);
    expect(r.code).to.equal(0);
    expect(r.out).to.match(/^trace\s+policy\s+pending p50/);
    expect(r.out).to.match(/tiny\s+reactive/);
    expect(r.out).to.match(/per simulated day \(day 1 first\):\ntrace\s+policy\s+pending pod-s per day\s+cost per day/);
    expect(r.err).to.equal('');
  });

  // Exit codes follow the error class (main: UsageError -> 2, CliError -> 1), so the
  // command is called directly here.
  it('fails with a one-line error of the right class on bad input', async () => {
    writeFileSync(join(dir, 'bad.yaml'), 'name: bad\nduration: 5q\nnodeGroups: []\nworkloads: []\n');
    const cases: [Record<string, string>, typeof CliError | typeof UsageError, RegExp][] = [
      [{ trace: join(dir, 'bad.yaml') }, CliError, /^trace "bad": duration: invalid duration "5q"/],
      [{ trace: join(dir, 'missing.yaml') }, CliError, /cannot read trace .*ENOENT/],
      [{ trace: 'builtin:nope' }, CliError, /unknown built-in trace "nope"/],
      [{ trace: 'builtin:noise', policy: 'magic' }, UsageError, /unknown policy "magic"/],
      [{ trace: 'builtin:noise', seed: '-1' }, UsageError, /--seed must be an integer/],
      [{}, UsageError, /--trace is required/],
    ];
    for (const [values, cls, re] of cases) {
      const what = JSON.stringify(values);
      const err = await simulateCommand.run(values, []).then(() => undefined, (e: unknown) => e as Error);
      expect(err, what).to.be.instanceOf(cls);
      expect(err!.message, what).to.match(re);
      expect(err!.message, what).to.not.include('\n');
    }
  });
});
