import { join } from 'node:path';
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import { expect } from 'chai';
import { ConfigMapStateStore } from '../../src/controller/model-store.js';
import { KubeClient } from '../../src/kube/kube-client.js';
import { serializePredictionState } from '../../src/prediction/state.js';
import { Random } from '../../src/sim/random.js';
import { type ControlPlane, startControlPlane } from '../harness/control-plane.js';
import { MachineFixture, fixtureNodeSelector } from '../harness/machine-fixture.js';
import { freePort } from '../harness/ports.js';
import { ManagedProcess, makeTempDir, removeTempDir } from '../harness/process.js';
import { eventually, isNodeReady } from '../harness/wait.js';
import { machineDeployment } from './controller-objects.js';
import { type DemandProcess, HPA_SYNC_MS, dayOf, replicaSeries, seededHistory } from './hpa-demand.js';

/**
 * Prediction beyond CronJobs, on the real control plane (issue 24 item 4): a
 * Deployment's replicas written every 15 s the way an HPA writes them, for a noisy
 * rise from a few pods to about 30 and back (hpa-demand.ts), while kwok nodes take
 * 45-60 s from Machine to Ready. The same run twice, side by side, each on its own
 * control plane (etcd, kube-apiserver, kube-scheduler, kube-controller-manager,
 * kwok) with the `headroom controller` process at its defaults: once with the
 * NodePool's spec.prediction.enabled true, once false. Both load the same model,
 * learnt from eight earlier days of the same demand process (other draws of its
 * noise, peak and timing), saved in the controller's ConfigMap store, so five
 * minutes of the ninth day are enough. What is measured is what a user waits on:
 * pending pod-seconds, from each pod's creation to its PodScheduled time.
 *
 * The target is issue 24's (prediction on <= 30% of off), asserted. History: on main the
 * ratio was 1.003, 1.008 and 0.761 when the test landed; 0.407-0.548 once a daily
 * profile's rise needed no sustain. Where the episode fell in the profiles' ten-minute
 * UTC slots decided how much of the rise was forecast: a slot holds the highest count of
 * its ten minutes, and interpolating between slots spread this two-minute rise over twenty.
 * Since ADR 0151 a step between slots larger than the jitter is held in full from the
 * start of its slot: 0.003 and 0.000 in the first runs after (episodes at 7:59 and 5:23
 * into their slots), holding 10-11 nodes at the peak against 7 without prediction.
 */

const DEMAND: DemandProcess = {
  seed: 24,
  basePods: 3,
  peakPods: 30,
  episodeMs: 270_000,
  noise: 0.04,
  minReplicas: 3,
  maxReplicas: 40,
};
/** The HPA's syncs played: 30 s before the nominal start (a day may start early) to 300 s after. */
const PLAY_FROM_MS = -30_000;
const PLAY_TO_MS = 300_000;
const BOOT_MIN_MS = 45_000;
const BOOT_MAX_MS = 60_000;
/** From saving the model to the episode: the controller's start, election and first passes. */
const LEAD_MS = 60_000;
const HISTORY_DAYS = 8;
const TARGET_RATIO = 0.3;
const NS = 'shop';
const STATE_NS = 'headroom';
const KWOK_TOLERATION = { key: 'kwok.x-k8s.io/node', operator: 'Exists', effect: 'NoSchedule' };

interface PodTimes {
  name: string;
  created: number;
  scheduled?: number;
  gone?: number;
}

interface ArmResult {
  prediction: boolean;
  pendingPodSeconds: number;
  pods: number;
  waitedPods: number;
  longestWaitS: number;
  peakReplicas: number;
  peakNodes: number;
  startLateMs: number;
  /** The episode's nominal start (the seasonal profiles' slots are fixed in UTC). */
  episodeAt: number;
  wallS: number;
  timeline: string;
  log: string;
}

/**
 * What the controller says it forecasts and holds (its /metrics, as an operator sees
 * them): ` f<forecast pods>(<method>) h<predicted pods held>`, empty when it exports none.
 */
