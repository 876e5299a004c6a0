import { expect } from 'chai';
import { isNodeGroupObject, parseMachine, parseMachineOnce, parseNodeGroupObject, parseNodeGroupObjectOnce } from '../../../src/api/capi.js';
import { ObjectValidationError } from '../../../src/api/validation-error.js';

describe('CAPI views', () => {
  const md = (apiVersion: string, extra: Record<string, unknown> = {}) => ({
    apiVersion,
    kind: 'MachineDeployment',
    metadata: { name: 'small', namespace: 'team', uid: 'u1', labels: { 'cluster.x-k8s.io/cluster-name': 'c1' }, annotations: { a: 'b' } },
    spec: {
      clusterName: 'c1',
      replicas: 2,
      template: {
        metadata: { labels: { role: 'web' } },
        spec: { clusterName: 'c1', failureDomain: 'us-east-1a', version: 'v1.34.0', taints: [{ key: 'k', value: 'v', effect: 'NoSchedule', propagation: 'Always' }] },
      },
      ...extra,
    },
    status: { replicas: 1 },
  });

  for (const v of ['v1beta1', 'v1beta2']) {
    it(`reads a ${v} MachineDeployment`, () => {
      const g = parseNodeGroupObject(md(`cluster.x-k8s.io/${v}`));
      expect(g.version).to.equal(v);
      expect(g.id).to.equal('MachineDeployment/team/small');
      expect(g.clusterName).to.equal('c1');
      expect(g.replicas).to.equal(2);
      expect(g.statusReplicas).to.equal(1);
      expect(g.template.labels).to.deep.equal({ role: 'web' });
      expect(g.template.taints).to.deep.equal([{ key: 'k', value: 'v', effect: 'NoSchedule' }]);
      expect(g.template.failureDomain).to.equal('us-east-1a');
      expect(g.failureDomains).to.deep.equal(['us-east-1a']);
      expect(g.paused).to.equal(false);
    });
  }

  it('reads MachinePool failure domains, providerIDList and nodeRefs (both versions)', () => {
    for (const v of ['v1beta1', 'v1beta2']) {
      const g = parseNodeGroupObject({
        apiVersion: `cluster.x-k8s.io/${v}`, kind: 'MachinePool', metadata: { name: 'mp' },
        spec: { clusterName: 'c1', replicas: 2, failureDomains: ['a', 'b'], providerIDList: ['aws:///a/i-1', 'aws:///b/i-2'], template: { spec: {} } },
        status: { nodeRefs: [{ kind: 'Node', name: 'n1' }, { name: 'n2' }] },
      });
      expect(g.namespace).to.equal('default');
      expect(g.failureDomains).to.deep.equal(['a', 'b']);
      expect(g.providerIDList).to.deep.equal(['aws:///a/i-1', 'aws:///b/i-2']);
      expect(g.nodeRefNames).to.deep.equal(['n1', 'n2']);
    }
  });

  it('leaves replicas undefined when unset, and reads paused', () => {
    const g = parseNodeGroupObject({ ...md('cluster.x-k8s.io/v1beta2', { replicas: undefined, paused: true }) });
    expect(g.replicas).to.equal(undefined);
    expect(g.paused).to.equal(true);
  });

  it('rejects bad objects with the object and field named', () => {
    const cases: [Record<string, unknown>, RegExp][] = [
      [md('cluster.x-k8s.io/v1alpha3'), /^MachineDeployment team\/small: apiVersion: unsupported "cluster.x-k8s.io\/v1alpha3"/],
      [md('cluster.x-k8s.io/v1beta2', { replicas: -1 }), /^MachineDeployment team\/small: spec.replicas: must be a non-negative integer/],
      [md('cluster.x-k8s.io/v1beta2', { replicas: '3' }), /spec.replicas: must be a non-negative integer, got "3"/],
      [md('cluster.x-k8s.io/v1beta2', { template: { spec: { taints: [{ key: 'k', effect: 'Sometimes' }] } } }), /spec.template.spec.taints\[0\].effect: must be one of/],
      [md('cluster.x-k8s.io/v1beta2', { template: { metadata: { labels: { a: 1 } } } }), /spec.template.metadata.labels.a: must be a string/],
      [{ apiVersion: 'cluster.x-k8s.io/v1beta2', kind: 'MachineDeployment', metadata: {} }, /metadata.name: is required/],
    ];
    for (const [obj, re] of cases) {
      expect(() => parseNodeGroupObject(obj as never)).to.throw(ObjectValidationError, re);
    }
  });

  it('recognises node group objects', () => {
    expect(isNodeGroupObject({ apiVersion: 'cluster.x-k8s.io/v1beta1', kind: 'MachineSet' })).to.equal(true);
    expect(isNodeGroupObject({ apiVersion: 'apps/v1', kind: 'MachineSet' })).to.equal(false);
    expect(isNodeGroupObject({ apiVersion: 'cluster.x-k8s.io/v1beta2', kind: 'Machine' })).to.equal(false);
  });

  it('reads Machines: nodeRef as ObjectReference (v1beta1) or {name} (v1beta2)', () => {
    const m1 = parseMachine({
      apiVersion: 'cluster.x-k8s.io/v1beta1', kind: 'Machine',
      metadata: { name: 'm1', namespace: 'ns', annotations: { 'cluster.x-k8s.io/delete-machine': '' } },
      spec: { clusterName: 'c', providerID: 'aws:///us-east-1a/i-1', failureDomain: 'us-east-1a' },
      status: { nodeRef: { apiVersion: 'v1', kind: 'Node', name: 'n1', uid: 'x' }, phase: 'Running' },
    });
    expect(m1).to.include({ name: 'm1', namespace: 'ns', providerID: 'aws:///us-east-1a/i-1', nodeName: 'n1', failureDomain: 'us-east-1a', markedForDeletion: true, phase: 'Running', deleting: false });
    const m2 = parseMachine({
      apiVersion: 'cluster.x-k8s.io/v1beta2', kind: 'Machine',
      metadata: { name: 'm2', deletionTimestamp: '2026-01-01T00:00:00Z' } as never,
      spec: { clusterName: 'c' },
      status: { nodeRef: { name: 'n2' }, failureDomain: 'zone-b' },
    });
    expect(m2).to.include({ nodeName: 'n2', failureDomain: 'zone-b', deleting: true, markedForDeletion: false });
    expect(m2.providerID).to.equal(undefined);
  });

  it('parses each object once: the same object gives the same view, a new object a new one, a bad one throws every time', () => {
    const obj = md('cluster.x-k8s.io/v1beta2');
    const view = parseNodeGroupObjectOnce(obj);
    expect(view).to.deep.equal(parseNodeGroupObject(obj));
    expect(parseNodeGroupObjectOnce(obj)).to.equal(view);
    const changed = md('cluster.x-k8s.io/v1beta2', { replicas: 5 });
    expect(parseNodeGroupObjectOnce(changed).replicas).to.equal(5);
    const bad = md('cluster.x-k8s.io/v1beta2', { replicas: -1 });
    for (let i = 0; i < 2; i++) expect(() => parseNodeGroupObjectOnce(bad)).to.throw(ObjectValidationError, /spec.replicas/);
    const machine = { apiVersion: 'cluster.x-k8s.io/v1beta2', kind: 'Machine', metadata: { name: 'm' }, spec: { clusterName: 'c' } };
    expect(parseMachineOnce(machine)).to.equal(parseMachineOnce(machine));
    expect(parseMachineOnce(machine)).to.deep.equal(parseMachine(machine));
    const badMachine = { apiVersion: 'cluster.x-k8s.io/v1alpha3', kind: 'Machine', metadata: { name: 'm' } };
    for (let i = 0; i < 2; i++) expect(() => parseMachineOnce(badMachine)).to.throw(ObjectValidationError);
  });
});
