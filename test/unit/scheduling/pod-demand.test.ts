import { expect } from 'chai';
import { isDemand, toSchedulingPod } from '../../../src/scheduling/pod-demand.js';
import { pod } from './pod-fixtures.js';

const rs = { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-abc', uid: 'rs1', controller: true };

describe('pod demand', () => {
  it('unbound, live, ungated, non-DaemonSet pods are demand', () => {
    expect(isDemand(pod('p'))).to.equal(true);
    expect(isDemand(pod('p', {}, { ownerReferences: [rs] }))).to.equal(true);
  });

  it('excludes bound, terminal, DaemonSet, gated and deleting pods', () => {
    expect(isDemand(pod('p', { nodeName: 'n1' }))).to.equal(false);
    expect(isDemand({ ...pod('p'), status: { phase: 'Succeeded' } })).to.equal(false);
    expect(isDemand({ ...pod('p'), status: { phase: 'Failed' } })).to.equal(false);
    expect(isDemand({ ...pod('p'), status: { phase: 'Pending' } })).to.equal(true);
    expect(isDemand(pod('p', {}, { ownerReferences: [{ ...rs, kind: 'DaemonSet', name: 'ds' }] }))).to.equal(false);
    // A DaemonSet owner that is not the controller does not make it a DaemonSet pod.
    expect(isDemand(pod('p', {}, { ownerReferences: [{ ...rs, kind: 'DaemonSet', controller: false }] }))).to.equal(true);
    expect(isDemand(pod('p', { schedulingGates: [{ name: 'example.com/wait' }] }))).to.equal(false);
    expect(isDemand(pod('p', { schedulingGates: [] }))).to.equal(true);
    expect(isDemand(pod('p', {}, { deletionTimestamp: new Date() }))).to.equal(false);
    expect(isDemand({ metadata: { name: 'nospec' } })).to.equal(false);
  });

  it('builds the scheduling view', () => {
    const p = toSchedulingPod(pod('web-1', {
      nodeSelector: { arch: 'amd64' },
      tolerations: [{ key: 'k', operator: 'Exists' }],
      priority: 100,
      volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'data-web-1' } }, { name: 'tmp', emptyDir: {} }],
      containers: [{ name: 'c', image: 'x', resources: { requests: { cpu: '250m', memory: '1Gi' } }, ports: [{ containerPort: 80, hostPort: 8080 }] }],
    }, { ownerReferences: [rs], labels: { app: 'web' } }));
    expect(p.key).to.equal('default/web-1');
    expect(p.owner).to.equal('ReplicaSet/default/web-abc');
    expect(p.requests).to.deep.equal({ cpu: 250, memory: 1024 ** 3, pods: 1 });
    expect(p.priority).to.equal(100);
    expect(p.claims).to.deep.equal(['data-web-1']);
    expect(p.hostPorts).to.deep.equal([{ port: 8080, protocol: 'TCP', hostIP: '0.0.0.0' }]);
    expect(p.nodeSelector).to.deep.equal({ arch: 'amd64' });
    expect(p.labels).to.deep.equal({ app: 'web' });
    expect(p.nodeName).to.equal(undefined);
    expect(toSchedulingPod(pod('b', { nodeName: 'n1' })).nodeName).to.equal('n1');
    expect(toSchedulingPod({ metadata: { name: 'x' }, spec: { containers: [] } }).namespace).to.equal('default');
  });

  describe('equivalence key', () => {
    const base = (name: string, spec = {}, labels: Record<string, string> = { app: 'web' }) =>
      toSchedulingPod(pod(name, spec, { ownerReferences: [rs], labels, uid: `u-${name}` })).equivalenceKey;

    it('is shared by identical pods of one owner', () => {
      expect(base('a')).to.equal(base('b'));
      expect(base('a', {}, { app: 'web', 'statefulset.kubernetes.io/pod-name': 'a' }))
        .to.equal(base('b', {}, { app: 'web', 'statefulset.kubernetes.io/pod-name': 'b' }));
    });

    it('differs when anything the scheduler looks at differs', () => {
      const k = base('a');
      const variants: Record<string, unknown>[] = [
        { containers: [{ name: 'c', resources: { requests: { cpu: '200m', memory: '64Mi' } } }] },
        { nodeSelector: { arch: 'arm64' } },
        { tolerations: [{ operator: 'Exists' }] },
        { priority: 5 },
        { affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey: 'kubernetes.io/hostname', labelSelector: {} }] } } },
        { topologySpreadConstraints: [{ maxSkew: 1, topologyKey: 'z', whenUnsatisfiable: 'DoNotSchedule' }] },
        { volumes: [{ name: 'd', persistentVolumeClaim: { claimName: 'd-a' } }] },
        { containers: [{ name: 'c', resources: { requests: { cpu: '100m', memory: '64Mi' } }, ports: [{ containerPort: 1, hostPort: 1 }] }] },
      ];
      for (const v of variants) expect(base('b', v), JSON.stringify(v)).to.not.equal(k);
      expect(base('b', {}, { app: 'api' })).to.not.equal(k);
      expect(toSchedulingPod(pod('b', {}, { labels: { app: 'web' } })).equivalenceKey).to.not.equal(k);
      expect(toSchedulingPod(pod('b', {}, { ownerReferences: [{ ...rs, name: 'other' }], labels: { app: 'web' } })).equivalenceKey).to.not.equal(k);
      expect(toSchedulingPod(pod('b', {}, { ownerReferences: [rs], labels: { app: 'web' }, namespace: 'other' })).equivalenceKey).to.not.equal(k);
    });
  });
});
