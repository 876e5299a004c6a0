import type { V1Node, V1Pod } from '@kubernetes/client-node';
import { expect } from 'chai';
import type { ClusterSnapshot, SnapshotNode } from '../../../src/cluster/snapshot.js';
import { extenderRoutes, FILTER_PATH, PRIORITIZE_PATH } from '../../../src/extender/routes.js';
import { DISRUPTION_ANNOTATION, ExtenderState, PROVISIONED_FOR_ANNOTATION } from '../../../src/extender/state.js';
import { packingScore } from '../../../src/extender/prioritize.js';
import type { ExtenderFilterResult, HostPriorityList } from '../../../src/extender/types.js';
import { DemandIntake } from '../../../src/provisioning/demand-intake.js';
import type { SchedulingPod } from '../../../src/scheduling/scheduling-pod.js';
import { HttpError } from '../../../src/server/http-error.js';

const GiB = 1024 ** 3;
const clock = { now: () => 1234, setTimer: () => () => undefined };

function pod(cpu: string, memory: string, owner?: { kind: string; name: string }, labels?: Record<string, string>): V1Pod {
  return {
    metadata: {
      name: 'p-1', namespace: 'shop', uid: 'uid-1', ...(labels ? { labels } : {}),
      ...(owner ? { ownerReferences: [{ apiVersion: 'apps/v1', kind: owner.kind, name: owner.name, uid: 'o', controller: true }] } : {}),
    },
    spec: { containers: [{ name: 'c', image: 'i', resources: { requests: { cpu, memory } } }] },
  };
}

function node(name: string, cpu = '4', memory = '8Gi', annotations?: Record<string, string>): V1Node {
  return {
    apiVersion: 'v1', kind: 'Node',
    metadata: { name, ...(annotations ? { annotations } : {}) },
    status: { allocatable: { cpu, memory, pods: '110' } },
  };
}

function snapNode(name: string, usedCpu: number, usedMem: number, extra: Partial<SnapshotNode> = {}): SnapshotNode {
  const used = { key: `x/${name}`, requests: { cpu: usedCpu, memory: usedMem, pods: 1 } } as unknown as SchedulingPod;
  return {
    name, labels: {}, taints: [], allocatable: { cpu: 4000, memory: 8 * GiB, pods: 110 },
    pods: [used], inFlight: false, unschedulable: false, ...extra,
  };
}

function snapshot(nodes: SnapshotNode[]): ClusterSnapshot {
  return {
    groups: [], nodes, pendingPods: [], namespaceLabels: {}, limits: {}, disruption: {}, templates: {},
    volumes: { persistentVolumes: {}, claims: {}, storageClasses: {} },
  };
}

