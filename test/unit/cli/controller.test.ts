import { expect } from 'chai';
import { runMain as run } from './captured-main.js';

describe('headroom controller: fleet flags', () => {
  it('refuses the flags fleet mode replaces, with one line naming the replacement', async () => {
    for (const [flag, says] of [
      [['--cluster-name', 'eu'], '--fleet-selector'],
      [['--namespace', 'capi'], '--fleet-namespace'],
      [['--management-kubeconfig', '/x'], 'as --kubeconfig'],
      [['--node-group-auto-discovery', 'clusterapi:namespace=a'], 'discovered by its name'],
      [['--webhook-address', '127.0.0.1:9443', '--tls-dir', '/tmp'], 'each workload cluster'],
      [['--leader-election-id', 'x'], 'one Lease per Cluster'],
    ] as const) {
      const r = await run(['controller', '--fleet', ...flag]);
      expect(r.code, flag.join(' ')).to.equal(2);
      expect(r.err.split('\n').filter(Boolean), flag.join(' ')).to.have.length(1);
      expect(r.err).to.include(`${flag[0]} cannot be used with --fleet`).and.include(says);
    }
  });

  it('needs --fleet for --fleet-namespace and --fleet-selector, and checks the namespace', async () => {
    let r = await run(['controller', '--fleet-selector', 'a=b']);
    expect(r.code).to.equal(2);
    expect(r.err).to.include('--fleet-namespace and --fleet-selector need --fleet');
    r = await run(['controller', '--fleet', '--fleet-namespace', 'Not_A_Namespace']);
    expect(r.code).to.equal(2);
    expect(r.err).to.include('--fleet-namespace must be a namespace name');
    r = await run(['controller', '--fleet', '--fleet-selector', ' ']);
    expect(r.code).to.equal(2);
    expect(r.err).to.include('--fleet-selector must not be empty');
  });

  it('documents the fleet flags in --help', async () => {
    const { controllerCommand } = await import('../../../src/cli/controller.js');
    for (const f of ['--fleet ', '--fleet-namespace', '--fleet-selector']) expect(controllerCommand.usage).to.include(f);
  });
});
