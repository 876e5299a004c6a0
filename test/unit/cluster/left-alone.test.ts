import { expect } from 'chai';
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import { buildSnapshot } from '../../../src/cluster/build-snapshot.js';
import { emptyClusterObjects } from '../../../src/cluster/objects.js';
import { planFromInputs, planJson, planText } from '../../../src/cli/plan.js';
import { explainPod } from '../../../src/cli/plan-why.js';
import { loadObjects } from '../../../src/cluster/load-objects.js';
import { parsePriorityCutoff } from '../../../src/cli/priority-cutoff-flag.js';
import { UsageError } from '../../../src/cli/command.js';
import { invalidated, podBlocker } from '../../../src/disruption/validation.js';
import { machineDeployment, pendingPod } from '../../integration/controller-objects.js';

const withPriority = <T extends { spec: Record<string, unknown> }>(p: T, priority: number) => ({ ...p, spec: { ...p.spec, priority } });
const nominated = <T extends object>(p: T, node: string) => ({ ...p, status: { phase: 'Pending', nominatedNodeName: node } });
const group = machineDeployment({ namespace: 'capi', name: 'md', replicas: 0, min: 0, max: 5, cpu: '4', memory: '16Gi' });
const text = (...objs: object[]) => objs.map((o) => JSON.stringify(o)).join('\n---\n');

function node(name: string, cpu = '4'): V1Node {
  return {
    apiVersion: 'v1', kind: 'Node', metadata: { name, labels: { 'kubernetes.io/hostname': name } },
    status: { allocatable: { cpu, memory: '16Gi', pods: '110' }, conditions: [{ type: 'Ready', status: 'True' }] },
  } as V1Node;
}

