import { expect } from 'chai';
import { NODEPOOL_HASH_ANNOTATION, nodePoolTemplateHash } from '../../../src/api/nodepool-hash.js';
import { parseNodePool, type MachineTemplateSpec } from '../../../src/api/nodepool.js';
import type { UnstructuredObject } from '../../../src/api/unstructured-object.js';
import { standaloneMachine } from '../../../src/capi/machine-template.js';
import { buildSnapshot } from '../../../src/cluster/build-snapshot.js';
import { emptyClusterObjects, type ClusterObjects } from '../../../src/cluster/objects.js';
import type { NodeGroup } from '../../../src/cluster/snapshot.js';
import { DEFAULT_DISRUPTION, DisruptionAllowance, type SettingsOf } from '../../../src/disruption/allowance.js';
import { rollingOutGroups } from '../../../src/disruption/capi-rollout.js';
import { decideDrift, driftedMachines, driftedNodes, type DriftInput } from '../../../src/disruption/drift.js';
import { solve } from '../../../src/packing/solve.js';
import { machineDeployment } from '../../integration/controller-objects.js';
import { group, node as bareNode, pod, snapshot } from '../packing/snapshot-builders.js';

function pool(infra = 'kwok-a', extra: Record<string, unknown> = {}): UnstructuredObject {
  return {
    apiVersion: 'headroom.dev/v1alpha1', kind: 'NodePool', metadata: { name: 'batch' },
    spec: {
      machineTemplate: {
        namespace: 'capi', clusterName: 'c1', capacity: { cpu: '4', memory: '16Gi' }, labels: { role: 'batch' },
        bootstrapConfigTemplateRef: { apiVersion: 'b.x/v1', kind: 'BT', name: 'b' },
        infrastructureTemplateRef: { apiVersion: 'i.x/v1', kind: 'IT', name: infra }, ...extra,
      },
    },
  };
}
const objectsWith = (nodePools: UnstructuredObject[]): ClusterObjects => ({ ...emptyClusterObjects(), nodePools });
const template = (o: UnstructuredObject): MachineTemplateSpec => parseNodePool(o).machineTemplate!;

function machine(name: string, hash: string | undefined, nodeName: string): UnstructuredObject {
  return {
    apiVersion: 'cluster.x-k8s.io/v1beta2', kind: 'Machine',
    metadata: { name, namespace: 'capi', labels: { 'headroom.dev/nodepool': 'batch' }, ...(hash ? { annotations: { [NODEPOOL_HASH_ANNOTATION]: hash } } : {}) },
    spec: { clusterName: 'c1' }, status: { nodeRef: { name: nodeName } },
  };
}