async function predictionMetrics(port: number): Promise<string> {
  const text = await fetch(`http://127.0.0.1:${port}/metrics`).then((r) => r.text(), () => '');
  const f = new RegExp(`^headroom_prediction_forecast_pods\\{workload="Deployment/${NS}/web",method="([^"]+)"\\} (\\S+)$`, 'm').exec(text);
  const h = /^headroom_prediction_predicted_pods\{nodepool="workers"\} (\S+)$/m.exec(text);
  return `${f ? ` f${Number(f[2]).toFixed(1)}(${f[1]})` : ''}${h ? ` h${h[1]}` : ''}`;
}

const ms = (t: string | Date | undefined) => (t === undefined ? undefined : new Date(t).getTime());
const sleepUntil = (t: number) => new Promise((r) => setTimeout(r, Math.max(0, t - Date.now())));

async function runArm(prediction: boolean, logDir: string): Promise<ArmResult> {
  const began = Date.now();
  const name = prediction ? 'on' : 'off';
  let cp: ControlPlane | undefined;
  let fixture: MachineFixture | undefined;
  let controller: ManagedProcess | undefined;
  let client: KubeClient | undefined;
  try {
    cp = await startControlPlane({ scheduler: true, controllerManager: true, kwok: true });
    const kc = cp.kubeConfig();
    client = new KubeClient(kc);
    const c = client;
    for (const ns of [NS, STATE_NS]) await c.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } } });
    // The cluster runs its baseline on one node booted before the test; every node after
    // it takes 45-60 s, the same seeded sequence of boot times in both runs.
    const boots = Random.stream(DEMAND.seed, 'boot');
    let machines = 0;
    fixture = await MachineFixture.start({
      kubeConfig: kc, namespace: NS, intervalMs: 200,
      bootDelayMs: () => (machines++ === 0 ? 0 : boots.uniform(BOOT_MIN_MS, BOOT_MAX_MS)),
    });
    await c.request('POST', `/apis/cluster.x-k8s.io/v1beta2/namespaces/${NS}/machinedeployments`, {
      body: machineDeployment({
        namespace: NS, name: 'workers', replicas: 1, min: 1, max: 20, cpu: '4', memory: '16Gi',
        labels: { pool: 'workers' },
        annotations: { 'headroom.dev/price': '1', 'capacity.cluster-autoscaler.kubernetes.io/labels': 'pool=workers' },
      }),
    });
    await c.request('POST', '/apis/headroom.dev/v1alpha1/nodepools', {
      body: {
        apiVersion: 'headroom.dev/v1alpha1', kind: 'NodePool', metadata: { name: 'workers' },
        spec: { nodeGroupSelector: { matchLabels: { pool: 'workers' } }, prediction: { enabled: prediction } },
      },
    });
    await c.request('POST', `/apis/apps/v1/namespaces/${NS}/deployments`, {
      body: {
        apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: NS },
        spec: {
          replicas: DEMAND.minReplicas,
          selector: { matchLabels: { app: 'web' } },
          template: {
            metadata: { labels: { app: 'web' } },
            spec: {
              tolerations: [KWOK_TOLERATION], nodeSelector: { pool: 'workers' },
              containers: [{ name: 'web', image: 'registry.k8s.io/pause:3.10', resources: { requests: { cpu: '1', memory: '1Gi' } } }],
            },
          },
        },
      },
    });
    const pods = async () => (await c.get<{ items: V1Pod[] }>(`/api/v1/namespaces/${NS}/pods`)).items;
    const nodes = async () => (await c.get<{ items: V1Node[] }>('/api/v1/nodes', { labelSelector: fixtureNodeSelector({ namespace: NS }) })).items;
    await eventually(`${name}: the baseline's ${DEMAND.minReplicas} pods Running`, async () => {
      const items = await pods();
      return items.length === DEMAND.minReplicas && items.every((p) => p.status?.phase === 'Running');
    }, { timeoutMs: 120_000, intervalMs: 500 });

    // The model of the eight days before, as the controller's own store keeps it.
    const seededAt = Date.now();
    const episodeAt = seededAt + LEAD_MS;
    const state = seededHistory(DEMAND, `Deployment/${NS}/web`, episodeAt, seededAt, HISTORY_DAYS);
    await new ConfigMapStateStore(c, STATE_NS, 'headroom-prediction').save(serializePredictionState(state), new Date(seededAt));

    const port = await freePort();
    controller = ManagedProcess.start(`headroom-controller-${name}`, process.execPath, [
      '--import', 'tsx', join(process.cwd(), 'test', 'integration', 'controller-cli-entry.ts'), 'controller',
      '--kubeconfig', cp.kubeconfigPath,
      '--namespace', NS,
      '--leader-elect', '--leader-election-namespace', STATE_NS,
      // What the operator knows of this cloud's boots until the controller has timed some.
      '--boot-horizon', '1m',
      '--metrics-address', `127.0.0.1:${port}`,
      '--log-format', 'text',
    ], { logFile: join(logDir, `controller-${name}.log`) });
    const proc = controller;
    await eventually(`${name}: the controller leads`, async () => {
      const res = await fetch(`http://127.0.0.1:${port}/metrics`).catch(() => undefined);
      return res?.status === 200 && /^headroom_leader 1$/m.test(await res.text());
    }, { timeoutMs: 90_000, intervalMs: 250 }).catch((err: Error) => { throw new Error(`${err.message}\n${proc.logTail()}`); });
    const startLateMs = Date.now() - episodeAt;

    // Every pod the episode creates, from creation to PodScheduled (or deletion while pending).
    const times = new Map<string, PodTimes>();
    let tracking = true;
    const track = (async () => {
      while (tracking) {
        const at = Date.now();
        const items = await pods().catch(() => undefined);
        if (items) {
          const seen = new Set<string>();
          for (const p of items) {
            const uid = p.metadata!.uid!;
            seen.add(uid);
            const created = ms(p.metadata!.creationTimestamp)!;
            if (created < episodeAt + PLAY_FROM_MS - 1000) continue;
            const rec = times.get(uid) ?? { name: p.metadata!.name!, created };
            times.set(uid, rec);
            if (rec.scheduled === undefined && p.spec?.nodeName) {
              const cond = p.status?.conditions?.find((x) => x.type === 'PodScheduled' && x.status === 'True');
              rec.scheduled = ms(cond?.lastTransitionTime) ?? at;
            }
            if (rec.scheduled === undefined && rec.gone === undefined && p.metadata!.deletionTimestamp) rec.gone = ms(p.metadata!.deletionTimestamp);
          }
          for (const [uid, rec] of times) if (!seen.has(uid) && rec.scheduled === undefined && rec.gone === undefined) rec.gone = at;
        }
        await new Promise((r) => setTimeout(r, 1000));
      }
    })();

    // The HPA: one write of the scale subresource per sync.
    const series = replicaSeries(DEMAND, dayOf(DEMAND, 0), PLAY_FROM_MS, PLAY_TO_MS, DEMAND.minReplicas);
    const timeline: string[] = [];
    let peakNodes = 0;
    for (const step of series) {
      await sleepUntil(episodeAt + step.at);
      // A connection reset on a loaded machine is retried, as the HPA's next sync would write again.
      for (let attempt = 1; ; attempt++) {
        try {
          await c.request('PATCH', `/apis/apps/v1/namespaces/${NS}/deployments/web/scale`, {
            body: { spec: { replicas: step.replicas } }, contentType: 'application/merge-patch+json',
          });
          break;
        } catch (err) {
          if (attempt >= 3 || !/socket hang up|ECONNRESET|ECONNREFUSED|ETIMEDOUT/.test(String(err))) throw err;
          await new Promise((r) => setTimeout(r, 500));
        }
      }
      // The timeline is for the failure message only: a failed look leaves a gap, not a failed run.
      const seen = await Promise.all([pods(), nodes(), predictionMetrics(port)]).catch(() => undefined);
      if (!seen) {
        timeline.push(`${step.at / 1000}s:${step.replicas}r/?`);
        continue;
      }
      const [items, ns, held] = seen;
      const ready = ns.filter(isNodeReady).length;
      peakNodes = Math.max(peakNodes, ns.length);
      timeline.push(`${step.at / 1000}s:${step.replicas}r/${items.filter((p) => !p.spec?.nodeName).length}p/${ready}n${held}`);
    }
    // The last pods of the fall find room (or are removed) within a boot at most.
    await eventually(`${name}: no pod pending after the episode`, async () => (await pods()).every((p) => p.spec?.nodeName || p.metadata?.deletionTimestamp), {
      timeoutMs: 90_000, intervalMs: 500,
    });
    tracking = false;
    await track;
    const end = Date.now();

    let pending = 0;
    let waited = 0;
    let longest = 0;
    for (const r of times.values()) {
      const wait = Math.max(0, ((r.scheduled ?? r.gone ?? end) - r.created) / 1000);
      pending += wait;
      longest = Math.max(longest, wait);
      if (wait > 5) waited++;
    }
    return {
      prediction, pendingPodSeconds: Math.round(pending), pods: times.size, waitedPods: waited, longestWaitS: Math.round(longest),
      peakReplicas: Math.max(...series.map((s) => s.replicas)), peakNodes, startLateMs, episodeAt,
      wallS: Math.round((Date.now() - began) / 1000), timeline: timeline.join(' | '), log: proc.logTail(),
    };
  } finally {
    await controller?.stop(10_000).catch(() => {});
    await fixture?.stop({ keepNodes: true }).catch(() => {});
    client?.close();
    await cp?.stop();
  }
}

