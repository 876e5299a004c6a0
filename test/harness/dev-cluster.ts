/**
 * Entry point of `headroom dev-cluster` (src/cli/dev-cluster.ts runs it with tsx from
 * the source checkout): the test control plane with every component and, unless
 * disabled, a MachineFixture for all namespaces. Runs until SIGINT/SIGTERM, then
 * removes everything. Argument: a JSON DevClusterOptions.
 */
import { copyFileSync, rmSync } from 'node:fs';
import { startControlPlane } from './control-plane.js';
import { MachineFixture } from './machine-fixture.js';

export interface DevClusterOptions {
  /** Also write the admin kubeconfig here (removed again on exit). */
  kubeconfig?: string;
  fixture: boolean;
  bootDelayMs: number;
  extraCrdDirs: string[];
}

async function main(opts: DevClusterOptions): Promise<void> {
  const t0 = Date.now();
  const cp = await startControlPlane({ scheduler: true, controllerManager: true, kwok: true, extraCrdDirs: opts.extraCrdDirs });
  const fixture = opts.fixture ? await MachineFixture.start({ kubeConfig: cp.kubeConfig(), bootDelayMs: opts.bootDelayMs }) : undefined;
  let kubeconfig = cp.kubeconfigPath;
  if (opts.kubeconfig) {
    copyFileSync(cp.kubeconfigPath, opts.kubeconfig);
    kubeconfig = opts.kubeconfig;
  }
  console.log([
    `headroom dev-cluster: ready in ${((Date.now() - t0) / 1000).toFixed(1)}s (${cp.server})`,
    `  kubeconfig: ${kubeconfig}`,
    `  export KUBECONFIG=${kubeconfig}`,
    `  components: etcd, kube-apiserver, kube-scheduler, kube-controller-manager, kwok${fixture ? `, machine fixture (boot delay ${opts.bootDelayMs} ms)` : ''}`,
    `  logs: ${cp.dir}/logs`,
    '  Ctrl-C stops it and removes everything.',
  ].join('\n'));
  // Killing the process groups and removing the temp dir is process.ts's exit handler's
  // job (synchronous, SIGKILL): nothing here needs a graceful shutdown.
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.on(sig, () => {
      if (opts.kubeconfig) rmSync(opts.kubeconfig, { force: true });
      console.log('headroom dev-cluster: stopped');
      process.exit(0);
    });
  }
  await new Promise(() => undefined);
}

const arg = process.argv[2];
if (!arg) {
  console.error('usage: dev-cluster.ts <json options>');
  process.exit(2);
}
main(JSON.parse(arg) as DevClusterOptions).catch((err: unknown) => {
  console.error(`headroom dev-cluster: ${(err as Error).message}`);
  process.exit(1);
});
