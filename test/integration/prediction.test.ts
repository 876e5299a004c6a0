import type { KubeConfig, V1Node, V1Pod } from '@kubernetes/client-node';
import { expect } from 'chai';
import { Registry } from 'prom-client';
import { Controller, type ControllerOptions } from '../../src/controller/controller.js';
import { ConfigMapStateStore } from '../../src/controller/model-store.js';
import type { KubeClient } from '../../src/kube/kube-client.js';
import { observe } from '../../src/prediction/predictor.js';
import { emptyPredictionState, serializePredictionState } from '../../src/prediction/state.js';
import { MachineFixture, fixtureNodeSelector } from '../harness/machine-fixture.js';
import { createTestNamespace, deleteTestNamespace } from '../harness/namespace.js';
import { eventually, isNodeReady } from '../harness/wait.js';
import { machineDeployment } from './controller-objects.js';
import { sharedClient } from './hooks.js';

/**
 * Prediction end to end on the real control plane: kube-controller-manager's CronJob
 * and Job controllers start the pods, the machine fixture boots kwok Nodes 10 s
 * after a Machine appears, the real kube-scheduler binds. Without prediction a
 * CronJob's pods wait for that boot; with it the nodes are Ready before the run.
 */

const BOOT_MS = 10_000;
const KWOK_TOLERATION = { key: 'kwok.x-k8s.io/node', operator: 'Exists', effect: 'NoSchedule' };

/** The first whole minute at least `leadMs` from now, and a cron schedule that fires only then (UTC, once a day). */
function runAtLeast(leadMs: number): { at: number; schedule: string } {
  const at = Math.ceil((Date.now() + leadMs) / 60_000) * 60_000;
  const d = new Date(at);
  return { at, schedule: `${d.getUTCMinutes()} ${d.getUTCHours()} * * *` };
}

