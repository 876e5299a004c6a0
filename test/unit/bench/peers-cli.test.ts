import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { parsePeersArgs, USAGE } from '../../bench/peers-cli.js';
import { SCENARIOS } from '../../bench/peers-scenarios.js';
import { SETUPS } from '../../bench/peers-setups.js';

const options = (argv: string[], ca: () => string | undefined = () => '/ca') => {
  const r = parsePeersArgs(argv, ca);
  if (!('options' in r)) throw new Error(`expected options, got ${JSON.stringify(r)}`);
  return r.options;
};
const error = (argv: string[], ca: () => string | undefined = () => '/ca') => {
  const r = parsePeersArgs(argv, ca);
  if (!('error' in r)) throw new Error(`expected an error, got ${JSON.stringify(r)}`);
  return r.error;
};

describe('bench:peers command line (test/bench/peers-cli.ts)', () => {
  it('defaults: one round of every scenario and setup, short boots, the DaemonSet, 3 lanes, the cached CA', () => {
    const o = options([]);
    expect(o.runs).to.equal(1);
    expect(o.scenarios.map((s) => s.name)).to.deep.equal(SCENARIOS.map((s) => s.name));
    expect(o.setups.map((s) => s.name)).to.deep.equal(SETUPS.map((s) => s.name));
    expect(o.boots.map((b) => b.name)).to.deep.equal(['short']);
    expect(o.daemonsets).to.deep.equal([true]);
    expect(o.lanes).to.equal(3);
    expect(o.jobs).to.equal(undefined);
    expect(o.clusterAutoscaler).to.equal('/ca');
    expect(o.out).to.equal('bench-peers');
  });

  it('flags: filters, rounds, lanes, jobs, both boots and DaemonSet settings; an explicit CA path wins', () => {
    const o = options(['--cluster-autoscaler', '/mine', '--runs', '5', '--scenario', 'scale-down,small-burst', '--setup', 'headroom,ca-tuned',
      '--boot', 'both', '--daemonset', 'both', '--lanes', '2', '--jobs', '4', '--out', '/tmp/x']);
    expect(o).to.deep.include({ clusterAutoscaler: '/mine', runs: 5, lanes: 2, jobs: 4, out: '/tmp/x' });
    expect(o.scenarios.map((s) => s.name)).to.deep.equal(['small-burst', 'scale-down']);
    expect(o.setups.map((s) => s.name)).to.deep.equal(['headroom', 'ca-tuned']);
    expect(o.boots.map((b) => b.name)).to.deep.equal(['short', 'jittered']);
    expect(o.daemonsets).to.deep.equal([true, false]);
  });

  it('Headroom alone needs no Cluster Autoscaler; a CA setup with none found is refused', () => {
    expect(options(['--setup', 'headroom'], () => undefined).clusterAutoscaler).to.equal(undefined);
    expect(error([], () => undefined)).to.match(/--cluster-autoscaler PATH is required/);
  });

  it('--help gives the usage, which names every flag, scenario and setup', () => {
    expect(parsePeersArgs(['--help'])).to.deep.equal({ help: true });
    expect(parsePeersArgs(['-h'])).to.deep.equal({ help: true });
    for (const flag of ['--cluster-autoscaler', '--runs', '--scenario', '--setup', '--boot', '--daemonset', '--lanes', '--jobs', '--out', '--karpenter', '--help']) expect(USAGE).to.include(flag);
    for (const n of [...SCENARIOS, ...SETUPS].map((x) => x.name)) expect(USAGE).to.include(n);
  });

  it('bad input: one line each, naming what was wrong', () => {
    const cases: Array<[string[], RegExp]> = [
      [['--bogus'], /Unknown option '--bogus'/],
      [['extra'], /positional/i],
      [['--runs', '0'], /--runs takes a whole number from 1, got "0"/],
      [['--runs', '2.5'], /--runs takes a whole number/],
      [['--lanes', 'x'], /--lanes takes a whole number/],
      [['--jobs=-1'], /--jobs takes a whole number/],
      [['--jobs', '-1'], /argument is ambiguous/],
      [['--scenario', 'nope'], /no scenario "nope"/],
      [['--scenario', ','], /--scenario: no names given/],
      [['--setup', 'karpenter'], /no setup "karpenter"/],
      [['--boot', 'slow'], /no boot "slow"/],
      [['--daemonset', 'yes'], /--daemonset takes true, false or both/],
      [['--karpenter', '/k'], /Karpenter has no Cluster API provider/],
    ];
    for (const [argv, re] of cases) {
      const e = error(argv);
      expect(e, argv.join(' ')).to.match(re);
      expect(e.includes('\n'), argv.join(' ')).to.equal(false);
    }
  });

  it('the script: --help exits 0 with the usage; a bad flag exits 2 with one line on stderr and starts nothing', function () {
    this.timeout(60_000);
    const run = (args: string[]) => spawnSync(process.execPath, ['--import', 'tsx', 'test/bench/peers.ts', ...args], { encoding: 'utf8', timeout: 50_000 });
    const help = run(['--help']);
    expect(help.status).to.equal(0);
    expect(help.stdout).to.equal(USAGE);
    const bad = run(['--bogus']);
    expect(bad.status).to.equal(2);
    expect(bad.stdout).to.equal('');
    expect(bad.stderr.trim().split('\n')).to.have.length(1);
    expect(bad.stderr).to.match(/^bench:peers: Unknown option '--bogus'/);
  });
});
