/**
 * Entry point of `headroom dev-cluster` (src/cli/dev-cluster.ts runs it with tsx from
 * the source checkout): the test control plane with every component and, by default,
 * the real Cluster API core manager with the kwok provider as its cloud, a Cluster
 * `dev` and a KwokMachineTemplate `small` in namespace default (the old MachineFixture
 * stand-in with `machines: 'fixture'`; neither with 'none'). With `demo`, also seeds
 * annotated node groups, a NodePool and a sample Deployment and runs Headroom against
 * them with its webhook and extender wired in (dev-cluster-demo.ts). Runs until
 * SIGINT/SIGTERM, then removes everything. Argument: a JSON DevClusterOptions.
 */
import { copyFileSync, readFileSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { resolveKubectl } from './assets.js';
import { startControlPlane } from './control-plane.js';
import { type Demo, type DemoOptions, prepareDemo, schedulerConfig, startDemo } from './dev-cluster-demo.js';
import { kubeRequest } from './kube-request.js';
import { DEV_CLUSTER, DEV_NAMESPACE, DEV_TEMPLATE, exampleMachineDeployment } from './dev-cluster-example.js';
import { KWOK_INFRA_GROUP, KWOK_PROVIDER_VERSION, KwokProvider } from './kwok-provider.js';
import { MachineFixture } from './machine-fixture.js';
import { makeTempDir } from './process.js';

export type DevClusterMachines = 'capi' | 'fixture' | 'none';

export interface DevClusterOptions {
  /** Also write the admin kubeconfig here (removed again on exit). */
  kubeconfig?: string;
  machines: DevClusterMachines;
  bootDelayMs: number;
  extraCrdDirs: string[];
  /** Seed the demo and run Headroom against it (needs machines: 'capi'). */
  demo?: DemoOptions;
}

/** Where kubectl is, as a line to print, or why it is not at hand. */
function kubectlHint(): string {
  try {
    return `  kubectl (built with the test binaries): export PATH=${dirname(resolveKubectl())}:$PATH`;
  } catch {
    return '  kubectl: not built yet (bash test/harness/build-binaries.sh builds it); any kubectl works';
  }
}

async function main(opts: DevClusterOptions): Promise<void> {
  const t0 = Date.now();
  const capi = opts.machines === 'capi';
  // The demo's kube-scheduler calls Headroom's extender: its address and CA are made first.
  const serving = opts.demo ? await prepareDemo(makeTempDir('headroom-demo-')) : undefined;
  const cp = await startControlPlane({ scheduler: !serving, controllerManager: true, kwok: true, clusterApi: capi, extraCrdDirs: opts.extraCrdDirs });
  if (serving) await cp.startScheduler({ name: 'kube-scheduler', config: schedulerConfig(serving) });
  const kc = cp.kubeConfig();
  let machines = 'no machine controllers';
  if (capi) {
    const provider = await KwokProvider.start({ kubeConfig: kc, bootDelayMs: opts.bootDelayMs, workloadKubeconfig: readFileSync(cp.kubeconfigPath, 'utf8') });
    await provider.createCluster(DEV_CLUSTER, DEV_NAMESPACE);
    await kubeRequest(kc, 'POST', `/apis/${KWOK_INFRA_GROUP}/${KWOK_PROVIDER_VERSION}/namespaces/${DEV_NAMESPACE}/kwokmachinetemplates`, {
      apiVersion: `${KWOK_INFRA_GROUP}/${KWOK_PROVIDER_VERSION}`, kind: 'KwokMachineTemplate', metadata: { name: DEV_TEMPLATE },
      spec: { template: { spec: { capacity: { cpu: '4', memory: '16Gi', pods: '110' } } } },
    });
    machines = `Cluster API ${'v1.14'} core manager + kwok provider (boot delay ${opts.bootDelayMs} ms); Cluster ${DEV_NAMESPACE}/${DEV_CLUSTER}, KwokMachineTemplate ${DEV_TEMPLATE} (4 cpu, 16Gi)`;
  } else if (opts.machines === 'fixture') {
    await MachineFixture.start({ kubeConfig: kc, bootDelayMs: opts.bootDelayMs });
    machines = `machine fixture (boot delay ${opts.bootDelayMs} ms)`;
  }
  let demo: Demo | undefined;
  if (serving && opts.demo) demo = await startDemo(cp, serving, opts.demo);
  let kubeconfig = cp.kubeconfigPath;
  if (opts.kubeconfig) {
    copyFileSync(cp.kubeconfigPath, opts.kubeconfig);
    kubeconfig = opts.kubeconfig;
  }
  console.log([
    `headroom dev-cluster: ready in ${((Date.now() - t0) / 1000).toFixed(1)}s (${cp.server})`,
    `  kubeconfig: ${kubeconfig}`,
    `  export KUBECONFIG=${kubeconfig}`,
    `  components: etcd, kube-apiserver, kube-scheduler, kube-controller-manager, kwok; machines: ${machines}`,
    ...(capi && !demo ? ['  a MachineDeployment Headroom can scale (kubectl apply -f - <<EOF ... EOF):', ...exampleMachineDeployment().split('\n').map((l) => `    ${l}`)] : []),
    ...(demo ? [kubectlHint(), ...demo.instructions] : []),
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
