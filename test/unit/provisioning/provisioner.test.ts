import { expect } from 'chai';
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import type { UnstructuredObject } from '../../../src/api/unstructured-object.js';
import type { ActionEvents, PodRef } from '../../../src/capi/action-events.js';
import type { BatchScaleResult, CapiActuator, MachineRef, NodeGroupRef, ScaleResult } from '../../../src/capi/actuator.js';
import type { GroupMemoryStore } from '../../../src/capi/group-memory.js';
import { emptyClusterObjects, type ClusterObjects } from '../../../src/cluster/objects.js';
import type { ClusterStateSource } from '../../../src/cluster/state.js';
import type { ClusterSnapshot } from '../../../src/cluster/snapshot.js';
import { solve as solvePlan } from '../../../src/packing/solve.js';
import type { CycleReport } from '../../../src/provisioning/cycle-report.js';
import { Provisioner } from '../../../src/provisioning/provisioner.js';
import { machineDeployment, pendingPod } from '../../integration/controller-objects.js';
import { ManualClock } from './manual-clock.js';
import { Writable } from 'node:stream';
import { createLogger, logTo } from '../../../src/cli/logger.js';

/** An in-memory cluster: the provisioner's view, and what the fake actuator writes to. */
class MemoryState implements ClusterStateSource {
  objs: ClusterObjects = emptyClusterObjects();
  private listeners = new Set<(k: keyof ClusterObjects) => void>();
  objects() { return this.objs; }
  synced() { return true; }
  onChange(fn: (k: keyof ClusterObjects) => void) { this.listeners.add(fn); return () => this.listeners.delete(fn); }
  update(kind: keyof ClusterObjects, fn: (o: ClusterObjects) => void) {
    const next = { ...this.objs, nodeGroups: this.objs.nodeGroups.map((g) => structuredClone(g)) };
    fn(next);
    this.objs = next;
    for (const l of this.listeners) l(kind);
  }
}

/** Writes replicas into MemoryState, clamped like the real one (max(current, to)). */
class MemoryActuator implements CapiActuator, ActionEvents {
  calls: Array<{ group: string; from: number; to: number; result: number }> = [];
  notified: PodRef[] = [];
  constructor(private state: MemoryState, private delayMs = 0) {}
  private find(g: NodeGroupRef) {
    return this.state.objs.nodeGroups.find((o) => o.kind === g.kind && o.metadata?.name === g.name && o.metadata?.namespace === g.namespace)!;
  }
  async getReplicas(g: NodeGroupRef) { return (this.find(g).spec as { replicas: number }).replicas; }
  async scaleTo(g: NodeGroupRef, from: number, to: number): Promise<ScaleResult> {
    if (this.delayMs) await new Promise((r) => setTimeout(r, this.delayMs));
    const o = this.find(g);
    const max = Number(o.metadata?.annotations?.['cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size']);
    const current = (o.spec as { replicas: number }).replicas;
    const target = Math.min(Math.max(current, to), max);
    this.calls.push({ group: g.name, from, to, result: target });
    if (target === current) return { replicas: current, written: false };
    this.state.update('nodeGroups', (objs) => {
      const m = objs.nodeGroups.find((x) => x.metadata?.name === g.name)!;
      (m.spec as { replicas: number }).replicas = target;
    });
    return { replicas: target, written: true };
  }
  async deleteMachine(): Promise<ScaleResult> { throw new Error('unused'); }
  async deleteMachines(): Promise<BatchScaleResult> { throw new Error('unused'); }
  async createMachine(): Promise<string> { throw new Error('unused'); }
  async deleteStandaloneMachine(_m: MachineRef): Promise<void> { throw new Error('unused'); }
  groupEvents: Array<{ group: string; type: string; reason: string; note: string }> = [];
  notifyGroup(g: NodeGroupRef, ev: { type: string; reason: string; note: string }) {
    this.groupEvents.push({ group: g.name, type: ev.type, reason: ev.reason, note: ev.note });
  }
  warnings: Array<{ pods: string[]; reason: string; note: string }> = [];
  notifyPods(pods: readonly PodRef[], ev?: { type: string; reason: string; note: string }) {
    if (ev?.type === 'Warning') this.warnings.push({ pods: pods.map((p) => p.name), reason: ev.reason, note: ev.note });
    else this.notified.push(...pods);
  }
}