describe('prediction on a real control plane: an HPA-driven Deployment (noisy rise and fall, kwok nodes booting in 45-60 s)', function () {
  let logDir: string;
  before(() => { logDir = makeTempDir('headroom-hpa-prediction-'); });
  after(() => removeTempDir(logDir));

  it(`waits at most ${TARGET_RATIO * 100}% of the pending pod-seconds with prediction on that it waits with prediction off (two control planes side by side)`, async function () {
    this.timeout(600_000);
    const began = Date.now();
    const [on, off] = await Promise.all([runArm(true, logDir), runArm(false, logDir)]);
    const ratio = off.pendingPodSeconds > 0 ? on.pendingPodSeconds / off.pendingPodSeconds : Infinity;
    for (const r of [on, off]) {
      console.log(`      prediction ${r.prediction ? 'on ' : 'off'}: ${r.pendingPodSeconds} pending pod-s, ${r.waitedPods}/${r.pods} pods waited > 5 s (longest ${r.longestWaitS} s), `
        + `peak ${r.peakReplicas} replicas / ${r.peakNodes} nodes, controller ready ${(-r.startLateMs / 1000).toFixed(0)} s before the episode `
        + `(${new Date(r.episodeAt).toISOString().slice(11, 19)} UTC), ${r.wallS} s`);
      console.log(`        ${r.timeline}`);
    }
    console.log(`      [measure] HPA-driven Deployment (seed ${DEMAND.seed}, boots ${BOOT_MIN_MS / 1000}-${BOOT_MAX_MS / 1000} s, syncs every ${HPA_SYNC_MS / 1000} s): `
      + `pending pod-s prediction on ${on.pendingPodSeconds}, off ${off.pendingPodSeconds}, ratio ${ratio.toFixed(3)} (target <= ${TARGET_RATIO}); wall ${((Date.now() - began) / 1000).toFixed(0)} s`);
    // The comparison means something only if the controllers were up before the rise and
    // the reactive run really waited for boots.
    expect(on.startLateMs, 'controller (prediction on) leading before the episode').to.be.below(0);
    expect(off.startLateMs, 'controller (prediction off) leading before the episode').to.be.below(0);
    expect(off.waitedPods, `pods that waited for a node without prediction\n${off.log}`).to.be.at.least(10);
    expect(ratio, `pending pod-s with prediction on / off (issue 24's target)\n${on.log}`).to.be.at.most(TARGET_RATIO);
  });
});
