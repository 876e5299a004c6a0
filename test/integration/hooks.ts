/**
 * Mocha root-hook plugin (see test/.mocharc.integration.json): one real control plane
 * per test process, started lazily by the first test file that asks for it. See
 * test/harness/control-plane.ts for the API.
 *
 *   import { sharedControlPlane } from './hooks.js';
 *   before(async function () { this.timeout(180_000); cp = await sharedControlPlane(); });
 *
 * The suite runs files in parallel mocha worker processes (`parallel`, `jobs` in the
 * config). Each worker keeps its control plane for all the files it runs, one after
 * another, as a serial run keeps one for all files: starting one costs 10-25 s on
 * 2 busy cores. In a worker, root `afterAll` hooks run after every file, so there the
 * control plane is not stopped by a hook but when the worker exits (process.ts kills
 * every component's process group at exit). A file must therefore not depend on
 * which files ran before it on the same control plane: own namespaces and names.
 */
import { loadavg } from 'node:os';
import type { KubeConfig } from '@kubernetes/client-node';
import { KubeClient } from '../../src/kube/kube-client.js';
import { type ControlPlane, startControlPlane } from '../harness/control-plane.js';

let shared: Promise<ControlPlane> | undefined;
const inWorker = process.env.MOCHA_WORKER_ID !== undefined;
let fileStart = 0;

/**
 * The process-wide control plane: etcd + kube-apiserver + CAPI/own CRDs + default
 * kube-scheduler + kube-controller-manager + kwok. Never stop it yourself.
 */
export function sharedControlPlane(): Promise<ControlPlane> {
  shared ??= startControlPlane({ scheduler: true, controllerManager: true, kwok: true });
  return shared;
}

/**
 * For a file's `before` hook: the shared control plane (its start counts against the
 * hook's 180 s), its admin kubeconfig and a client on it; close the client in `after`.
 *   before(async function () { ({ kc, client } = await sharedClient(this)); });
 *   after(() => client.close());
 */
export async function sharedClient(hook: Mocha.Context): Promise<{ cp: ControlPlane; kc: KubeConfig; client: KubeClient }> {
  hook.timeout(180_000);
  const cp = await sharedControlPlane();
  const kc = cp.kubeConfig();
  return { cp, kc, client: new KubeClient(kc) };
}

export const mochaHooks = {
  beforeAll(): void {
    fileStart = Date.now();
  },
  async afterAll(this: Mocha.Context): Promise<void> {
    this.timeout(60_000);
    if (inWorker) {
      // Once per file here: say how long it took (the slowest files set the suite's time).
      const file = this.test?.parent?.suites[0]?.file ?? '?';
      console.log(`[file-time] ${((Date.now() - fileStart) / 1000).toFixed(1)} s ${file.replace(`${process.cwd()}/`, '')} (worker ${process.env.MOCHA_WORKER_ID}, load ${loadavg()[0]!.toFixed(1)})`);
      return;
    }
    if (!shared) return;
    const cp = await shared.catch(() => undefined); // a failed start already cleaned up
    shared = undefined;
    await cp?.stop();
  },
};