function cluster(groups: UnstructuredObject[], pods: number, cpu = '1') {
  const s = new MemoryState();
  s.objs = {
    ...emptyClusterObjects(),
    nodeGroups: groups,
    pods: Array.from({ length: pods }, (_, i) => ({ ...pendingPod('default', `p${i}`, cpu), metadata: { name: `p${i}`, namespace: 'default', uid: `u${i}`, labels: { app: 'burst' } } }) as V1Pod),
  };
  return s;
}

/** The in-process solver as a SolveFn (which may be handed an AbortSignal, not SolveOptions). */
const solve = (s: ClusterSnapshot) => solvePlan(s);

describe('Provisioner (batch -> snapshot -> solve -> actuate)', () => {
  it('scales a MachineDeployment for pending pods once the batch window closes, with pod events', async () => {
    const clock = new ManualClock();
    const state = cluster([machineDeployment({ namespace: 'default', name: 'md', replicas: 0, min: 0, max: 10, cpu: '4', memory: '16Gi' })], 10);
    const act = new MemoryActuator(state);
    const reports: CycleReport[] = [];
    const p = new Provisioner({ state, actuator: act, events: act, clock, solve, onCycle: (r) => reports.push(r) }, { resyncMs: 0 });
    p.start();
    await clock.advance(999);
    expect(act.calls).to.deep.equal([]);
    await clock.advance(1);
    expect(act.calls).to.have.length(1);
    // 10 pods x 1 cpu on 4-cpu nodes (minus nothing): 3 nodes.
    expect(act.calls[0]).to.include({ group: 'md', from: 0 });
    const replicas = act.calls[0]!.result;
    expect(replicas).to.be.within(3, 4);
    expect(reports[0]!.pendingPods).to.equal(10);
    expect(act.notified.map((x) => x.name).sort()).to.have.length(10);
    await p.stop();
  });

  it('counts in-flight replicas: a restarted provisioner does not provision again', async () => {
    const clock = new ManualClock();
    const state = cluster([machineDeployment({ namespace: 'default', name: 'md', replicas: 0, min: 0, max: 10, cpu: '4', memory: '16Gi' })], 10);
    const first = new Provisioner({ state, actuator: new MemoryActuator(state), clock, solve }, { resyncMs: 0 });
    const r1 = await first.cycle();
    const after = r1.scaleUps[0]!.result!.replicas;
    // "Restart": a new provisioner and actuator on the same observed state (pods still pending, no nodes yet).
    const act2 = new MemoryActuator(state);
    const second = new Provisioner({ state, actuator: act2, clock, solve }, { resyncMs: 0 });
    const r2 = await second.cycle();
    expect(r2.pendingPods).to.equal(10);
    expect(r2.scaleUps).to.deep.equal([]);
    expect((state.objs.nodeGroups[0]!.spec as { replicas: number }).replicas).to.equal(after);
  });

  it('never exceeds max size across consecutive bursts', async () => {
    const clock = new ManualClock();
    const state = cluster([machineDeployment({ namespace: 'default', name: 'md', replicas: 0, min: 0, max: 3, cpu: '4', memory: '16Gi' })], 20);
    const act = new MemoryActuator(state);
    const p = new Provisioner({ state, actuator: act, events: act, clock, solve }, { resyncMs: 0 });
    for (let burst = 0; burst < 3; burst++) {
      state.update('pods', (o) => {
        o.pods = [...o.pods, ...Array.from({ length: 10 }, (_, i) => ({ ...pendingPod('default', `b${burst}-${i}`, '1'), metadata: { name: `b${burst}-${i}`, namespace: 'default', uid: `b${burst}-${i}` } }) as V1Pod)];
      });
      await p.cycle();
    }
    expect((state.objs.nodeGroups[0]!.spec as { replicas: number }).replicas).to.equal(3);
    expect(act.calls.every((c) => c.to <= 3)).to.equal(true);
  });

  it('explains pods no group can take with one NotTriggerScaleUp warning per pod (deduplicated)', async () => {
    const clock = new ManualClock();
    // 16-cpu pods on 4-cpu nodes: never fit.
    const state = cluster([machineDeployment({ namespace: 'default', name: 'md', replicas: 0, min: 0, max: 3, cpu: '4', memory: '16Gi' })], 2, '16');
    const act = new MemoryActuator(state);
    const p = new Provisioner({ state, actuator: act, events: act, clock, solve }, { resyncMs: 0 });
    const r = await p.cycle();
    expect(r.unschedulable).to.equal(2);
    expect(act.calls).to.deep.equal([]);
    expect(act.warnings).to.have.length(1);
    expect(act.warnings[0]!.pods.sort()).to.deep.equal(['p0', 'p1']);
    expect(act.warnings[0]!.reason).to.equal('NotTriggerScaleUp');
    expect(act.warnings[0]!.note).to.match(/didn't trigger scale-up: .+/);
    await p.cycle();
    expect(act.warnings).to.have.length(1);
  });

  it('skips when the state source is not synced or not ready', async () => {
    const clock = new ManualClock();
    const state = cluster([machineDeployment({ namespace: 'default', name: 'md', replicas: 0, min: 0, max: 3 })], 2);
    const act = new MemoryActuator(state);
    const p = new Provisioner({ state, actuator: act, events: act, clock, solve, ready: () => false });
    expect((await p.cycle()).skipped).to.equal('not-synced');
    expect(act.calls).to.deep.equal([]);
  });
});

const CHAOS = { key: 'chaos/unusable', value: 'true', effect: 'NoExecute' };
/** A Machine of MachineDeployment md with its Node, Ready since `readyAt`. */
function machineWithNode(state: MemoryState, name: string, readyAt: number, taints: Array<typeof CHAOS> = []) {
  state.update('nodes', (o) => {
    o.machines = [...o.machines, {
      apiVersion: 'cluster.x-k8s.io/v1beta2', kind: 'Machine',
      metadata: { name, namespace: 'default', labels: { 'cluster.x-k8s.io/deployment-name': 'md', 'cluster.x-k8s.io/cluster-name': 'test' } },
      spec: { clusterName: 'test' }, status: { nodeRef: { name } },
    }];
    o.nodes = [...o.nodes, {
      metadata: { name, creationTimestamp: new Date(readyAt), annotations: { 'cluster.x-k8s.io/machine': name, 'cluster.x-k8s.io/cluster-namespace': 'default' } },
      spec: { taints },
      status: { allocatable: { cpu: '4', memory: '16Gi', pods: '110' }, conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: new Date(readyAt) }] },
    } as V1Node];
  });
}

