import { expect } from 'chai';
import { loadBuiltinTrace } from '../../../src/sim/builtin.js';
import { POLICY_FACTORIES, simulationSnapshot } from '../../../src/sim/policies.js';
import type { PolicyFactory } from '../../../src/sim/policy.js';
import type { PolicyName, PolicyRun } from '../../../src/sim/result.js';
import { runTrace } from '../../../src/sim/run.js';
import type { Trace } from '../../../src/sim/trace.js';
import { group, podTemplate, trace } from './fixtures.js';

async function run(t: Trace, name: PolicyName, seed = 1, factory: PolicyFactory = POLICY_FACTORIES[name]): Promise<PolicyRun> {
  const r = await runTrace(t, { seed, policies: [{ name, factory }], buildSnapshot: simulationSnapshot });
  return r.policies[name]!;
}

/** A 40-minute slice of the noise trace: short enough for a unit test, random enough to tell seeds apart. */
function shortNoise(): Trace {
  const t = loadBuiltinTrace('noise');
  return { ...t, duration: 40 * 60_000 };
}

describe('simulation', function () {
  this.timeout(60_000);

  it('is deterministic for a seed and differs across seeds', async () => {
    const t = shortNoise();
    const a = await runTrace(t, { seed: 7, policies: (['reactive', 'periodic'] as const).map((name) => ({ name, factory: POLICY_FACTORIES[name] })), buildSnapshot: simulationSnapshot });
    const b = await runTrace(t, { seed: 7, policies: (['reactive', 'periodic'] as const).map((name) => ({ name, factory: POLICY_FACTORIES[name] })), buildSnapshot: simulationSnapshot });
    for (const p of ['reactive', 'periodic'] as const) {
      expect(b.policies[p]!.summary).to.deep.equal(a.policies[p]!.summary);
      expect(b.policies[p]!.series).to.deep.equal(a.policies[p]!.series);
      expect(b.policies[p]!.actions).to.deep.equal(a.policies[p]!.actions);
    }
    const c = await runTrace(t, { seed: 8, policies: [{ name: 'reactive', factory: POLICY_FACTORIES.reactive }], buildSnapshot: simulationSnapshot });
    expect(c.policies.reactive!.series.pending).to.not.deep.equal(a.policies.reactive!.series.pending);
  });

  it('reactive: closes a batch 1 s after the last new pod, packs FFD, and removes empty nodes from 30 s after they empty, one per pass', async () => {
    const t = trace('burst', '30m', [group({ name: 'md', cpu: '4', memory: '16Gi', price: '0.2', boot: '60s' })], [{
      kind: 'Deployment', name: 'web', template: podTemplate('web', '1', '1Gi'),
      replicas: { points: [{ at: '0s', replicas: 0 }, { at: '10s', replicas: 10 }, { at: '10m', replicas: 0 }], interpolation: 'step', every: '5s' },
    }]);
    const r = await run(t, 'reactive');
    const up = r.actions.filter((a) => a.to > a.from);
    expect(up).to.have.length(1);
    expect(up[0]!.at).to.equal(11);
    expect(up[0]!.to).to.equal(3); // 10 pods x 1 cpu on 4-cpu nodes
    expect(r.summary.pendingSeconds.max).to.equal(61); // batch (1 s) + boot (60 s)
    expect(r.summary.pendingPodSeconds).to.equal(610); // all ten waited 61 s
    expect(r.summary.waitedPods).to.equal(10);
    const downs = r.actions.filter((a) => a.to < a.from);
    expect(downs).to.have.length(3);
    // The Disruptor's timing: seen empty within 1 s, 30 s consolidateAfter, a pass every 10 s,
    // 2 s between taint and removal; Karpenter's default 10% budget lets one of the three go per pass.
    for (const d of downs) expect(d.at).to.be.within(600 + 30, 600 + 30 + 3 * 10 + 3);
    // Machines are paid from creation (11 s) to deletion; Ready from 71 s; 10 of 12 cpus
    // requested from 71 s until the pods go at 600 s.
    const paid = downs.reduce((sum, d) => sum + (d.at - 11), 0);
    expect(r.summary.nodeHours).to.be.closeTo(paid / 3600, 0.006);
    expect(r.summary.cost).to.be.closeTo((0.2 * paid) / 3600, 0.006);
    const readyCpuSeconds = downs.reduce((sum, d) => sum + 4 * (d.at - 71), 0);
    expect(r.summary.utilization.cpu).to.be.closeTo((10 * (600 - 71)) / readyCpuSeconds, 0.002);
    expect(r.summary.peakNodes).to.equal(3);
    expect(r.summary.scaleActions).to.equal(4);
    // The cost floor: 10 cpu of requests from 10 s to 600 s, in fractional 4-cpu nodes at 0.2/h (2.5 nodes), no boot.
    expect(r.summary.costFloor).to.be.closeTo((2.5 * 0.2 * 590) / 3600, 0.006);
    expect(r.summary.costFloor).to.be.below(r.summary.cost);
  });

  it('periodic: scales up on the 10 s scan, one group chosen by least waste, scales down only after 10 minutes under 50%', async () => {
    // 3-cpu pods: a 4-cpu node wastes 25%, an 8-cpu node holds two and wastes 25% too, but a
    // 6-cpu node holds two and wastes nothing: least-waste picks it although it is not the cheapest.
    const t = trace('waste', '1h', [
      group({ name: 'four', cpu: '4', memory: '16Gi', price: '0.1' }),
      group({ name: 'six', cpu: '6', memory: '12Gi', price: '0.5' }),
    ], [{
      kind: 'Deployment', name: 'app', template: podTemplate('app', '3', '6Gi'),
      replicas: { points: [{ at: '0s', replicas: 0 }, { at: '15s', replicas: 4 }, { at: '20m', replicas: 1 }], interpolation: 'step', every: '5s' },
    }]);
    const r = await run(t, 'periodic');
    const up = r.actions.filter((a) => a.to > a.from);
    expect(up).to.have.length(1);
    expect(up[0]!.at).to.equal(20);
    expect(up[0]!.group).to.equal('MachineDeployment/default/six');
    expect(up[0]!.to).to.equal(2);
    // At 20 min one pod is left on each node: one node is at 50% cpu (not under), the other
    // empty -> removed after 10 minutes unneeded; the other stays (exactly 50% is not under 50%).
    const downs = r.actions.filter((a) => a.to < a.from);
    expect(downs).to.have.length(1);
    expect(downs[0]!.at).to.be.within(1800, 1810);
  });

  it('headroom: the controller Provisioner scales a group up for pending pods', async () => {
    const t = trace('hr', '20m', [
      group({ name: 'small', cpu: '2', memory: '8Gi', price: '0.1' }),
      group({ name: 'big', cpu: '16', memory: '64Gi', price: '0.8' }),
    ], [{ kind: 'Deployment', name: 'web', template: podTemplate('web', '500m', '1Gi'), replicas: { points: [{ at: '0s', replicas: 0 }, { at: '30s', replicas: 20 }], interpolation: 'step', every: '10s' } }]);
    const r = await run(t, 'headroom');
    const up = r.actions.filter((a) => a.to > a.from);
    expect(up.length).to.be.greaterThan(0);
    expect(up[0]!.at).to.be.within(31, 41);
    // Every pod ran: pending time is batch window + boot, never the whole run.
    expect(r.summary.pendingSeconds.max).to.be.below(120);
    expect(r.summary.cost).to.be.greaterThan(0);
  });

  it('places pods only on nodes whose labels and taints they accept', async () => {
    const t = trace('constraints', '15m', [
      group({ name: 'general', cpu: '4', memory: '16Gi', price: '0.2', replicas: 2, min: 2 }),
      group({ name: 'gpu', cpu: '8', memory: '32Gi', price: '1', taints: 'gpu=true:NoSchedule', labels: { accel: 'gpu' } }),
    ], [
      { kind: 'Deployment', name: 'trainer', replicas: 2, template: podTemplate('trainer', '1', '1Gi', { nodeSelector: { accel: 'gpu' }, tolerations: [{ key: 'gpu', operator: 'Exists', effect: 'NoSchedule' }] }) },
      { kind: 'Deployment', name: 'web', replicas: 4, template: podTemplate('web', '1', '1Gi') },
    ]);
    const r = await run(t, 'reactive');
    // web fits the two general nodes at once; the trainers need a gpu node, which reactive adds.
    const up = r.actions.filter((a) => a.to > a.from);
    expect(up.map((a) => a.group)).to.deep.equal(['MachineDeployment/default/gpu']);
    expect(r.summary.pendingSeconds.p50).to.equal(0);
    expect(r.summary.pendingSeconds.max).to.equal(61);
  });

  it('honours required pod anti-affinity and topology spread as kube-scheduler does', async () => {
    const idle: PolicyFactory = () => ({ stop() {} });
    const antiAffinity = { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: { app: 'db' } } }] } };
    const zone = (z: string) => ({ 'topology.kubernetes.io/zone': z });
    const groups = [
      group({ name: 'a', cpu: '16', memory: '64Gi', price: '0.5', replicas: 1, min: 1, labels: zone('a') }),
      group({ name: 'b', cpu: '16', memory: '64Gi', price: '0.5', replicas: 1, min: 1, labels: zone('b'), taints: 'reserved=true:NoSchedule' }),
    ];
    // Three db replicas, at most one per node: one node (b is tainted) takes one, two stay pending.
    const db = await run(trace('anti', '20m', groups, [
      { kind: 'Deployment', name: 'db', replicas: 3, template: podTemplate('db', '500m', '1Gi', { affinity: antiAffinity }) },
    ]), 'headroom', 1, idle);
    expect(db.summary.pendingSeconds.p50).to.equal(1200);
    expect(db.summary.pendingSeconds.p95).to.equal(1200);
    // Zone spread, maxSkew 1: the tainted zone-b node still counts as a domain (nodeTaintsPolicy
    // Ignore, the default), so zone a may only run one more pod than zone b's zero.
    const spread = (policy?: string) => [{ maxSkew: 1, topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'DoNotSchedule', labelSelector: { matchLabels: { app: 'web' } }, ...(policy ? { nodeTaintsPolicy: policy } : {}) }];
    const ignore = await run(trace('spread', '20m', groups, [
      { kind: 'Deployment', name: 'web', replicas: 4, template: podTemplate('web', '500m', '1Gi', { topologySpreadConstraints: spread() }) },
    ]), 'headroom', 1, idle);
    expect(ignore.summary.pendingSeconds.p50).to.equal(1200); // 3 of 4 pending to the end
    expect(ignore.summary.pendingSeconds.p95).to.equal(1200);
    const honour = await run(trace('spread', '20m', groups, [
      { kind: 'Deployment', name: 'web', replicas: 4, template: podTemplate('web', '500m', '1Gi', { topologySpreadConstraints: spread('Honor') }) },
    ]), 'headroom', 1, idle);
    expect(honour.summary.pendingSeconds.max).to.equal(0);
  });

  describe('headroom with prediction', () => {
    it('has nodes Ready before a CronJob fires (learned from its schedule), and releases them after', async () => {
      const t = trace('cron', '3h', [group({ name: 'md', cpu: '4', memory: '16Gi', price: '0.2', boot: '60s' })], [{
        kind: 'CronJob', name: 'batch', schedule: '10,47 * * * *', completions: 8, parallelism: 8, duration: '5m',
        template: podTemplate('batch', '1', '1Gi'),
      }]);
      const reactive = await run(t, 'reactive');
      const headroom = await run(t, 'headroom');
      expect(reactive.summary.waitedPods).to.equal(6 * 8);
      expect(headroom.summary.waitedPods).to.equal(0);
      expect(headroom.summary.pendingPodSeconds).to.be.lessThan(1);
      // Scaled up ahead of each run (at most the horizon, 3 min boot default + 1 min lead), and down between runs.
      const ups = headroom.actions.filter((a) => a.to > a.from).map((a) => a.at);
      for (const run of [10, 47, 70, 107, 130, 167].map((m) => m * 60)) {
        expect(ups.some((at) => at < run && at >= run - 4 * 60 - 15), `scale-up before ${run}`).to.equal(true);
      }
      expect(headroom.actions.filter((a) => a.to < a.from).length).to.be.at.least(5);
      expect(headroom.summary.cost).to.be.lessThan(reactive.summary.cost * 1.5);
      expect(headroom.forecast?.forecast.some((f) => f !== null && f > 0)).to.equal(true);
    });

    it('forecasts a steady rise from the pods it sees: most pods never wait', async () => {
      const t = trace('rise', '3h', [group({ name: 'md', cpu: '4', memory: '16Gi', price: '0.2', boot: '90s' })], [{
        kind: 'Deployment', name: 'web', template: podTemplate('web', '500m', '1Gi'),
        replicas: { points: [{ at: '0s', replicas: 10 }, { at: '3h', replicas: 370 }], interpolation: 'linear', every: '30s' },
      }]);
      const reactive = await run(t, 'reactive');
      const headroom = await run(t, 'headroom');
      expect(headroom.summary.pendingPodSeconds).to.be.lessThan(0.2 * reactive.summary.pendingPodSeconds);
      expect(headroom.summary.cost).to.be.lessThan(1.15 * reactive.summary.cost);
    });

    it('does not chase jitter: on the noise trace it costs no more than reactive', async () => {
      const t = { ...loadBuiltinTrace('noise'), duration: 90 * 60_000 };
      const reactive = await run(t, 'reactive');
      const headroom = await run(t, 'headroom');
      expect(headroom.summary.cost).to.be.at.most(1.05 * reactive.summary.cost);
      expect(headroom.summary.pendingPodSeconds).to.be.at.most(reactive.summary.pendingPodSeconds);
    });
  });
});
