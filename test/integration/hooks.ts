/**
 * Mocha root-hook plugin (see test/.mocharc.integration.json): one real control plane
 * per mocha run, started lazily by the first test file that asks for it and torn
 * down after the whole run. See test/harness/control-plane.ts for the API.
 *
 *   import { sharedControlPlane } from './hooks.js';
 *   before(async function () { this.timeout(180_000); cp = await sharedControlPlane(); });
 */
import { type ControlPlane, startControlPlane } from '../harness/control-plane.js';

let shared: Promise<ControlPlane> | undefined;

/**
 * The run-wide control plane: etcd + kube-apiserver + CAPI/own CRDs + default
 * kube-scheduler + kube-controller-manager + kwok. Never stop it yourself.
 */
export function sharedControlPlane(): Promise<ControlPlane> {
  shared ??= startControlPlane({ scheduler: true, controllerManager: true, kwok: true });
  return shared;
}

export const mochaHooks = {
  async afterAll(this: Mocha.Context): Promise<void> {
    this.timeout(60_000);
    if (!shared) return;
    const cp = await shared.catch(() => undefined); // a failed start already cleaned up
    shared = undefined;
    await cp?.stop();
  },
};
