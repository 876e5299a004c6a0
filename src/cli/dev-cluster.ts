import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseDuration } from '../api/nodepool.js';
import { type Command, CliError, UsageError } from './command.js';

const USAGE = `Usage: headroom dev-cluster [options]

Starts a throwaway local Kubernetes control plane for development: etcd,
kube-apiserver (TLS, RBAC), kube-scheduler, kube-controller-manager, kwok, the
Cluster API and Headroom CRDs, and the real Cluster API core manager (v1.14) with
a kwok-backed infrastructure provider: MachineDeployments, MachineSets,
MachinePools and Machines become Ready kwok Nodes the way a cloud's would. A
Cluster "dev" and a KwokMachineTemplate "small" are ready in namespace default.
No Docker, no cloud. Prints the admin kubeconfig path and an example
MachineDeployment, runs until Ctrl-C, then removes everything.

With --demo it also seeds two annotated MachineDeployments (one sized by its
capacity annotations, one by its infrastructure template's status.capacity), a
NodePool selecting them and a sample Deployment "demo/web" at 0 replicas, runs
Headroom against them (the controller, its admission webhook and the scheduler
extender, wired into the kube-apiserver and kube-scheduler), and prints the kubectl
commands to scale the Deployment and watch nodes come and go.

Needs a source checkout with dev dependencies (npm ci) and the test binaries
(built on first use from the Go module proxy: bash test/harness/build-binaries.sh,
or HEADROOM_TEST_ASSETS=dir and HEADROOM_CAPI_ASSETS=dir).

Options:
  --kubeconfig PATH     also write the admin kubeconfig to PATH (removed on exit)
  --boot-delay MS       Machine -> Node delay of the provider (default 1000)
  --machines KIND       capi (default): the real CAPI manager and the kwok provider;
                        fixture: the test suite's MachineFixture stand-in instead;
                        none: neither (CRDs only)
  --without-fixture     same as --machines none
  --crds DIR            install the CRDs in DIR too (repeatable)
  --demo                seed node groups, a NodePool and a Deployment, and run Headroom
                        against them (needs --machines capi)
  --consolidate-after D the demo NodePool's consolidateAfter, a Go duration (default 30s):
                        how long an empty node stays before Headroom removes it
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
  summary: 'run a local control plane with kwok nodes and the real Cluster API',
  usage: USAGE,
  options: {
    kubeconfig: { type: 'string' },
    'boot-delay': { type: 'string' },
    machines: { type: 'string' },
    'without-fixture': { type: 'boolean' },
    crds: { type: 'string', multiple: true },
    demo: { type: 'boolean' },
    'consolidate-after': { type: 'string' },
  },
  async run(values) {
    const bootDelay = values['boot-delay'] === undefined ? 1000 : Number(values['boot-delay']);
    if (!Number.isInteger(bootDelay) || bootDelay < 0) throw new UsageError(`dev-cluster: --boot-delay must be a non-negative integer (ms), got ${String(values['boot-delay'])}`);
    const machines = values['without-fixture'] === true ? 'none' : (values.machines ?? 'capi');
    if (machines !== 'capi' && machines !== 'fixture' && machines !== 'none') throw new UsageError(`dev-cluster: --machines must be capi, fixture or none, got ${String(machines)}`);
    const demo = values.demo === true;
    if (demo && machines !== 'capi') throw new UsageError('dev-cluster: --demo needs --machines capi (the real Cluster API manager)');
    const consolidateAfter = (values['consolidate-after'] as string | undefined) ?? '30s';
    if (values['consolidate-after'] !== undefined && !demo) throw new UsageError('dev-cluster: --consolidate-after applies to --demo only');
    let consolidateMs: number | null;
    try {
      consolidateMs = parseDuration(consolidateAfter);
    } catch {
      consolidateMs = null;
    }
    if (consolidateMs === null) throw new UsageError(`dev-cluster: --consolidate-after must be a Go duration such as 30s or 2m, got ${JSON.stringify(consolidateAfter)}`);
    const root = findCheckout();
    if (!root) throw new CliError('dev-cluster needs a source checkout: test/harness/dev-cluster.ts not found');
    if (!existsSync(join(root, 'node_modules', 'tsx'))) throw new CliError(`dev-cluster needs the dev dependencies: run npm ci in ${root}`);
    const crds = ((values.crds as string[] | undefined) ?? []).map((d) => resolve(d));
    for (const d of crds) if (!existsSync(d)) throw new CliError(`dev-cluster: --crds ${d}: no such directory`);
    const opts = {
      kubeconfig: typeof values.kubeconfig === 'string' ? resolve(values.kubeconfig) : undefined,
      machines,
      bootDelayMs: bootDelay,
      extraCrdDirs: crds,
      ...(demo ? { demo: { consolidateAfter } } : {}),
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