describe('Provisioner: a scale-up whose new nodes cannot take its pods backs the group off (runaway scale-up)', () => {
  const bind = (state: MemoryState, names: string[], node: string) => state.update('pods', (o) => {
    o.pods = o.pods.map((p) => (names.includes(p.metadata!.name!) ? { ...p, spec: { ...p.spec!, nodeName: node } } : p));
  });

  /**
   * One healthy node (full) and then every new node NoExecute-tainted, as Karpenter's
   * chaos suite does: the learned template drops the taint (the healthy node lacks
   * it), so on capacity alone every cycle would add another node for the same pods.
   */
  it('marks the group as not helping once its new Ready nodes take none of the pods, backs it off with an event, and recovers when a new node takes pods', async () => {
    const clock = new ManualClock();
    const state = cluster([machineDeployment({ namespace: 'default', name: 'md', replicas: 1, min: 1, max: 40, cpu: '4', memory: '16Gi' })], 4);
    machineWithNode(state, 'old', clock.now() - 600_000);
    state.update('pods', (o) => { o.pods = [...o.pods, { ...pendingPod('default', 'big', '4'), metadata: { name: 'big', namespace: 'default', uid: 'ubig' }, spec: { ...pendingPod('default', 'big', '4').spec, nodeName: 'old' } } as V1Pod]; });
    const act = new MemoryActuator(state);
    const reports: CycleReport[] = [];
    const p = new Provisioner({ state, actuator: act, events: act, clock, solve, onCycle: (r) => reports.push(r) }, { resyncMs: 0 });
    const r1 = await p.cycle();
    expect(r1.scaleUps.map((u) => [u.from, u.result?.replicas])).to.deep.equal([[1, 2]]);
    machineWithNode(state, 'new-1', clock.now() + 5000, [CHAOS]);

    await clock.advance(20_000);
    const waiting = await p.cycle();
    expect(waiting.ineffectiveScaleUps, 'within the settle time').to.equal(undefined);
    expect(waiting.scaleUps, 'nothing added while the new node settles').to.deep.equal([]);
    expect(waiting.held?.['MachineDeployment/default/md']).to.match(/new-1 .* Ready but cannot take the pods/);

    await clock.advance(20_000);
    const r2 = await p.cycle();
    expect(r2.scaleUps, 'the group backs off instead of adding a third node').to.deep.equal([]);
    expect(r2.ineffectiveScaleUps?.map((x) => [x.group, x.nodes, x.pending])).to.deep.equal([['MachineDeployment/default/md', ['new-1'], 4]]);
    expect(r2.ineffectiveScaleUps![0]!.reason).to.contain('chaos/unusable=true:NoExecute');
    expect(r2.ineffectiveScaleUps![0]!.until).to.equal(clock.now() + 300_000);
    expect(r2.held?.['MachineDeployment/default/md']).to.match(/backing off after a scale-up that did not help/);
    expect(act.groupEvents.filter((e) => e.reason === 'ScaleUpDidNotHelp').map((e) => [e.group, e.type])).to.deep.equal([['md', 'Warning']]);

    // Later cycles keep holding it and do not renew the back-off for the same scale-up.
    await clock.advance(60_000);
    const r3 = await p.cycle();
    expect(r3.scaleUps).to.deep.equal([]);
    expect(r3.ineffectiveScaleUps).to.equal(undefined);

    // The taint goes and the pods land on the new node: the group works again.
    state.update('nodes', (o) => { o.nodes = o.nodes.map((n) => (n.metadata?.name === 'new-1' ? { ...n, spec: { taints: [] } } : n)); });
    bind(state, ['p0', 'p1', 'p2', 'p3'], 'new-1');
    const r4 = await p.cycle();
    expect(r4.recoveredGroups).to.deep.equal(['MachineDeployment/default/md']);
    expect(act.groupEvents.at(-1)).to.include({ group: 'md', type: 'Normal', reason: 'ScaleUpHelped' });
    state.update('pods', (o) => { o.pods = [...o.pods, { ...pendingPod('default', 'later', '3'), metadata: { name: 'later', namespace: 'default', uid: 'ulater' } } as V1Pod]; });
    const r5 = await p.cycle();
    expect(r5.held, 'no longer held').to.equal(undefined);
    expect(r5.scaleUps.map((u) => [u.from, u.result?.replicas])).to.deep.equal([[2, 3]]);
  });

  it('a second scale-up that does not help doubles the back-off', async () => {
    const clock = new ManualClock();
    const state = cluster([machineDeployment({ namespace: 'default', name: 'md', replicas: 1, min: 1, max: 40, cpu: '4', memory: '16Gi' })], 4);
    machineWithNode(state, 'old', clock.now() - 600_000);
    state.update('pods', (o) => { o.pods = [...o.pods, { ...pendingPod('default', 'big', '4'), metadata: { name: 'big', namespace: 'default', uid: 'ubig' }, spec: { ...pendingPod('default', 'big', '4').spec, nodeName: 'old' } } as V1Pod]; });
    const act = new MemoryActuator(state);
    const p = new Provisioner({ state, actuator: act, events: act, clock, solve }, { resyncMs: 0, backoff: { initialMs: 60_000, maxMs: 600_000 } });
    await p.cycle();
    machineWithNode(state, 'new-1', clock.now(), [CHAOS]);
    await clock.advance(31_000);
    const first = await p.cycle();
    expect(first.ineffectiveScaleUps?.[0]?.until).to.equal(clock.now() + 60_000);
    await clock.advance(61_000);
    const again = await p.cycle();
    expect(again.scaleUps.map((u) => [u.from, u.result?.replicas]), 'tries again once the back-off ends').to.deep.equal([[2, 3]]);
    machineWithNode(state, 'new-2', clock.now(), [CHAOS]);
    await clock.advance(31_000);
    const second = await p.cycle();
    expect(second.ineffectiveScaleUps?.map((x) => x.nodes)).to.deep.equal([['new-2']]);
    expect(second.ineffectiveScaleUps?.[0]?.until).to.equal(clock.now() + 120_000);
  });
});