describe('prediction on a real control plane (CronJob controller, kwok nodes booting in 10 s)', function () {
  let kc: KubeConfig;
  let client: KubeClient;

  before(async function () { ({ kc, client } = await sharedClient(this)); });
  after(() => client.close());

  async function scenario(prefix: string, pool: Record<string, unknown>, price = '1') {
    const ns = await createTestNamespace(kc, prefix);
    const fixture = await MachineFixture.start({ kubeConfig: kc, namespace: ns, bootDelayMs: BOOT_MS, intervalMs: 100 });
    const controllers: Controller[] = [];
    const logs: string[] = [];
    await client.request('POST', `/apis/cluster.x-k8s.io/v1beta2/namespaces/${ns}/machinedeployments`, {
      body: machineDeployment({
        namespace: ns, name: 'md', replicas: 0, min: 0, max: 10, cpu: '4', memory: '16Gi',
        labels: { 'prediction-test': ns },
        // The nodes carry the namespace too, so the run's pods land on this test's nodes only.
        annotations: { 'headroom.dev/price': price, 'capacity.cluster-autoscaler.kubernetes.io/labels': `prediction-test=${ns}` },
      }),
    });
    await client.request('POST', '/apis/headroom.dev/v1alpha1/nodepools', {
      body: {
        apiVersion: 'headroom.dev/v1alpha1', kind: 'NodePool', metadata: { name: ns },
        spec: { weight: 100, nodeGroupSelector: { matchLabels: { 'prediction-test': ns } }, prediction: pool },
      },
    });
    const startController = async (extra: Partial<ControllerOptions> = {}) => {
      const c = new Controller({
        workload: kc,
        discovery: [{ namespace: ns, labels: {} }],
        workloadScope: { namespace: ns, nodeLabelSelector: fixtureNodeSelector({ namespace: ns }) },
        batch: { idleMs: 500, maxMs: 5_000 },
        prediction: { defaultBootHorizonMs: BOOT_MS + 5_000, intervalMs: 1_000, state: { namespace: ns, name: 'headroom-prediction' } },
        log: (m) => logs.push(`${new Date().toISOString()} ${m}`),
        ...extra,
      });
      controllers.push(c);
      await c.start();
      return c;
    };
    const cronJob = (name: string, schedule: string, parallelism: number, cpu: string) => client.request('POST', `/apis/batch/v1/namespaces/${ns}/cronjobs`, {
      body: {
        apiVersion: 'batch/v1', kind: 'CronJob', metadata: { name, namespace: ns },
        spec: {
          schedule, timeZone: 'Etc/UTC',
          jobTemplate: {
            spec: {
              parallelism, completions: parallelism,
              template: {
                spec: {
                  restartPolicy: 'Never', tolerations: [KWOK_TOLERATION], nodeSelector: { 'prediction-test': ns },
                  containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.10', resources: { requests: { cpu, memory: '128Mi' } } }],
                },
              },
            },
          },
        },
      },
    });
    const replicas = async () => (await client.get<{ spec: { replicas: number } }>(`/apis/cluster.x-k8s.io/v1beta2/namespaces/${ns}/machinedeployments/md`)).spec.replicas;
    const pods = async () => (await client.get<{ items: V1Pod[] }>(`/api/v1/namespaces/${ns}/pods`)).items;
    const nodes = async () => (await client.request<{ items: V1Node[] }>('GET', '/api/v1/nodes', { query: { labelSelector: fixtureNodeSelector({ namespace: ns }) } })).items;
    const cleanup = async () => {
      for (const c of controllers) await c.stop().catch(() => {});
      await client.request('DELETE', `/apis/headroom.dev/v1alpha1/nodepools/${ns}`).catch(() => {});
      await client.request('DELETE', `/apis/batch/v1/namespaces/${ns}/cronjobs`, { query: { propagationPolicy: 'Background' } }).catch(() => {});
      await client.request('DELETE', `/api/v1/namespaces/${ns}/pods`, { query: { gracePeriodSeconds: 0 } }).catch(() => {});
      await fixture.stop();
      await deleteTestNamespace(kc, ns).catch(() => {});
    };
    return { ns, startController, cronJob, replicas, pods, nodes, logs, cleanup };
  }

  /** The pods of the run at `at` once all are bound, with when each was created and scheduled. */
  async function runPods(s: Awaited<ReturnType<typeof scenario>>, count: number, at: number) {
    return eventually(`${count} CronJob pods bound`, async () => {
      const items = (await s.pods()).filter((p) => new Date(p.metadata!.creationTimestamp!).getTime() >= at - 1000);
      return items.length === count && items.every((p) => p.spec?.nodeName) ? items : false;
    }, { timeoutMs: 120_000, intervalMs: 250 });
  }

  it('has the nodes for a CronJob\'s pods Ready before the job fires; its pods do not wait for a node', async function () {
    this.timeout(240_000);
    const s = await scenario('pred-cron', { enabled: true, quantile: 0.9 });
    try {
      const registry = new Registry();
      await s.startController({ registry });
      // 2 pods x 3 CPU on 4-CPU nodes: two nodes, nothing exists before the run.
      const run = runAtLeast(45_000);
      await s.cronJob('report', run.schedule, 2, '3');
      expect(await s.replicas()).to.equal(0);
      await eventually('the forecast of the run is exported', async () => new RegExp(
        `headroom_prediction_forecast_pods\\{workload="CronJob/${s.ns}/report",method="schedule"\\} 2\\b`,
      ).test(await registry.metrics()), { timeoutMs: 60_000, intervalMs: 500 });
      expect(Date.now()).to.be.below(run.at);
      const got = await runPods(s, 2, run.at);
      const nodes = new Map((await s.nodes()).map((n) => [n.metadata!.name!, n]));
      for (const p of got) {
        const node = nodes.get(p.spec!.nodeName!)!;
        expect(isNodeReady(node), `${p.spec!.nodeName} Ready`).to.equal(true);
        const readyAt = new Date(node.status!.conditions!.find((c) => c.type === 'Ready')!.lastTransitionTime!).getTime();
        const createdAt = new Date(p.metadata!.creationTimestamp!).getTime();
        const scheduledAt = new Date(p.status!.conditions!.find((c) => c.type === 'PodScheduled')!.lastTransitionTime!).getTime();
        // Node Ready before the job fired (second precision on both sides).
        expect(readyAt, `node ${node.metadata!.name} Ready before the run at ${new Date(run.at).toISOString()}`).to.be.at.most(run.at);
        // Bound at once: no wait for a node (a boot is 10 s here).
        expect(scheduledAt - createdAt, `pod ${p.metadata!.name} waited`).to.be.at.most(2000);
        console.log(`      pod ${p.metadata!.name}: node Ready ${(run.at - readyAt) / 1000} s before the run, scheduled ${(scheduledAt - createdAt) / 1000} s after creation`);
        // Marked for the CronJob, so the extender steers its pods there.
        expect(node.metadata!.annotations?.['headroom.dev/provisioned-for']).to.equal(`CronJob/${s.ns}/report`);
      }
      const events = await client.get<{ items: Array<{ reason: string; regarding: { kind: string; name: string } }> }>(
        `/apis/events.k8s.io/v1/namespaces/${s.ns}/events`,
      );
      expect(events.items.some((e) => e.reason === 'PredictedCapacityAdded' && e.regarding.kind === 'CronJob' && e.regarding.name === 'report')).to.equal(true);
    } catch (err) {
      console.log(s.logs.join('\n'));
      throw err;
    } finally {
      await s.cleanup();
    }
  });

  it('holds the NodePool\'s cost cap: capacity held for predicted pods costs at most maxExtraCostPerHour', async function () {
    this.timeout(240_000);
    // Nodes cost 1/h; the cap pays for one of the three nodes the run needs.
    const s = await scenario('pred-cap', { enabled: true, maxExtraCostPerHour: '1' });
    try {
      const registry = new Registry();
      await s.startController({ registry });
      const run = runAtLeast(45_000);
      await s.cronJob('batch', run.schedule, 3, '3');
      let most = 0;
      while (Date.now() < run.at - 2000) {
        most = Math.max(most, await s.replicas());
        await new Promise((r) => setTimeout(r, 500));
      }
      console.log(`      most nodes held before the run: ${most} (cap: 1 node at 1/h)`);
      expect(most, 'nodes held for the forecast before the run').to.equal(1);
      expect(await registry.metrics()).to.match(new RegExp(`headroom_prediction_predicted_cost_per_hour\\{nodepool="${s.ns}"\\} 0\\.75\\b`));
      // The run itself is real demand (kwok completes Job pods at once, so they share the node).
      await runPods(s, 3, run.at);
    } catch (err) {
      console.log(s.logs.join('\n'));
      throw err;
    } finally {
      await s.cleanup();
    }
  });

  it('keeps the learned model across a controller restart, weekly profile included (ConfigMap)', async function () {
    this.timeout(180_000);
    const s = await scenario('pred-mem', { enabled: true });
    try {
      // Eight days of a daily and weekly pattern for one Deployment, learned before.
      const key = `Deployment/${s.ns}/web`;
      const end = Date.now();
      let seeded = emptyPredictionState();
      for (let t = end - 8 * 86_400_000; t <= end - 60_000; t += 60_000) {
        const day = new Date(t).getUTCDay();
        const hour = new Date(t).getUTCHours();
        seeded = observe(seeded, { at: t, workloads: [{ key, count: (day === 0 || day === 6 ? 1 : 4) + (hour >= 8 && hour < 18 ? 6 : 0) }] });
      }
      const weeklySlots = seeded.workloads[key]!.weekly.filter((x) => x !== null).length;
      expect(weeklySlots).to.be.greaterThan(1000);
      await new ConfigMapStateStore(client, s.ns, 'headroom-prediction').save(serializePredictionState(seeded), new Date());

      const a = await s.startController({ prediction: { defaultBootHorizonMs: BOOT_MS, intervalMs: 500, saveIntervalMs: 1_000, state: { namespace: s.ns, name: 'headroom-prediction' } } });
      await eventually('controller A has passed with the loaded model', async () => (a.prediction?.state().workloads[key]?.lastAt ?? 0) > end);
      const loaded = a.prediction!.state().workloads[key]!;
      expect(loaded.since).to.equal(seeded.workloads[key]!.since);
      // Wait for a periodic save after the load, then die without a graceful stop.
      const savedAfter = Date.now();
      await eventually('a periodic save', async () => {
        const head = await client.get<{ metadata: { annotations?: Record<string, string> } }>(`/api/v1/namespaces/${s.ns}/configmaps/headroom-prediction`);
        return Date.parse(head.metadata.annotations?.['headroom.dev/state-saved-at'] ?? '') >= savedAfter;
      }, { timeoutMs: 20_000, intervalMs: 250 });
      a.kill();

      const b = await s.startController();
      await eventually('controller B loaded the model', async () => b.prediction?.state().workloads[key] !== undefined);
      const reloaded = b.prediction!.state().workloads[key]!;
      expect(reloaded.since, 'the history starts where it started, not at the restart').to.equal(seeded.workloads[key]!.since);
      expect(reloaded.weekly.filter((x) => x !== null).length).to.be.at.least(weeklySlots);
      expect(s.logs.some((l) => /prediction: model loaded \(1 workloads/.test(l))).to.equal(true);
    } catch (err) {
      console.log(s.logs.join('\n'));
      throw err;
    } finally {
      await s.cleanup();
    }
  });
});
