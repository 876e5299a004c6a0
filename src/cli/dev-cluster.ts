import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Command, CliError, UsageError } from './command.js';

const USAGE = `Usage: headroom dev-cluster [options]

Starts a throwaway local Kubernetes control plane for development: etcd,
kube-apiserver (TLS, RBAC), kube-scheduler, kube-controller-manager, kwok, the
Cluster API and Headroom CRDs, and a machine fixture that turns MachineDeployments,
MachineSets, MachinePools and Machines into Ready kwok Nodes. Prints the admin
kubeconfig path, runs until Ctrl-C, then removes everything.

Needs a source checkout with dev dependencies (npm ci) and the test binaries
(built on first use from the Go module proxy, or HEADROOM_TEST_ASSETS=dir).

Options:
  --kubeconfig PATH     also write the admin kubeconfig to PATH (removed on exit)
  --boot-delay MS       Machine -> Node delay of the fixture (default 1000)
  --without-fixture     do not run the machine fixture
  --crds DIR            install the CRDs in DIR too (repeatable)
  -h, --help            this help`;

/** The checkout this file lives in (src/cli or dist/src/cli), if it has the harness. */
function findCheckout(): string | undefined {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    if (existsSync(join(dir, 'test', 'harness', 'dev-cluster.ts'))) return dir;
    dir = dirname(dir);
  }
  return undefined;
}

export const devClusterCommand: Command = {
  name: 'dev-cluster',
  summary: 'run a local control plane with kwok nodes and a CAPI machine fixture',
  usage: USAGE,
  options: {
    kubeconfig: { type: 'string' },
    'boot-delay': { type: 'string' },
    'without-fixture': { type: 'boolean' },
    crds: { type: 'string', multiple: true },
  },
  async run(values) {
    const bootDelay = values['boot-delay'] === undefined ? 1000 : Number(values['boot-delay']);
    if (!Number.isInteger(bootDelay) || bootDelay < 0) throw new UsageError(`dev-cluster: --boot-delay must be a non-negative integer (ms), got ${String(values['boot-delay'])}`);
    const root = findCheckout();
    if (!root) throw new CliError('dev-cluster needs a source checkout: test/harness/dev-cluster.ts not found');
    if (!existsSync(join(root, 'node_modules', 'tsx'))) throw new CliError(`dev-cluster needs the dev dependencies: run npm ci in ${root}`);
    const crds = ((values.crds as string[] | undefined) ?? []).map((d) => resolve(d));
    for (const d of crds) if (!existsSync(d)) throw new CliError(`dev-cluster: --crds ${d}: no such directory`);
    const opts = {
      kubeconfig: typeof values.kubeconfig === 'string' ? resolve(values.kubeconfig) : undefined,
      fixture: values['without-fixture'] !== true,
      bootDelayMs: bootDelay,
      extraCrdDirs: crds,
    };
    const child = spawn(process.execPath, ['--import', 'tsx', join(root, 'test', 'harness', 'dev-cluster.ts'), JSON.stringify(opts)], {
      cwd: root,
      stdio: 'inherit',
    });
    // Pass signals on (Ctrl-C reaches the child twice, which it tolerates): the child
    // owns the control plane and cleans up before it exits.
    for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(sig, () => child.kill(sig));
    const code = await new Promise<number>((res) => child.on('exit', (c, s) => res(c ?? (s ? 1 : 0))));
    return code;
  },
};
