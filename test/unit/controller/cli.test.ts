import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { discoverySpecs, parseGroupDiscoverySpec } from '../../../src/kube/discovery.js';

/**
 * Runs `headroom controller` with each argument list in ONE child process (the CLI as
 * a user runs it, through tsx; one process keeps the cost of loading the client down)
 * and returns, per run, the exit code and what went to stdout / stderr.
 */
function runCli(argLists: string[][]): Array<{ code: number; out: string[]; err: string[] }> {
  const dir = mkdtempSync(join(tmpdir(), 'headroom-controller-cli-'));
  const entry = join(dir, 'entry.mjs');
  const mainUrl = new URL('src/cli/main.ts', new URL(`file://${ROOT}`)).href;
  writeFileSync(entry, `import { main } from ${JSON.stringify(mainUrl)};
const results = [];
for (const args of JSON.parse(process.argv[2])) {
  const out = [], err = [];
  const log = console.log, error = console.error;
  console.log = (m) => out.push(String(m)); console.error = (m) => err.push(String(m));
  try { results.push({ code: await main(args), out, err }); } finally { console.log = log; console.error = error; }
}
process.stdout.write(JSON.stringify(results));
`);
  try {
    const r = spawnSync(process.execPath, ['--import', 'tsx', entry, JSON.stringify(argLists)], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
    if (r.status !== 0) throw new Error(`cli runner failed: ${r.stderr}`);
    return JSON.parse(r.stdout);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const ROOT = new URL('../../../', import.meta.url).pathname;

describe('headroom controller CLI', function () {
  this.timeout(60_000);
  const bad: Array<[string[], RegExp]> = [
    [['--batch-idle-duration', 'soon'], /--batch-idle-duration must be a whole number/],
    [['--batch-idle-duration', '5000', '--batch-max-duration', '1000'], /--batch-max-duration must be at least/],
    [['--metrics-address', 'nope'], /--metrics-address must be HOST:PORT/],
    [['--node-group-auto-discovery', 'aws:foo=bar'], /must start with "clusterapi:"/],
    [['--node-group-auto-discovery', 'clusterapi:namespace'], /is not key=value/],
    [['--solver-threads', 'many'], /--solver-threads/],
    [['--solver-priority', 'realtime'], /--solver-priority must be one of idle, low, normal, got "realtime"/],
    [['--expendable-pods-priority-cutoff', 'low'], /--expendable-pods-priority-cutoff must be a whole number \(an int32 priority\), got "low"/],
    [['--drain-timeout', '600'], /--drain-timeout must be a positive Go duration such as 90s or 10m, got "600"/],
    [['--drain-timeout', '0s'], /--drain-timeout must be a positive Go duration/],
    [['--no-such-flag'], /Unknown option/],
  ];
  let results: ReturnType<typeof runCli>;
  before(() => {
    results = runCli([
      ['controller', '--help'],
      ['controller', '--kubeconfig', '/nonexistent/kubeconfig', '--metrics-address', '0', '--solver-threads', '0'],
      ...bad.map(([args]) => ['controller', ...args]),
    ]);
  });

  it('prints its help', () => {
    expect(results[0]!.code).to.equal(0);
    expect(results[0]!.out.join('\n')).to.match(/--management-kubeconfig/).and.match(/--leader-elect/).and.match(/--dry-run/);
  });

  it('exits 1 with one line when the kubeconfig cannot be read', () => {
    expect(results[1]!.code).to.equal(1);
    expect(results[1]!.err).to.have.length(1);
    expect(results[1]!.err[0]).to.match(/cannot load workload kubeconfig \/nonexistent\/kubeconfig/);
  });

  bad.forEach(([args, message], i) => {
    it(`exits 2 with one line for ${args.join(' ')}`, () => {
      const r = results[i + 2]!;
      expect(r.code).to.equal(2);
      expect(r.err).to.have.length(1);
      expect(r.err[0]).to.match(message);
    });
  });

  it('parses clusterapi auto-discovery specs and folds --namespace / --cluster-name in', () => {
    expect(parseGroupDiscoverySpec('clusterapi:namespace=capi,clusterName=prod,color=green,tier=a')).to.deep.equal({
      namespace: 'capi', clusterName: 'prod', labels: { color: 'green', tier: 'a' },
    });
    expect(discoverySpecs({ namespace: 'ns', clusterName: 'c', specs: [] })).to.deep.equal([{ namespace: 'ns', clusterName: 'c', labels: {} }]);
    expect(discoverySpecs({ namespace: 'ns', specs: ['clusterapi:namespace=other,a=b', 'clusterapi:x=y'] })).to.deep.equal([
      { namespace: 'other', labels: { a: 'b' } }, { namespace: 'ns', labels: { x: 'y' } },
    ]);
    expect(discoverySpecs({ specs: [] })).to.deep.equal([]);
  });
});
