import type { KubeConfig } from '@kubernetes/client-node';
import { Registry } from 'prom-client';
import { Controller, type ControllerOptions } from '../../src/controller/controller.js';
import { isConflict, KubeClient } from '../../src/kube/kube-client.js';
import { InvariantChecker, type InvariantOptions } from '../harness/invariants.js';
import { MachineFixture, fixtureNodeSelector, type MachineFixtureOptions } from '../harness/machine-fixture.js';
import { createTestNamespace, deleteTestNamespace } from '../harness/namespace.js';
import { machineDeployment, pendingPod, type GroupOptions } from './controller-objects.js';

/**
 * The setup the fault suites (faults-*.test.ts, issue 17) share: a namespace, a
 * machine fixture playing CAPI + kubelet in it, an InvariantChecker watching it, and
 * in-process controllers scoped to it. `kc` may differ from `adminKc` (a kubeconfig
 * through a TCP proxy, or an APF-throttled user) for the controller only; the test's
 * own reads and the fixture use `adminKc`.
 */
export interface FaultScenarioOptions {
  readonly adminKc: KubeConfig;
  readonly prefix: string;
  readonly fixture?: Omit<MachineFixtureOptions, 'kubeConfig' | 'namespace'>;
  readonly invariants?: Omit<InvariantOptions, 'kubeConfig' | 'namespace' | 'nodeLabelSelector'>;
}

export type FaultScenario = Awaited<ReturnType<typeof faultScenario>>;

export async function faultScenario(o: FaultScenarioOptions) {
  const kc = o.adminKc;
  const client = new KubeClient(kc);
  const ns = await createTestNamespace(kc, o.prefix);
  const nodeSelector = fixtureNodeSelector({ namespace: ns });
  const fixture = await MachineFixture.start({ kubeConfig: kc, namespace: ns, intervalMs: 100, ...o.fixture });
  const invariants = await InvariantChecker.start({ kubeConfig: kc, namespace: ns, nodeLabelSelector: nodeSelector, ...o.invariants });
  const controllers: Controller[] = [];
  const logs: string[] = [];
  const startController = async (extra: Partial<ControllerOptions> = {}) => {
    const c = new Controller({
      workload: kc,
      discovery: [{ namespace: ns, labels: {} }],
      workloadScope: { namespace: ns, nodeLabelSelector: nodeSelector },
      batch: { idleMs: 500, maxMs: 5000 },
      registry: new Registry(),
      log: (m) => logs.push(`${new Date().toISOString()} ${m}`),
      ...extra,
    });
    controllers.push(c);
    await c.start();
    return c;
  };
  const createGroup = (g: Omit<GroupOptions, 'namespace'>) =>
    client.request('POST', `/apis/cluster.x-k8s.io/v1beta2/namespaces/${ns}/machinedeployments`, { body: machineDeployment({ ...g, namespace: ns }) });
  const replicas = async (name: string) =>
    (await client.get<{ spec: { replicas: number } }>(`/apis/cluster.x-k8s.io/v1beta2/namespaces/${ns}/machinedeployments/${name}`)).spec.replicas;
  /** Idempotent: a pod created by an attempt whose answer was lost (409) counts as created. */
  const createPods = (prefix: string, count: number, cpu: string) =>
    Promise.all(Array.from({ length: count }, (_, i) => client.request('POST', `/api/v1/namespaces/${ns}/pods`, { body: pendingPod(ns, `${prefix}-${i}`, cpu) })
      .catch((err: unknown) => { if (!isConflict(err)) throw err; })));
  const cleanup = async () => {
    for (const c of controllers) await c.stop().catch(() => {});
    invariants.stop();
    await client.request('DELETE', `/api/v1/namespaces/${ns}/pods`, { query: { gracePeriodSeconds: 0 } }).catch(() => {});
    await fixture.stop().catch(() => {});
    await deleteTestNamespace(kc, ns).catch(() => {});
    client.close();
  };
  return { ns, client, fixture, invariants, controllers, logs, nodeSelector, startController, createGroup, replicas, createPods, cleanup };
}

/** Lease timings short enough for a test, long enough for a loaded 2-core CI machine. */
export const TEST_LEASE = { leaseDurationMs: 6000, renewDeadlineMs: 4000, retryPeriodMs: 500 };
