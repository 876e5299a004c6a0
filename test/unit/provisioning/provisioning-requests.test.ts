import { expect } from 'chai';
import { loadObjects } from '../../../src/cluster/load-objects.js';
import type { ClusterObjects } from '../../../src/cluster/objects.js';
import { solve } from '../../../src/packing/solve.js';
import {
  applyDecisions, bookedPods, decideProvisioningRequests, provisioningRequestPods,
} from '../../../src/provisioning/provisioning-requests.js';

const NOW = Date.parse('2026-01-01T01:00:00Z');
const group = (max: number, replicas = 0) => `
apiVersion: cluster.x-k8s.io/v1beta2
kind: MachineDeployment
metadata:
  name: md
  namespace: capi
  annotations:
    cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size: "0"
    cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size: "${max}"
    capacity.cluster-autoscaler.kubernetes.io/cpu: "4"
    capacity.cluster-autoscaler.kubernetes.io/memory: 16Gi
spec:
  clusterName: c
  replicas: ${replicas}
  selector: {matchLabels: {x: md}}
  template: {spec: {clusterName: c, bootstrap: {configRef: {apiGroup: b, kind: K, name: n}}, infrastructureRef: {apiGroup: i, kind: K, name: n}}}
`;
const node = (name: string) => `apiVersion: v1\nkind: Node\nmetadata: {name: ${name}, labels: {kubernetes.io/hostname: ${name}}}\nstatus: {allocatable: {cpu: "4", memory: 16Gi, pods: "110"}, conditions: [{type: Ready, status: "True"}]}`;
const template = (cpu: string) => `apiVersion: v1\nkind: PodTemplate\nmetadata: {name: t, namespace: ns}\ntemplate: {spec: {containers: [{name: c, image: x, resources: {requests: {cpu: "${cpu}"}}}]}}`;
const request = (name: string, cls: string, count: number, conditions = '[]', extra = '') => `
apiVersion: autoscaling.x-k8s.io/v1
kind: ProvisioningRequest
metadata: {name: ${name}, namespace: ns, uid: uid-${name}, generation: 1, creationTimestamp: "2026-01-01T00:00:00Z"}
spec: {provisioningClassName: ${cls}, podSets: [{podTemplateRef: {name: t}, count: ${count}}]${extra}}
status: {conditions: ${conditions}}
`;
const CHECK = 'check-capacity.autoscaling.x-k8s.io';
const ATOMIC = 'best-effort-atomic-scale-up.autoscaling.x-k8s.io';
const load = (...docs: string[]): ClusterObjects => loadObjects(docs.join('\n---\n'));
const decide = (objects: ClusterObjects, now = NOW) => decideProvisioningRequests(objects, now, solve);
const provisioned = (at: string) => `[{type: Accepted, status: "True", reason: Accepted, message: m, lastTransitionTime: "${at}"}, {type: Provisioned, status: "True", reason: CapacityIsProvisioned, message: m, lastTransitionTime: "${at}"}]`;