describe('Provisioner: the back-off and open scale-ups survive a restart (ADR 0120)', () => {
  const ANNOTATION = 'headroom.dev/scale-up-memory';
  /** GroupMemoryStore on MemoryState: the annotation on the group object, as KubeGroupMemory keeps it. */
  class MemoryGroupStore implements GroupMemoryStore {
    saves = 0;
    constructor(private state: MemoryState) {}
    async save(g: NodeGroupRef, value: string | null) {
      this.saves++;
      this.state.update('nodeGroups', (objs) => {
        const o = objs.nodeGroups.find((x) => x.kind === g.kind && x.metadata?.name === g.name && x.metadata?.namespace === g.namespace)!;
        const annotations = { ...o.metadata!.annotations };
        if (value === null) delete annotations[ANNOTATION];
        else annotations[ANNOTATION] = value;
        o.metadata = { ...o.metadata, annotations };
      });
    }
  }
  const annotation = (state: MemoryState) => state.objs.nodeGroups[0]!.metadata?.annotations?.[ANNOTATION];
  /** One full healthy node and 4 pending one-cpu pods: the template says a new node takes them. */
  function chaosCluster(clock: ManualClock) {
    const state = cluster([machineDeployment({ namespace: 'default', name: 'md', replicas: 1, min: 1, max: 40, cpu: '4', memory: '16Gi' })], 4);
    machineWithNode(state, 'old', clock.now() - 600_000);
    state.update('pods', (o) => { o.pods = [...o.pods, { ...pendingPod('default', 'big', '4'), metadata: { name: 'big', namespace: 'default', uid: 'ubig' }, spec: { ...pendingPod('default', 'big', '4').spec, nodeName: 'old' } } as V1Pod]; });
    return state;
  }

  it('a new leader judges the scale-up its predecessor wrote and adds no node for the same pods (the old code added a third)', async () => {
    const clock = new ManualClock();
    const state = chaosCluster(clock);
    const store = new MemoryGroupStore(state);
    const first = new Provisioner({ state, actuator: new MemoryActuator(state), clock, solve, memory: store }, { resyncMs: 0 });
    const r1 = await first.cycle();
    expect(r1.scaleUps.map((u) => [u.from, u.result?.replicas])).to.deep.equal([[1, 2]]);
    const kept = JSON.parse(annotation(state)!) as { scaleUps: Array<{ pods: string[]; nodesBefore: string[] }> };
    expect(kept.scaleUps.map((r) => [r.pods.length, r.nodesBefore]), 'stored before the write').to.deep.equal([[4, ['old']]]);
    // The first controller dies; its new node comes up unusable.
    machineWithNode(state, 'new-1', clock.now() + 5000, [CHAOS]);
    await clock.advance(20_000);
    const act2 = new MemoryActuator(state);
    const second = new Provisioner({ state, actuator: act2, events: act2, clock, solve, memory: new MemoryGroupStore(state) }, { resyncMs: 0 });
    const settling = await second.cycle();
    expect(settling.scaleUps, 'the new leader adds nothing while the new node settles').to.deep.equal([]);
    expect(settling.held?.['MachineDeployment/default/md']).to.match(/new-1 .* Ready but cannot take the pods/);
    await clock.advance(20_000);
    const judged = await second.cycle();
    expect(judged.scaleUps).to.deep.equal([]);
    expect(judged.ineffectiveScaleUps?.map((x) => [x.group, x.nodes])).to.deep.equal([['MachineDeployment/default/md', ['new-1']]]);
    expect(act2.calls, 'no scale-up written by the new leader').to.deep.equal([]);
    const backoff = (JSON.parse(annotation(state)!) as { backoff: { failures: number; until: number } }).backoff;
    expect(backoff).to.include({ failures: 1, until: clock.now() + 300_000 });
  });

  it('a back-off outlives the controller even when the useless node is gone, and the annotation goes once the group helps', async () => {
    const clock = new ManualClock();
    const state = chaosCluster(clock);
    const first = new Provisioner({ state, actuator: new MemoryActuator(state), clock, solve, memory: new MemoryGroupStore(state) }, { resyncMs: 0 });
    await first.cycle();
    machineWithNode(state, 'new-1', clock.now(), [CHAOS]);
    await clock.advance(31_000);
    expect((await first.cycle()).ineffectiveScaleUps).to.have.length(1);
    // Emptiness removes the useless node; the controller restarts a minute later.
    state.update('nodes', (o) => {
      o.nodes = o.nodes.filter((n) => n.metadata?.name !== 'new-1');
      o.machines = o.machines.filter((m) => m.metadata?.name !== 'new-1');
      (o.nodeGroups[0]!.spec as { replicas: number }).replicas = 1;
    });
    await clock.advance(60_000);
    const act2 = new MemoryActuator(state);
    const store2 = new MemoryGroupStore(state);
    const second = new Provisioner({ state, actuator: act2, events: act2, clock, solve, memory: store2 }, { resyncMs: 0 });
    const held = await second.cycle();
    expect(held.scaleUps, 'still backing off').to.deep.equal([]);
    expect(held.held?.['MachineDeployment/default/md']).to.match(/backing off after a scale-up that did not help/);
    // The back-off ends, a new (healthy) node takes the pods: nothing is left to keep.
    await clock.advance(241_000);
    const again = await second.cycle();
    expect(again.scaleUps.map((u) => [u.from, u.result?.replicas])).to.deep.equal([[1, 2]]);
    machineWithNode(state, 'new-2', clock.now());
    state.update('pods', (o) => { o.pods = o.pods.map((p) => (p.spec?.nodeName ? p : { ...p, spec: { ...p.spec!, nodeName: 'new-2' } })); });
    await clock.advance(1000);
    const helped = await second.cycle();
    expect(helped.held).to.equal(undefined);
    expect(annotation(state), 'annotation removed: the scale-up helped and the back-off is forgotten').to.equal(undefined);
  });

  it('an unreadable annotation is ignored (logged), not a crash, and is replaced', async () => {
    const clock = new ManualClock();
    const state = chaosCluster(clock);
    state.update('nodeGroups', (o) => { o.nodeGroups[0]!.metadata!.annotations![ANNOTATION] = '{not json'; });
    const lines: string[] = [];
    const p = new Provisioner({ state, actuator: new MemoryActuator(state), clock, solve, memory: new MemoryGroupStore(state), log: (m) => lines.push(m) }, { resyncMs: 0 });
    const r = await p.cycle();
    expect(r.scaleUps.map((u) => [u.from, u.result?.replicas])).to.deep.equal([[1, 2]]);
    expect(lines.some((l) => /ignoring unreadable scale-up memory: .*not JSON/.test(l))).to.equal(true);
    expect(JSON.parse(annotation(state)!)).to.have.property('v', 1);
  });
});

