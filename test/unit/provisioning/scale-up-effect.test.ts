import { expect } from 'chai';
import type { V1Node } from '@kubernetes/client-node';
import type { ClusterSnapshot, SnapshotNode } from '../../../src/cluster/snapshot.js';
import type { SchedulingPod } from '../../../src/scheduling/scheduling-pod.js';
import { judgeScaleUp, judgeView, newNodeNames, readyTimes, type JudgeView, type ScaleUpRecord } from '../../../src/provisioning/scale-up-effect.js';

const G = 'MachineDeployment/ns/md';
const T = 1_000_000;

function pod(name: string, cpu = 1000, extra: Partial<SchedulingPod> = {}): SchedulingPod {
  return {
    key: `ns/${name}`, namespace: 'ns', name, uid: name, labels: {}, equivalenceKey: 'e', requests: { cpu, pods: 1 },
    priority: 0, nodeSelector: {}, tolerations: [], topologySpreadConstraints: [], hostPorts: [], claims: [], ...extra,
  };
}

function node(name: string, extra: Partial<SnapshotNode> = {}): SnapshotNode {
  return { name, groupId: G, labels: {}, taints: [], allocatable: { cpu: 4000, pods: 110 }, pods: [], inFlight: false, unschedulable: false, ...extra };
}

function snapshot(nodes: SnapshotNode[], pendingPods: SchedulingPod[]): JudgeView {
  return judgeView({ groups: [], nodes, pendingPods } as unknown as ClusterSnapshot);
}

const record: ScaleUpRecord = { groupId: G, writtenAt: T, pods: ['ns/a', 'ns/b'], nodesBefore: new Set(['old']) };
const TAINT = { key: 'chaos', value: 'x', effect: 'NoExecute' };