describe('ProvisioningRequests', () => {
  it('check-capacity: Provisioned=True when the pods fit on existing nodes, False when not; never books scale-up', async () => {
    const fits = await decide(load(group(5, 1), node('n1'), template('1'), request('r', CHECK, 3)));
    expect(fits).to.have.length(1);
    expect(fits[0]!.set.map((c) => [c.type, c.status, c.reason])).to.deep.equal([['Accepted', 'True', 'Accepted'], ['Provisioned', 'True', 'CapacityIsFound']]);
    expect(fits[0]!.set[1]!.observedGeneration).to.equal(1);
    const tooBig = await decide(load(group(5, 1), node('n1'), template('1'), request('r', CHECK, 5)));
    const p = tooBig[0]!.set.find((c) => c.type === 'Provisioned')!;
    expect([p.status, p.reason]).to.deep.equal(['False', 'CapacityIsNotFound']);
    expect(p.message).to.equal('Capacity is not found in the cluster: 1 of 5 pod(s) do not fit on the existing nodes');
    // A check-capacity booking keeps capacity from consolidation but never scales.
    const objects = applyDecisions(load(group(5, 1), node('n1'), template('1'), request('r', CHECK, 3)), fits);
    expect(provisioningRequestPods(objects)).to.deep.equal([]);
    expect(bookedPods(objects)).to.have.length(3);
  });

  it('atomic: books all pods when every group they need stays within its max size', async () => {
    const objects = load(group(3), template('3'), request('r', ATOMIC, 3));
    const d = await decide(objects);
    expect(d[0]!.set.find((c) => c.type === 'Provisioned')).to.include({ status: 'True', reason: 'CapacityIsProvisioned' });
    expect(d[0]!.outcomes.map((o) => o.outcome)).to.deep.equal(['accepted', 'provisioned']);
    const booked = provisioningRequestPods(applyDecisions(objects, d));
    expect(booked).to.have.length(3);
    // Pods on their way: capacity added for them is guarded by the Disruptor's delay after add.
    for (const p of booked) expect(p).to.include({ predicted: true, predictedDemand: true, owner: 'ProvisioningRequest/ns/r' });
  });

  it('atomic: books nothing and says why when the pods cannot all fit (max size)', async () => {
    const objects = load(group(2), template('3'), request('r', ATOMIC, 3));
    const d = await decide(objects);
    const p = d[0]!.set.find((c) => c.type === 'Provisioned')!;
    expect([p.status, p.reason]).to.deep.equal(['False', 'CapacityIsNotFound']);
    expect(p.message).to.match(/^Capacity is not found, nothing was scaled: 1 of 3 pod\(s\) cannot be placed: /);
    expect(provisioningRequestPods(applyDecisions(objects, d))).to.deep.equal([]);
  });

  it('a booking shrinks as consuming pods arrive (either annotation) and expires after the booking time', async () => {
    const consumer = (i: number, key: string) => `apiVersion: v1\nkind: Pod\nmetadata: {name: c${i}, namespace: ns, annotations: {${key}: r}}\nspec: {containers: [{name: c, image: x}]}`;
    const at = '2026-01-01T00:55:00Z';
    const objects = load(group(3, 3), template('3'), request('r', ATOMIC, 3, provisioned(at)),
      consumer(1, 'autoscaling.x-k8s.io/consume-provisioning-request'), consumer(2, 'cluster-autoscaler.kubernetes.io/consume-provisioning-request'));
    expect(provisioningRequestPods(objects)).to.have.length(1);
    expect(await decide(objects)).to.deep.equal([]);
    const late = await decide(objects, Date.parse(at) + 10 * 60_000);
    expect(late[0]!.set.map((c) => [c.type, c.status, c.reason, c.message])).to.deep.equal([['BookingExpired', 'True', 'CapacityReservationTimeExpired', 'Capacity reservation time is expired']]);
    expect(provisioningRequestPods(applyDecisions(objects, late))).to.deep.equal([]);
    // Shorter booking, configurable.
    expect(await decideProvisioningRequests(objects, Date.parse(at) + 60_000, solve, { bookingMs: 30_000 })).to.have.length(1);
  });

  it('a missing PodTemplate fails that request with one line and does not stop the others; other classes are left alone', async () => {
    const objects = load(group(3), template('1'),
      request('bad', ATOMIC, 1).replace('{name: t}', '{name: nope}'), request('good', ATOMIC, 1), request('other', 'queued-provisioning.gke.io', 1));
    const d = await decide(objects);
    expect(d.map((x) => x.name)).to.deep.equal(['bad', 'good']);
    expect(d[0]!.set.find((c) => c.type === 'Failed')).to.include({ status: 'True', reason: 'FailedToCreatePods', message: 'podSets[0]: PodTemplate ns/nope not found' });
    expect(d[1]!.set.find((c) => c.type === 'Provisioned')).to.include({ status: 'True' });
  });

  it('a spec that cannot be read (count 0) fails with one line naming the field', async () => {
    const d = await decide(load(group(3), template('1'), request('zero', ATOMIC, 0)));
    expect(d).to.have.length(1);
    expect(d[0]!.set).to.have.length(1);
    expect(d[0]!.set[0]).to.include({ type: 'Failed', status: 'True', reason: 'FailedToCreatePods', message: 'spec.podSets[0].count: must be a positive integer (got 0)' });
  });

  it('atomic with ValidUntilSeconds: Failed=Expired once past it unprovisioned', async () => {
    const d = await decide(load(group(1), template('3'), request('r', ATOMIC, 3, '[]', ', parameters: {ValidUntilSeconds: "60"}')));
    expect(d[0]!.set.find((c) => c.type === 'Failed')).to.include({ status: 'True', reason: 'Expired', message: 'ProvisioningRequest is expired' });
  });

  it('later requests see earlier bookings: two atomic requests do not both get the same room', async () => {
    const d = await decide(load(group(2), template('3'), request('a', ATOMIC, 2), request('b', ATOMIC, 1)));
    expect(d.map((x) => [x.name, x.set.find((c) => c.type === 'Provisioned')!.status])).to.deep.equal([['a', 'True'], ['b', 'False']]);
  });
});