function bound(name: string, nodeName: string, cpu: string, priority?: number): V1Pod {
  return {
    apiVersion: 'v1', kind: 'Pod',
    metadata: { namespace: 'default', name, uid: name, ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', uid: 'rs', controller: true }] },
    spec: { nodeName, containers: [{ name: 'c', image: 'x', resources: { requests: { cpu } } }], ...(priority === undefined ? {} : { priority }) },
    status: { phase: 'Running' },
  } as V1Pod;
}

describe('expendable and nominated pods (left alone, as Cluster Autoscaler)', () => {
  it('a pod below the cutoff (-10 by default) triggers no scale-up, and plan and --why say why', async () => {
    const low = withPriority(pendingPod('default', 'low', '1'), -100);
    const inputs = [{ source: 'test', text: text(group, low) }];
    const result = await planFromInputs(inputs);
    expect(result.plan.scaleUps).to.deep.equal([]);
    expect(result.leftAlone.map((p) => [p.key, p.kind])).to.deep.equal([['default/low', 'expendable']]);
    expect(result.leftAlone[0]!.reason).to.match(/priority -100 is below the expendable-pods priority cutoff -10/);
    expect(planText(result)).to.match(/Left alone: 1 pending pod\(s\)[\s\S]*default\/low\s+priority -100 is below/);
    expect(JSON.parse(planJson(result)).leftAlone).to.deep.equal([{ pod: 'default/low', reason: result.leftAlone[0]!.reason }]);
    expect(explainPod(result, loadObjects(inputs), 'default/low')).to.match(/Headroom leaves it alone: priority -100 is below/);
  });

  it('at the cutoff a pod is demand; a lower cutoff makes a -100 pod demand again', async () => {
    const atCutoff = withPriority(pendingPod('default', 'edge', '1'), -10);
    expect((await planFromInputs([{ source: 'test', text: text(group, atCutoff) }])).plan.scaleUps.map((u) => u.name)).to.deep.equal(['md']);
    const low = withPriority(pendingPod('default', 'low', '1'), -100);
    const r = await planFromInputs([{ source: 'test', text: text(group, low) }], undefined, Date.now(), { expendablePodsPriorityCutoff: -1000 });
    expect(r.plan.scaleUps.map((u) => u.name)).to.deep.equal(['md']);
    expect(r.leftAlone).to.deep.equal([]);
  });

  it('a nominated pod is no demand and counts on its node; nominated to a node that is gone, it is demand', () => {
    const o = emptyClusterObjects();
    o.nodes = [node('n1')];
    o.pods = [nominated(pendingPod('default', 'waits', '3'), 'n1') as V1Pod, nominated(pendingPod('default', 'stale', '1'), 'gone') as V1Pod];
    const s = buildSnapshot(o);
    expect(s.pendingPods.map((p) => p.key)).to.deep.equal(['default/stale']);
    expect(s.nodes.find((n) => n.name === 'n1')!.pods.map((p) => p.key)).to.deep.equal(['default/waits']);
    expect(s.leftAlone?.map((p) => [p.key, p.kind])).to.deep.equal([['default/waits', 'nominated']]);
    expect(s.leftAlone?.[0]!.reason).to.match(/nominated node n1/);
  });

  it('the room a nomination took is not offered to other pending pods', async () => {
    const waits = nominated(pendingPod('default', 'waits', '3'), 'n1');
    const other = pendingPod('default', 'other', '3');
    const result = await planFromInputs([{ source: 'test', text: text(group, node('n1'), waits, other) }]);
    expect(result.plan.scaleUps.map((u) => [u.name, u.to - u.from])).to.deep.equal([['md', 1]]);
    expect(result.plan.placements.find((p) => p.pod === 'default/other')).to.not.have.property('node');
    // Without the nomination, that room is the other pod's.
    const free = await planFromInputs([{ source: 'test', text: text(group, node('n1'), other) }]);
    expect(free.plan.scaleUps).to.deep.equal([]);
    expect(free.plan.placements.find((p) => p.pod === 'default/other')).to.deep.include({ node: 'n1' });
  });

  it('bound expendable pods are not counted on their node (any pending pod preempts them)', () => {
    const o = emptyClusterObjects();
    o.nodes = [node('n1')];
    o.pods = [bound('batch', 'n1', '3', -50), bound('web', 'n1', '1', 0)];
    expect(buildSnapshot(o).nodes[0]!.pods.map((p) => p.key)).to.deep.equal(['default/web']);
    expect(buildSnapshot(o, { expendablePodsPriorityCutoff: -100 }).nodes[0]!.pods.map((p) => p.key)).to.deep.equal(['default/batch', 'default/web']);
  });

  it('an expendable pod does not keep its node from being removed, unless it says do-not-disrupt', () => {
    const bare = (priority: number, annotations: Record<string, string> = {}) => ({
      metadata: { namespace: 'ns', name: 'p', uid: 'u', annotations }, spec: { nodeName: 'n1', containers: [], priority }, status: { phase: 'Running' },
    }) as V1Pod;
    expect(podBlocker(bare(0))).to.match(/no controller/);
    expect(podBlocker(bare(-11))).to.equal(undefined);
    expect(podBlocker(bare(-11), -20)).to.match(/no controller/);
    expect(podBlocker(bare(-11, { 'karpenter.sh/do-not-disrupt': 'true' }))).to.match(/do-not-disrupt/);
    const fresh = { node: node('n1'), pods: [bare(-11)] };
    const removal = { node: 'n1', podUids: [] } as unknown as Parameters<typeof invalidated>[0];
    expect(invalidated(removal, fresh)).to.equal(undefined);
    expect(invalidated(removal, { node: node('n1'), pods: [bare(0)] })).to.match(/bound to the node after the decision/);
  });

  it('--expendable-pods-priority-cutoff takes an int32', () => {
    expect(parsePriorityCutoff('-10', 'plan')).to.equal(-10);
    expect(parsePriorityCutoff('+5', 'plan')).to.equal(5);
    expect(parsePriorityCutoff('-2147483648', 'plan')).to.equal(-(2 ** 31));
    for (const bad of ['', 'low', '1.5', '2147483648', '-2147483649', '1e3']) {
      expect(() => parsePriorityCutoff(bad, 'plan'), bad).to.throw(UsageError, /--expendable-pods-priority-cutoff must be a whole number/);
    }
  });
});
