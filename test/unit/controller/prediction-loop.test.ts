import type { V1Pod } from '@kubernetes/client-node';
import { expect } from 'chai';
import type { ClusterObjects } from '../../../src/cluster/objects.js';
import { emptyClusterObjects } from '../../../src/cluster/objects.js';
import type { ClusterStateSource } from '../../../src/cluster/state.js';
import type { ConfigMapStateStore } from '../../../src/controller/model-store.js';
import { PredictionLoop, poolSettings, withClusterSignals } from '../../../src/controller/prediction-loop.js';
import { emptyPredictionState, serializePredictionState } from '../../../src/prediction/state.js';
import type { PredictionInput } from '../../../src/prediction/predictor.js';
import { DemandIntake } from '../../../src/provisioning/demand-intake.js';
import type { Clock } from '../../../src/provisioning/clock.js';
import { toSchedulingPod } from '../../../src/scheduling/pod-demand.js';

function input(workloads: PredictionInput['workloads'], extra: Partial<PredictionInput> = {}): PredictionInput {
  return { now: 0, workloads, pools: [], ...extra };
}

function webPod(name: string): V1Pod {
  return {
    metadata: {
      name, namespace: 'ns', uid: name, labels: { app: 'web', 'pod-template-hash': 'h1' },
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-h1', uid: 'rs', controller: true }],
    },
    spec: { containers: [{ name: 'c', resources: { requests: { cpu: '1' } } }] },
    status: { phase: 'Pending' },
  };
}