describe('drift', () => {
  describe('the NodePool template hash', () => {
    it('changes with the fields that shape the node, not with the price or the key order', () => {
      const a = nodePoolTemplateHash(template(pool()));
      expect(a).to.match(/^[0-9a-f]{16}$/);
      expect(nodePoolTemplateHash(template(pool('kwok-b')))).to.not.equal(a);
      expect(nodePoolTemplateHash(template(pool('kwok-a', { version: 'v1.36.0' })))).to.not.equal(a);
      expect(nodePoolTemplateHash(template(pool('kwok-a', { taints: [{ key: 'k', effect: 'NoSchedule' }] })))).to.not.equal(a);
      expect(nodePoolTemplateHash(template(pool('kwok-a', { pricePerHour: 3 })))).to.equal(a);
      const reordered = { ...template(pool()), labels: { role: 'batch' }, capacity: Object.fromEntries(Object.entries(template(pool()).capacity).reverse()) };
      expect(nodePoolTemplateHash(reordered)).to.equal(a);
    });

    it('is written on every standalone Machine Headroom creates', () => {
      const m = standaloneMachine('v1beta2', 'batch-x', { name: 'batch', uid: 'u' }, template(pool()));
      expect(m.metadata?.annotations?.[NODEPOOL_HASH_ANNOTATION]).to.equal(nodePoolTemplateHash(template(pool())));
    });
  });

  it("finds the Machines made from an older template of their pool (not those without a hash, nor those being deleted), and their nodes", () => {
    const old = nodePoolTemplateHash(template(pool()));
    const machines = [
      machine('m-old', old, 'n-old'), machine('m-new', nodePoolTemplateHash(template(pool('kwok-b'))), 'n-new'), machine('m-legacy', undefined, 'n-legacy'),
      { ...machine('m-going', old, 'n-going'), metadata: { ...machine('m-going', old, 'n-going').metadata, deletionTimestamp: '2026-01-01T00:00:00Z' } } as unknown as UnstructuredObject,
    ];
    // The pools' current templates as the snapshot resolves them (once, when it is built).
    const templates = buildSnapshot(objectsWith([pool('kwok-b')])).templates;
    expect(templates).to.deep.equal({ batch: { hash: nodePoolTemplateHash(template(pool('kwok-b'))), namespace: 'capi' } });
    expect([...driftedMachines(templates, machines).keys()]).to.deep.equal(['capi/m-old']);
    const snap = snapshot({
      nodes: ['old', 'new', 'legacy'].map((x) => ({ ...bareNode(`n-${x}`), machine: { namespace: 'capi', name: `m-${x}`, leaving: false } })),
      templates,
    });
    const nodes = driftedNodes(snap, machines);
    expect([...nodes.keys()]).to.deep.equal(['n-old']);
    expect(nodes.get('n-old')).to.match(/older template of NodePool batch \(hash [0-9a-f]{16}, now [0-9a-f]{16}\)/);
    // Unchanged template: nothing drifted.
    expect(driftedMachines(buildSnapshot(objectsWith([pool()])).templates, machines).size).to.equal(1); // m-new is now the one from another template
    expect(driftedMachines({}, machines).size).to.equal(0);
    // A Machine of another namespace is no longer the pool's; a pool named like an Object.prototype key is no pool.
    expect(driftedMachines({ batch: { hash: 'x', namespace: 'elsewhere' } }, machines).size).to.equal(0);
    const odd = { ...machine('m-odd', old, 'n-odd'), metadata: { ...machine('m-odd', old, 'n-odd').metadata, labels: { 'headroom.dev/nodepool': 'constructor' } } };
    expect(driftedMachines({}, [odd as UnstructuredObject]).size).to.equal(0);
  });

  describe('decideDrift', () => {
    const settings = (d: Partial<typeof DEFAULT_DISRUPTION> = {}): SettingsOf => () => ({ ...DEFAULT_DISRUPTION, budgets: [{ nodes: '100%' }], ...d });
    const withMachine = (n: ReturnType<typeof bareNode>) => ({ ...n, machine: { namespace: 'default', name: `m-${n.name}`, leaving: false } });
    /** Drifted node `d` (2 one-cpu pods) of group g; `other` with `free` cpu room. */
    function setup(otherBusyCpu: string, g: NodeGroup = { ...group('md', { cpu: '4', price: 0.2 }), replicas: 2 }) {
      const bound = [0, 1].map((i) => pod(`web-${i}`, { owner: 'web', cpu: '1', memory: '1Gi' }));
      const nodes = [
        withMachine(bareNode('d', { groupId: g.id, bound })),
        withMachine(bareNode('other', { groupId: g.id, bound: [pod('busy', { owner: 'busy', cpu: otherBusyCpu, memory: '1Gi' })] })),
      ];
      const snap = snapshot({ groups: [g], nodes });
      const input = (o: Partial<DriftInput> = {}): DriftInput => {
        const settingsOf = o.settingsOf ?? settings();
        return { snapshot: snap, drifted: new Map([['d', 'drifted']]), now: 5, settingsOf, allowance: new DisruptionAllowance(snap, settingsOf), solve: (s) => solve(s), ...o };
      };
      return { snap, input };
    }

    it('deletes a drifted node whose pods fit on existing nodes, and replaces it by one new node first when they do not', async () => {
      const fits = await decideDrift(setup('1').input());
      expect(fits.remove.map((r) => [r.node, r.reason, r.replacement, r.podUids.length])).to.deep.equal([['d', 'Drifted', undefined, 2]]);
      const full = await decideDrift(setup('3').input());
      expect(full.remove).to.have.length(1);
      expect(full.remove[0]!.replacement?.group.id).to.equal('MachineDeployment/default/md');
    });

    it('respects Drifted budgets, the keep set (blockers), pods without a controller, and pending pods', async () => {
      const { input, snap } = setup('1');
      const zero = await decideDrift(input({ settingsOf: settings({ budgets: [{ nodes: '100%' }, { nodes: '0', reasons: ['Drifted'] }] }) }));
      expect(zero.remove).to.deep.equal([]);
      expect(zero.skipped[0]).to.deep.include({ node: 'd', reason: 'Drifted', blockedBy: 'budget' });
      // A budget for other reasons does not hold drift.
      expect((await decideDrift(input({ settingsOf: settings({ budgets: [{ nodes: '100%' }, { nodes: '0', reasons: ['Underutilized'] }] }) }))).remove).to.have.length(1);
      expect((await decideDrift(input({ keep: new Set(['d']) }))).remove).to.deep.equal([]);
      const bare = { ...snap, nodes: snap.nodes.map((n) => (n.name === 'd' ? { ...n, pods: [...n.pods, { ...pod('lonely'), nodeName: 'd' }] } : n)) };
      const lonely = await decideDrift(input({ snapshot: bare, allowance: new DisruptionAllowance(bare, settings()) }));
      expect(lonely.remove).to.deep.equal([]);
      expect(lonely.skipped).to.deep.include({ node: 'd', why: 'has a pod without a controller', reason: 'Drifted', blockedBy: 'pod-without-controller' });
      const pending = { ...snap, pendingPods: [pod('new', { owner: 'x' })] };
      expect((await decideDrift(input({ snapshot: pending }))).remove).to.deep.equal([]);
    });

    it('refuses when the pods would need more than one new node', async () => {
      const g = { ...group('md', { cpu: '4', price: 0.2, max: 2 }), replicas: 2 };
      const { input } = setup('4', g); // other is full and the group is at its max
      const out = await decideDrift(input());
      expect(out.remove).to.deep.equal([]);
      expect(out.skipped[0]).to.deep.include({ node: 'd', reason: 'Drifted', blockedBy: 'pods-cannot-move' });
    });
  });

  describe('MachineDeployments that CAPI is rolling out', () => {
    const md = (status?: Record<string, unknown>) => ({ ...machineDeployment({ namespace: 'capi', name: 'md', replicas: 3, min: 0, max: 5 }), ...(status ? { status } : {}) });
    const ms = (name: string, replicas: number) => ({
      apiVersion: 'cluster.x-k8s.io/v1beta2', kind: 'MachineSet',
      metadata: { name, namespace: 'capi', labels: { 'cluster.x-k8s.io/deployment-name': 'md' }, ownerReferences: [{ apiVersion: 'cluster.x-k8s.io/v1beta2', kind: 'MachineDeployment', name: 'md', uid: 'u', controller: true }] },
      spec: { clusterName: 'test', replicas, selector: {}, template: { spec: { clusterName: 'test', bootstrap: { dataSecretName: 'x' }, infrastructureRef: { apiGroup: 'i.x', kind: 'IT', name: 'i' } } } },
    });
    it('are those with more than one MachineSet with Machines, or fewer Machines from the newest MachineSet than replicas', () => {
      expect(rollingOutGroups([md({ replicas: 3, updatedReplicas: 3 }), ms('a', 3), ms('old', 0)]).size).to.equal(0);
      expect([...rollingOutGroups([md(), ms('a', 2), ms('b', 1)]).values()]).to.deep.equal(['MachineDeployment capi/md is rolling out (2 MachineSets have Machines): its nodes are left to Cluster API']);
      expect(rollingOutGroups([md({ replicas: 3, updatedReplicas: 1 })]).get('MachineDeployment/capi/md')).to.match(/1 of its 3 Machines are from its newest MachineSet/);
      expect(rollingOutGroups([md({ replicas: 3, deprecated: { v1beta1: { updatedReplicas: 2 } } })]).size).to.equal(1);
    });

    it('are not those real CAPI v1.14 reports RollingOut with no up-to-date Machines for good (kubelet version against an unset spec.version): one MachineSet, all its Machines the newest', () => {
      // As read from real CAPI after a rollback (cluster-api.test.ts "rollout held").
      const status = {
        replicas: 2, upToDateReplicas: 0, deprecated: { v1beta1: { updatedReplicas: 2 } },
        conditions: [{ type: 'RollingOut', status: 'True', reason: 'RollingOut', message: 'Rolling out 2 not up-to-date replicas' }],
      };
      expect(rollingOutGroups([md(status), ms('a', 2), ms('old', 0)]).size).to.equal(0);
    });
  });
});