describe('Provisioner log lines (pino JSON)', () => {
  it('a line about one object carries its kind, namespace and name as fields', async () => {
    const lines: string[] = [];
    const destination = new Writable({ write(chunk: Buffer, _e, done) { lines.push(...chunk.toString('utf8').split('\n').filter(Boolean)); done(); } });
    const log = logTo(createLogger({ destination }));
    const clock = new ManualClock();
    const state = cluster([machineDeployment({ namespace: 'default', name: 'md', replicas: 0, min: 0, max: 10, cpu: '4', memory: '16Gi' })], 4);
    const act = new MemoryActuator(state);
    act.scaleTo = async () => { throw new Error('apiserver unavailable'); };
    const p = new Provisioner({ state, actuator: act, events: act, clock, solve, log });
    await p.cycle();
    const records = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    const failed = records.find((r) => /^scale-up of .* failed/.test(String(r.msg)));
    expect(failed).to.include({ level: 'info', kind: 'MachineDeployment', namespace: 'default', name: 'md' });
    expect(String(failed!.msg)).to.include('apiserver unavailable');
  });
});

describe('Provisioner under faults (leadership term, solve deadline, retried decisions)', () => {
  const md = () => machineDeployment({ namespace: 'default', name: 'md', replicas: 0, min: 0, max: 10, cpu: '4', memory: '16Gi' });

  it('writes nothing once its leadership term ends during the solve, and ends the cycle at once', async () => {
    const clock = new ManualClock();
    const state = cluster([md()], 4);
    const act = new MemoryActuator(state);
    const term = new AbortController();
    let solveStarted!: () => void;
    const started = new Promise<void>((r) => { solveStarted = r; });
    let finishSolve!: () => void;
    const p = new Provisioner({
      state, actuator: act, events: act, clock, term: term.signal,
      solve: async (s) => {
        solveStarted();
        await new Promise<void>((r) => { finishSolve = r; });
        return solvePlan(s);
      },
    }, { resyncMs: 0 });
    const cycle = p.cycle();
    await started;
    term.abort();
    const report = await cycle;
    expect(report.termEnded).to.equal(true);
    finishSolve();
    await new Promise((r) => setImmediate(r));
    expect(act.calls).to.deep.equal([]);
    expect(act.notified).to.deep.equal([]);
  });

  it('checks the term before each write: one ended between two scale-ups stops the second', async () => {
    const clock = new ManualClock();
    const state = cluster([md(), machineDeployment({ namespace: 'default', name: 'md2', replicas: 0, min: 0, max: 10, cpu: '4', memory: '16Gi' })], 4);
    const term = new AbortController();
    const act = new MemoryActuator(state);
    const scaleTo = act.scaleTo.bind(act);
    act.scaleTo = async (g, from, to) => {
      const r = await scaleTo(g, from, to);
      term.abort();
      return r;
    };
    const twoGroups = (s: ClusterSnapshot) => ({ ...solvePlan(s), scaleUps: [
      { kind: 'MachineDeployment' as const, namespace: 'default', name: 'md', from: 0, to: 1 },
      { kind: 'MachineDeployment' as const, namespace: 'default', name: 'md2', from: 0, to: 1 },
    ] });
    const p = new Provisioner({ state, actuator: act, events: act, clock, term: term.signal, solve: twoGroups }, { resyncMs: 0 });
    const report = await p.cycle();
    expect(report.termEnded).to.equal(true);
    expect(act.calls.map((c) => c.group)).to.deep.equal(['md']);
  });

  it('gives up a solve at the solve deadline and acts on the fallback plan', async () => {
    const clock = new ManualClock();
    const state = cluster([md()], 4);
    const act = new MemoryActuator(state);
    let aborted: unknown;
    let solving = false;
    const p = new Provisioner({
      state, actuator: act, events: act, clock,
      solve: (_s, signal) => {
        solving = true;
        return new Promise<never>(() => { signal?.addEventListener('abort', () => { aborted = signal.reason; }); });
      },
      fallbackSolve: (s) => solvePlan(s),
    }, { resyncMs: 0, solveDeadlineMs: 5_000 });
    let report: CycleReport | undefined;
    void p.cycle().then((r) => { report = r; });
    while (!solving) await new Promise((r) => setImmediate(r));
    await clock.advance(4_999);
    expect(report).to.equal(undefined);
    await clock.advance(1);
    expect(aborted, 'the hung solve was told to stop').to.be.instanceOf(Error);
    expect(report?.solveTimedOut).to.equal(true);
    expect(act.calls).to.have.length(1);
    expect(p.stats.solveTimeouts).to.equal(1);
  });

  it('without a fallback, a timed-out cycle ends without writing, and later cycles still run', async () => {
    const clock = new ManualClock();
    const state = cluster([md()], 4);
    const act = new MemoryActuator(state);
    let hang = true;
    const reports: CycleReport[] = [];
    const p = new Provisioner({
      state, actuator: act, events: act, clock, onCycle: (r) => reports.push(r),
      solve: (s) => (hang ? new Promise<never>(() => {}) : solvePlan(s)),
    }, { resyncMs: 0, solveDeadlineMs: 5_000, batch: { idleMs: 100, maxMs: 100 } });
    p.start();
    await clock.advance(100);
    expect(p.stalledMs(), 'the cycle runs on demand that opened the window 100 ms ago').to.equal(100);
    await clock.advance(3_000);
    expect(p.stalledMs(), 'demand waits on the stuck cycle').to.equal(3_100);
    await clock.advance(2_000);
    expect(reports.map((r) => r.solveTimedOut)).to.deep.equal([true]);
    expect(act.calls).to.deep.equal([]);
    expect(p.stalledMs()).to.equal(0);
    hang = false;
    p.trigger();
    await clock.advance(100);
    expect(act.calls).to.have.length(1);
    await p.stop();
  });

  it('names standalone Machines by decision: the same decision retried, or made by a second writer, names the same Machines', async () => {
    const clock = new ManualClock();
    const state = cluster([], 3, '6');
    state.objs = {
      ...state.objs,
      nodePools: [{
        apiVersion: 'headroom.dev/v1alpha1', kind: 'NodePool', metadata: { name: 'batch' },
        spec: { machineTemplate: {
          namespace: 'capi', clusterName: 'c1',
          bootstrapConfigTemplateRef: { apiVersion: 'b.x/v1', kind: 'BT', name: 'b' },
          infrastructureTemplateRef: { apiVersion: 'i.x/v1', kind: 'IT', name: 'i' },
          capacity: { cpu: '8', memory: '32Gi' },
        } },
      }],
    };
    const names: string[][] = [[], []];
    const writers = names.map((list) => {
      const act = new MemoryActuator(state);
      (act as CapiActuator).createMachine = async (req) => { list.push(req.name); return req.name; };
      return new Provisioner({ state, actuator: act, events: act, clock, solve }, { resyncMs: 0, observeTimeoutMs: 1 });
    });
    let done = false;
    const cycles = Promise.all(writers.map((w) => w.cycle())).finally(() => { done = true; });
    // The cycles then wait (1 ms of the manual clock) to observe Machines this fake never adds.
    while (!done) await clock.advance(1);
    await cycles;
    expect(names[0]).to.have.length(3);
    expect(new Set(names[0]).size).to.equal(3);
    expect(names[1]).to.deep.equal(names[0]);
  });
});