describe('scale-up effect (did the new nodes help the pods that triggered them)', () => {
  it('waits while no new node is Ready', () => {
    const s = snapshot([node('old'), node('new', { taints: [TAINT] }), node('in-flight:x', { inFlight: true })], [pod('a'), pod('b')]);
    expect(judgeScaleUp(record, s, new Map(), T + 60_000).kind).to.equal('waiting');
  });

  it('a Ready new node the pods cannot use (untolerated taint): settling, then did-not-help with the taint as reason', () => {
    const s = snapshot([node('old'), node('new', { taints: [TAINT] })], [pod('a'), pod('b')]);
    const ready = new Map([['new', T + 10_000]]);
    const settling = judgeScaleUp(record, s, ready, T + 20_000);
    expect(settling).to.deep.equal({ kind: 'settling', nodes: ['new'], since: T + 10_000, reason: 'node new has taint chaos=x:NoExecute that the pods do not tolerate' });
    const r = judgeScaleUp(record, s, ready, T + 40_000);
    expect(r).to.deep.include({ kind: 'did-not-help', nodes: ['new'], pending: 2 });
    expect((r as { reason: string }).reason).to.equal('node new has taint chaos=x:NoExecute that the pods do not tolerate');
  });

  it('a node seen unusable and then removed (emptiness) is still judged: settling until the settle time, then did-not-help', () => {
    const seen: ScaleUpRecord = { ...record, unusable: { nodes: ['new'], since: T + 10_000, reason: 'node new has taint chaos=x:NoExecute that the pods do not tolerate' } };
    const gone = snapshot([node('old')], [pod('a'), pod('b')]);
    expect(judgeScaleUp(seen, gone, new Map(), T + 30_000).kind).to.equal('settling');
    expect(judgeScaleUp(seen, gone, new Map(), T + 40_000)).to.deep.equal({
      kind: 'did-not-help', nodes: ['new'], pending: 2, reason: 'node new has taint chaos=x:NoExecute that the pods do not tolerate (since removed)',
    });
    expect(judgeScaleUp(record, gone, new Map(), T + 40_000).kind, 'never seen: waiting').to.equal('waiting');
  });

  it('names cordoned, too-small and label-mismatched nodes too; a tolerated taint is no blocker', () => {
    const ready = new Map([['new', T]]);
    const at = T + 60_000;
    const reasonOf = (n: SnapshotNode, p = pod('a')) => (judgeScaleUp(record, snapshot([n], [p]), ready, at) as { reason?: string }).reason;
    expect(reasonOf(node('new', { unschedulable: true }))).to.match(/unschedulable/);
    // Being removed by Headroom (its disruption taint) and chaos-tainted: the chaos taint is the reason.
    expect(reasonOf(node('new', { unschedulable: true, taints: [{ key: 'headroom.dev/disrupted', effect: 'NoSchedule' }, TAINT] }))).to.match(/chaos=x:NoExecute/);
    expect(reasonOf(node('new', { allocatable: { cpu: 500, pods: 110 } }))).to.match(/no room/);
    expect(reasonOf(node('new'), pod('a', 1000, { nodeSelector: { zone: 'b' } }))).to.match(/node selector/);
    const tolerant = pod('a', 1000, { tolerations: [{ key: 'chaos', operator: 'Exists' }] });
    expect(judgeScaleUp(record, snapshot([node('new', { taints: [TAINT] })], [tolerant]), ready, at).kind, 'fits: kube-scheduler still has time').to.equal('waiting');
  });

  it('pods that fit a Ready new node but stay pending past stuckMs: did-not-help (unusable node)', () => {
    const s = snapshot([node('new')], [pod('a')]);
    const ready = new Map([['new', T]]);
    expect(judgeScaleUp(record, s, ready, T + 179_000).kind).to.equal('waiting');
    expect(judgeScaleUp(record, s, ready, T + 180_000)).to.deep.include({ kind: 'did-not-help', reason: 'the pods are still pending 180 s after the new nodes were Ready' });
  });

  it('a new node that took a non-DaemonSet pod helped, even after a did-not-help verdict; DaemonSet pods do not count', () => {
    const ds = pod('ds', 100, { owner: 'DaemonSet/kube-system/agent', nodeName: 'new' });
    const ready = new Map([['new', T]]);
    expect(judgeScaleUp(record, snapshot([node('new', { pods: [ds], taints: [TAINT] })], [pod('a')]), ready, T + 60_000).kind).to.equal('did-not-help');
    const judged = { ...record, didNotHelpAt: T + 60_000 };
    expect(judgeScaleUp(judged, snapshot([node('new', { pods: [ds, pod('a', 1000, { nodeName: 'new' })] })], [pod('b')]), ready, T + 90_000))
      .to.deep.equal({ kind: 'helped', nodes: ['new'] });
    expect(judgeScaleUp(judged, snapshot([node('new', { taints: [TAINT] })], [pod('a')]), ready, T + 90_000).kind, 'judged once').to.equal('waiting');
  });

  it('moot when the triggering pods are gone (or only predicted), or the record expired', () => {
    const ready = new Map([['new', T]]);
    expect(judgeScaleUp(record, snapshot([node('new', { taints: [TAINT] })], [pod('other')]), ready, T + 60_000).kind).to.equal('moot');
    expect(judgeScaleUp(record, snapshot([node('new', { taints: [TAINT] })], [pod('a', 1000, { predicted: true })]), ready, T + 60_000).kind).to.equal('moot');
    expect(judgeScaleUp(record, snapshot([node('new', { taints: [TAINT] })], [pod('a')]), ready, T + 1_800_001).kind).to.equal('moot');
  });

  it('reads Ready times from Nodes (transition time, else creation), only for the named Ready nodes', () => {
    const n = (name: string, status: string, t?: string): V1Node => ({
      metadata: { name, creationTimestamp: new Date(T) },
      status: { conditions: [{ type: 'Ready', status, ...(t ? { lastTransitionTime: new Date(t) } : {}) }] },
    } as V1Node);
    const at = new Date(T + 5000).toISOString();
    const times = readyTimes([n('a', 'True', at), n('b', 'True'), n('c', 'False', at), n('d', 'True', at)], new Set(['a', 'b', 'c']));
    expect([...times]).to.deep.equal([['a', T + 5000], ['b', T]]);
    const s = snapshot([node('old'), node('new'), node('in-flight:x', { inFlight: true }), node('other', { groupId: 'MachineDeployment/ns/x' })], []);
    expect([...newNodeNames([record], s)]).to.deep.equal(['new']);
  });
});