describe('prediction loop (controller shell)', () => {
  it('reads each NodePool\'s prediction block; absent blocks and pool-less groups get the defaults (on), invalid pools are disabled', () => {
    const settingsOf = poolSettings(([
      { apiVersion: 'headroom.dev/v1alpha1', kind: 'NodePool', metadata: { name: 'on' }, spec: { nodeGroupSelector: {}, prediction: { enabled: true, quantile: 0.95, maxPredictedNodes: 2 } } },
      { apiVersion: 'headroom.dev/v1alpha1', kind: 'NodePool', metadata: { name: 'plain' }, spec: { nodeGroupSelector: {} } },
      { apiVersion: 'headroom.dev/v1alpha1', kind: 'NodePool', metadata: { name: 'bad' }, spec: { nodeGroupSelector: {}, prediction: { quantile: 7 } } },
    ]) as never);
    expect(settingsOf('on')).to.deep.equal({ enabled: true, quantile: 0.95, maxSparePercent: 10, maxPredictedNodes: 2 });
    expect(settingsOf('plain')).to.deep.equal({ enabled: true, quantile: 0.9, maxSparePercent: 10 });
    expect(settingsOf('bad').enabled).to.equal(false);
    expect(settingsOf(undefined)).to.deep.equal({ enabled: true, quantile: 0.9, maxSparePercent: 10 });
  });

  it('adds rollouts as pods coming (the larger of HPA and rollout), and honours the opt-out on the workload object', () => {
    const objects: ClusterObjects = {
      ...emptyClusterObjects(),
      deployments: [
        { metadata: { name: 'web', namespace: 'ns', generation: 1 }, spec: { replicas: 10 }, status: { replicas: 4, updatedReplicas: 10, observedGeneration: 1 } },
        { metadata: { name: 'api', namespace: 'ns', annotations: { 'headroom.dev/prediction': 'disabled' } }, spec: { replicas: 2 }, status: { replicas: 2, updatedReplicas: 2 } },
      ] as never,
    };
    const out = withClusterSignals(input(
      [{ key: 'Deployment/ns/web', count: 4, optOut: false }, { key: 'Deployment/ns/api', count: 2, optOut: false }],
      { hpas: [{ key: 'Deployment/ns/web', current: 4, desired: 6 }] },
    ), objects, new Map(), new Map());
    expect(out.hpas).to.deep.equal([{ key: 'Deployment/ns/web', current: 4, desired: 10 }]);
    expect(out.workloads.map((w) => [w.key, w.optOut])).to.deep.equal([['Deployment/ns/web', false], ['Deployment/ns/api', true]]);
  });

  it('counts webhook arrivals the pod count does not show yet towards the step\'s peak', () => {
    const w = [{ key: 'Deployment/ns/web', count: 5, optOut: false }];
    // 2 -> 5 pods listed, 6 admitted: three are not listed yet (or already gone again).
    const out = withClusterSignals(input(w), emptyClusterObjects(), new Map([['Deployment/ns/web', 6]]), new Map([['Deployment/ns/web', 2]]));
    expect(out.workloads[0]!.count).to.equal(8);
    // Arrivals already visible add nothing.
    const same = withClusterSignals(input(w), emptyClusterObjects(), new Map([['Deployment/ns/web', 3]]), new Map([['Deployment/ns/web', 2]]));
    expect(same.workloads[0]!.count).to.equal(5);
  });

  it('drains the demand intake each pass and folds the counts into the model; leaves it alone when not synced', () => {
    let synced = false;
    const objects: ClusterObjects = { ...emptyClusterObjects(), pods: [webPod('a'), webPod('b')] };
    const source: ClusterStateSource = { objects: () => objects, synced: () => synced, onChange: () => () => {} };
    const clock: Clock = { now: () => 1_000_000, setTimer: () => () => {} };
    const intake = new DemandIntake();
    for (const name of ['a', 'b', 'c']) intake.record({ source: 'webhook', observedAt: 0, pod: toSchedulingPod(webPod(name)) });
    const loop = new PredictionLoop({ state: source, clock, intake, log: () => {} }, { defaultBootHorizonMs: 60_000 });
    expect(loop.pass()).to.equal(undefined);
    expect(intake.size).to.equal(3);
    synced = true;
    const pass = loop.pass()!;
    expect(intake.size).to.equal(0);
    // Two pods listed, three admitted by the webhook: the step's peak is 3.
    expect(pass.actual.get('Deployment/ns/web')).to.equal(3);
    expect(loop.state().workloads['Deployment/ns/web']?.stepMax).to.equal(3);
    expect(loop.pods()).to.deep.equal([]);
  });

  it('loads the saved model on start, saves every saveIntervalMs, and never saves once the term has ended', async () => {
    let now = 1_000_000;
    const timers: Array<{ at: number; fn: () => void }> = [];
    const clock: Clock = { now: () => now, setTimer: (ms, fn) => { const t = { at: now + ms, fn }; timers.push(t); return () => { timers.splice(timers.indexOf(t), 1); }; } };
    const advance = (ms: number) => {
      now += ms;
      for (let t = timers.find((x) => x.at <= now); t; t = timers.find((x) => x.at <= now)) {
        timers.splice(timers.indexOf(t), 1);
        t.fn();
      }
    };
    const seeded = emptyPredictionState();
    seeded.boot['MachineDeployment/capi/md'] = { samples: [{ machine: 'm1', ms: 90_000 }] };
    const saved: string[] = [];
    const store = {
      load: async () => ({ text: serializePredictionState(seeded), savedAt: 'then' }),
      save: async (text: string) => { saved.push(text); return { parts: 1, jsonBytes: text.length, gzipBytes: 1 }; },
    } as unknown as ConfigMapStateStore;
    const term = new AbortController();
    const objects: ClusterObjects = { ...emptyClusterObjects(), pods: [webPod('a')] };
    const logs: string[] = [];
    const loop = new PredictionLoop(
      { state: { objects: () => objects, synced: () => true, onChange: () => () => {} }, clock, store, signal: term.signal, log: (m) => logs.push(m) },
      { defaultBootHorizonMs: 60_000, intervalMs: 10_000, saveIntervalMs: 30_000 },
    );
    await loop.start();
    expect(loop.state().boot['MachineDeployment/capi/md']).to.deep.equal(seeded.boot['MachineDeployment/capi/md']);
    advance(0);
    advance(10_000);
    advance(10_000);
    expect(saved).to.have.length(0);
    advance(10_000);
    await new Promise((r) => setImmediate(r));
    expect(saved).to.have.length(1);
    expect(JSON.parse(saved[0]!).workloads['Deployment/ns/web']).to.not.equal(undefined);
    term.abort();
    await loop.save();
    advance(40_000);
    await loop.stop();
    expect(saved, 'nothing written after the term ended').to.have.length(1);
    expect(logs.some((l) => /model loaded \(0 workloads, saved then\)/.test(l))).to.equal(true);
  });

  it('starts cold, saying why, when the saved model cannot be read', async () => {
    const logs: string[] = [];
    const store = { load: async () => ({ text: '{"version": 2}' }) } as unknown as ConfigMapStateStore;
    const loop = new PredictionLoop({
      state: { objects: emptyClusterObjects, synced: () => true, onChange: () => () => {} },
      clock: { now: () => 0, setTimer: () => () => {} }, store, log: (m) => logs.push(m),
    }, { defaultBootHorizonMs: 60_000 });
    await loop.start();
    await loop.stop({ save: false });
    expect(logs).to.deep.equal(['prediction: prediction state: not a version 1 state; starting cold']);
    expect(loop.state()).to.deep.equal(emptyPredictionState());
  });
});