describe('scheduler extender', () => {
  let state: ExtenderState;
  let intake: DemandIntake;
  let filter: (body: unknown) => ExtenderFilterResult;
  let prioritize: (body: unknown) => HostPriorityList;

  beforeEach(() => {
    state = ExtenderState.fromSnapshot(
      snapshot([
        snapNode('empty', 0, 0),
        snapNode('half', 2000, 4 * GiB),
        snapNode('draining', 0, 0, { unschedulable: true }),
        snapNode('coming', 0, 0, { inFlight: true }),
        snapNode('for-web', 0, 0),
      ]),
      [node('for-web', '4', '8Gi', { [PROVISIONED_FOR_ANNOTATION]: 'ReplicaSet/shop/web-1, Job/shop/batch' }), node('half', '4', '8Gi', { [DISRUPTION_ANNOTATION]: '' })],
    );
    state.clearDisrupting('half');
    intake = new DemandIntake(100);
    const routes = extenderRoutes({ state: () => state, intake, clock });
    filter = routes.find((r) => r.path === FILTER_PATH)!.handle as typeof filter;
    prioritize = routes.find((r) => r.path === PRIORITIZE_PATH)!.handle as typeof prioritize;
  });

  describe('state from a snapshot', () => {
    it('precomputes requested per node and skips in-flight placeholders', () => {
      expect(state.node('half')!.requested).to.deep.equal({ cpu: 2000, memory: 4 * GiB, pods: 1 });
      expect(state.node('coming')).to.equal(undefined);
      expect(state.nodeCount).to.equal(4);
      expect(state.disruptionReason('draining')).to.match(/drained or deleted/);
      expect(state.isProvisionedFor('for-web', 'Job/shop/batch')).to.equal(true);
      expect(state.isProvisionedFor('for-web', 'ReplicaSet/shop/other')).to.equal(false);
    });
  });

  describe('filter, NodeNames mode (nodeCacheCapable: true)', () => {
    it('removes nodes Headroom is disrupting, with the reason, and keeps the rest in order', () => {
      const out = filter({ Pod: pod('100m', '100Mi'), NodeNames: ['half', 'draining', 'empty', 'unknown'] });
      expect(Object.keys(out)).to.have.members(['Nodes', 'NodeNames', 'FailedNodes', 'FailedAndUnresolvableNodes', 'Error']);
      expect(out.NodeNames).to.deep.equal(['half', 'empty', 'unknown']);
      expect(out.Nodes).to.equal(null);
      expect(out.FailedNodes).to.have.keys(['draining']);
      expect(out.FailedNodes.draining).to.match(/^headroom: /);
      expect(out.FailedAndUnresolvableNodes).to.deep.equal(out.FailedNodes);
      expect(out.Error).to.equal('');
      expect(intake.size).to.equal(0);
    });

    it('records the pod as demand when no node survives', () => {
      const out = filter({ Pod: pod('100m', '100Mi', { kind: 'ReplicaSet', name: 'web-1' }), NodeNames: ['draining'] });
      expect(out.NodeNames).to.deep.equal([]);
      const [rec] = intake.drain();
      expect(rec!.source).to.equal('extender');
      expect(rec!.observedAt).to.equal(1234);
      expect(rec!.pod.key).to.equal('shop/p-1');
      expect(rec!.pod.owner).to.equal('ReplicaSet/shop/web-1');
    });

    it('never filters DaemonSet pods (and so never records them as demand)', () => {
      const out = filter({ Pod: pod('100m', '100Mi', { kind: 'DaemonSet', name: 'agent' }), NodeNames: ['draining'] });
      expect(out.NodeNames).to.deep.equal(['draining']);
      expect(out.FailedNodes).to.deep.equal({});
      expect(intake.size).to.equal(0);
    });

    it('passes every candidate, in order and as sent, while nothing is being disrupted', () => {
      state.clearDisrupting('draining');
      expect(state.disruptingCount).to.equal(0);
      const names = ['half', 'draining', 'empty', 'unknown'];
      const out = filter({ Pod: pod('100m', '100Mi'), NodeNames: names });
      expect(out.NodeNames).to.deep.equal(names);
      expect(out.FailedNodes).to.deep.equal({});
      expect(out.FailedAndUnresolvableNodes).to.deep.equal({});
      // and filters again as soon as a node is marked
      state.markDisrupting('empty', 'consolidating');
      expect(state.disruptingCount).to.equal(1);
      expect(filter({ Pod: pod('100m', '100Mi'), NodeNames: names }).NodeNames).to.deep.equal(['half', 'draining', 'unknown']);
    });

    it('counts the nodes being disrupted through every way an entry changes', () => {
      expect(state.disruptingCount).to.equal(1); // draining (half's annotation was cleared)
      state.markDisrupting('half', 'a');
      state.markDisrupting('half', 'b'); // a new reason, still one node
      expect(state.disruptingCount).to.equal(2);
      state.setEntry('half', { usage: state.node('half')! });
      expect(state.disruptingCount).to.equal(1);
      state.setEntry('gone-soon', { disruption: 'x' });
      expect(state.disruptingCount).to.equal(2);
      state.deleteNode('gone-soon');
      state.deleteNode('draining');
      expect(state.disruptingCount).to.equal(0);
    });

    it('accepts Go-style case-insensitive keys as encoding/json does', () => {
      const out = filter({ pod: pod('100m', '100Mi'), nodenames: ['draining', 'empty'] });
      expect(out.NodeNames).to.deep.equal(['empty']);
    });
  });

  describe('filter, NodeList mode (nodeCacheCapable: false)', () => {
    it('returns the surviving Node objects unchanged in a NodeList', () => {
      const list = { apiVersion: 'v1', kind: 'NodeList', metadata: {}, items: [node('empty'), node('draining'), node('half')] };
      const out = filter({ Pod: pod('100m', '100Mi'), Nodes: list, NodeNames: null });
      expect(out.NodeNames).to.equal(null);
      expect(out.Nodes!.kind).to.equal('NodeList');
      expect(out.Nodes!.items).to.deep.equal([node('empty'), node('half')]);
      expect(out.FailedNodes).to.have.keys(['draining']);
    });
  });

  describe('prioritize', () => {
    it('returns a bare array of {Host, Score} in 1..10, fuller-after-placement higher, leaving out nodes it scores 0', () => {
      const out = prioritize({ Pod: pod('1', '2Gi'), NodeNames: ['empty', 'half', 'unknown'] });
      expect(out).to.be.an('array');
      expect(out.map((h) => Object.keys(h))).to.deep.equal([['Host', 'Score'], ['Host', 'Score']]);
      const score = Object.fromEntries(out.map((h) => [h.Host, h.Score]));
      // empty: (1/4 + 2/8)/2 = 0.25 -> 2; half: (3/4 + 6/8)/2 = 0.75 -> 6; unknown: 0, so absent
      // (kube-scheduler adds an extender's score only to the hosts it lists: absent is 0).
      expect(score).to.deep.equal({ empty: 2, half: 6 });
      for (const h of out) expect(h.Score).to.be.within(1, 10).and.satisfy(Number.isInteger);
    });

    it('leaves out a node the pod does not fit (score 0)', () => {
      const out = prioritize({ Pod: pod('3', '1Gi'), NodeNames: ['half', 'empty'] });
      expect(out).to.deep.equal([{ Host: 'empty', Score: 4 }]);
    });

    it('adds the bonus on capacity provisioned for the pod\'s workload', () => {
      const web = prioritize({ Pod: pod('1', '2Gi', { kind: 'ReplicaSet', name: 'web-1' }), NodeNames: ['empty', 'for-web'] });
      // for-web: 2 for packing, +2 as it was provisioned for web-1
      expect(web).to.deep.equal([{ Host: 'empty', Score: 2 }, { Host: 'for-web', Score: 4 }]);
      const other = prioritize({ Pod: pod('1', '2Gi', { kind: 'ReplicaSet', name: 'api-1' }), NodeNames: ['empty', 'for-web'] });
      expect(other).to.deep.equal([{ Host: 'empty', Score: 2 }, { Host: 'for-web', Score: 2 }]);
    });

    it('adds the bonus on capacity prediction provisioned for the pod\'s Deployment or CronJob (the workload, not the ReplicaSet or Job)', () => {
      state.setProvisionedFor('empty', ['Deployment/shop/web', 'CronJob/shop/report']);
      try {
        const web = prioritize({ Pod: pod('1', '2Gi', { kind: 'ReplicaSet', name: 'web-7f9c' }, { 'pod-template-hash': '7f9c' }), NodeNames: ['empty'] });
        expect(web).to.deep.equal([{ Host: 'empty', Score: 4 }]);
        const job = prioritize({ Pod: pod('1', '2Gi', { kind: 'Job', name: 'report-29935410' }), NodeNames: ['empty'] });
        expect(job).to.deep.equal([{ Host: 'empty', Score: 4 }]);
        const other = prioritize({ Pod: pod('1', '2Gi', { kind: 'Job', name: 'backup-29935410' }), NodeNames: ['empty'] });
        expect(other).to.deep.equal([{ Host: 'empty', Score: 2 }]);
      } finally {
        state.setProvisionedFor('empty', []);
      }
    });

    it('in NodeList mode uses the state, or the node\'s own allocatable when unknown', () => {
      const list = { apiVersion: 'v1', kind: 'NodeList', metadata: {}, items: [node('half'), node('new-node', '2', '4Gi')] };
      const out = prioritize({ Pod: pod('1', '2Gi'), Nodes: list });
      expect(out).to.deep.equal([{ Host: 'half', Score: 6 }, { Host: 'new-node', Score: 4 }]);
    });

    it('stays within 0..10 at the extremes', () => {
      const full = { allocatable: { cpu: 1000, memory: GiB }, requested: { cpu: 1000, memory: GiB } };
      expect(packingScore(full, {})).to.equal(8);
      expect(packingScore(full, { cpu: 1 })).to.equal(0);
      expect(packingScore({ allocatable: {}, requested: {} }, { cpu: 1 })).to.equal(0);
      state.setProvisionedFor('half', ['ReplicaSet/shop/web-1']);
      state.setNode('half', { allocatable: { cpu: 1000, memory: GiB }, requested: { cpu: 0, memory: 0 } });
      const [h] = prioritize({ Pod: pod('1', '1Gi', { kind: 'ReplicaSet', name: 'web-1' }), NodeNames: ['half'] });
      expect(h).to.deep.equal({ Host: 'half', Score: 10 });
    });
  });

  describe('bad input', () => {
    it('answers 400 for a missing Pod, missing nodes or wrong types', () => {
      const bad: unknown[] = [
        [], { NodeNames: ['a'] }, { Pod: {} }, { Pod: {}, NodeNames: 'a' }, { Pod: {}, NodeNames: [1] },
        { Pod: {}, Nodes: { items: [{}] } }, { Pod: {}, Nodes: [] }, { Pod: 'x', NodeNames: [] },
        { Pod: { spec: { containers: 5 } }, NodeNames: [] }, { Pod: { spec: 'x' }, NodeNames: [] },
        { Pod: { metadata: { ownerReferences: {} } }, NodeNames: [] }, { Pod: { spec: { initContainers: [1] } }, NodeNames: [] },
      ];
      for (const body of bad) {
        expect(() => filter(body), JSON.stringify(body)).to.throw(HttpError).with.property('status', 400);
        expect(() => prioritize(body), JSON.stringify(body)).to.throw(HttpError).with.property('status', 400);
      }
    });
  });
});
