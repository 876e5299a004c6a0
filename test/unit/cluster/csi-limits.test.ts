import { expect } from 'chai';
import { stringify } from 'yaml';
import { buildSnapshot, type SnapshotIssue } from '../../../src/cluster/build-snapshot.js';
import { loadObjects } from '../../../src/cluster/load-objects.js';
import { solve } from '../../../src/packing/solve.js';
import { ffd } from '../../../src/packing/ffd.js';
import { CsiLimitError, csiNodeLimits, parseCsiDriverLimits, podCsiVolumes } from '../../../src/scheduling/csi-limits.js';

/** CSI attach limits end to end: CSINodes and the csi-driver annotation -> buildSnapshot -> both packers. */

const EBS = 'ebs.csi.aws.com';
const md = (name: string, annotations: Record<string, string> = {}) => ({
  apiVersion: 'cluster.x-k8s.io/v1beta1', kind: 'MachineDeployment',
  metadata: {
    name, namespace: 'default',
    annotations: {
      'cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size': '0', 'cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size': '10',
      'capacity.cluster-autoscaler.kubernetes.io/cpu': '16', 'capacity.cluster-autoscaler.kubernetes.io/memory': '64Gi', ...annotations,
    },
  },
  spec: {
    clusterName: 'c', replicas: 0, selector: { matchLabels: { 'cluster.x-k8s.io/deployment-name': name } },
    template: { metadata: { labels: { 'cluster.x-k8s.io/deployment-name': name } }, spec: { clusterName: 'c', bootstrap: {}, infrastructureRef: { apiGroup: 'i.x', kind: 'T', name } } },
  },
});
const node = (name: string) => ({
  apiVersion: 'v1', kind: 'Node', metadata: { name, labels: { 'kubernetes.io/hostname': name } },
  status: { allocatable: { cpu: '16', memory: '64Gi', pods: '110' }, conditions: [{ type: 'Ready', status: 'True' }] },
});
const csiNode = (name: string, drivers: Array<{ name: string; count?: number }>) => ({
  apiVersion: 'storage.k8s.io/v1', kind: 'CSINode', metadata: { name },
  spec: { drivers: drivers.map((d) => ({ name: d.name, nodeID: name, ...(d.count === undefined ? {} : { allocatable: { count: d.count } }) })) },
});
const sc = (name: string, provisioner: string) => ({ apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { name }, provisioner, volumeBindingMode: 'WaitForFirstConsumer' });
const pvc = (name: string, o: { storageClassName?: string; volumeName?: string } = {}) => ({
  apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name, namespace: 'default' },
  spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, ...o },
});
const pv = (name: string, driver: string, handle: string) => ({
  apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name },
  spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], csi: { driver, volumeHandle: handle } },
});
const pod = (name: string, claims: string[], nodeName?: string) => ({
  apiVersion: 'v1', kind: 'Pod',
  metadata: { name, namespace: 'default', uid: `uid-${name}`, ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', uid: 'rs', controller: true }] },
  spec: {
    ...(nodeName ? { nodeName } : {}),
    containers: [{ name: 'c', image: 'x', resources: { requests: { cpu: '100m', memory: '128Mi' } } }],
    volumes: claims.map((c, i) => ({ name: `v${i}`, persistentVolumeClaim: { claimName: c } })),
  },
  status: { phase: nodeName ? 'Running' : 'Pending' },
});

function plan(objects: object[]) {
  const issues: SnapshotIssue[] = [];
  const s = buildSnapshot(loadObjects(objects.map((o) => stringify(o)).join('---\n')), { strict: false, onIssue: (i) => issues.push(i) });
  return { s, solved: solve(s), first: ffd(s), issues };
}
const scaled = (p: { scaleUps: Array<{ name: string; from: number; to: number }> }) => Object.fromEntries(p.scaleUps.map((u) => [u.name, u.to - u.from]));

describe('CSI attach limits', () => {
  it('parses the csi-driver annotation and CSINode counts', () => {
    expect([...parseCsiDriverLimits(`${EBS}=25, pd.csi.storage.gke.io=15`)]).to.deep.equal([[EBS, 25], ['pd.csi.storage.gke.io', 15]]);
    for (const bad of [`${EBS}`, `${EBS}=lots`, '=3', `${EBS}=-1`]) expect(() => parseCsiDriverLimits(bad), bad).to.throw(CsiLimitError, /is not driver=count/);
    expect([...csiNodeLimits({ drivers: [{ name: EBS, allocatable: { count: 2 } }, { name: 'other' }] })]).to.deep.equal([[EBS, 2]]);
  });

  it('counts a pod\'s volumes per driver, once per volume: bound PVs by handle, unbound claims by their class\'s provisioner', () => {
    const src = {
      claim: (k: string) => ({ 'ns/a': { volumeName: 'pv-a' }, 'ns/b': { volumeName: 'pv-b' }, 'ns/c': { storageClassName: 'gp3' }, 'ns/d': { storageClassName: 'none' } } as Record<string, { volumeName?: string; storageClassName?: string }>)[k],
      volume: (n: string) => ({ 'pv-a': { driver: EBS, handle: 'vol-1' }, 'pv-b': { driver: EBS, handle: 'vol-1' } } as Record<string, { driver: string; handle: string }>)[n],
      provisioner: (s: string) => (s === 'gp3' ? EBS : undefined),
    };
    const v = podCsiVolumes('ns', ['a', 'b', 'c', 'd', 'missing'], src);
    expect([...v.get(EBS)!].sort()).to.deep.equal([`${EBS}/pvc:ns/c`, `${EBS}/vol-1`]);
  });

  it('an existing node full of volumes (its CSINode count) is no room for a pod with a volume: a new node is added', () => {
    const objs = [
      sc('gp3', EBS), node('n1'), csiNode('n1', [{ name: EBS, count: 2 }]), md('md', { 'capacity.cluster-autoscaler.kubernetes.io/csi-driver': `${EBS}=25` }),
      pv('pv-1', EBS, 'vol-1'), pv('pv-2', EBS, 'vol-2'), pvc('c1', { volumeName: 'pv-1' }), pvc('c2', { volumeName: 'pv-2' }), pvc('new', { storageClassName: 'gp3' }),
      pod('a', ['c1'], 'n1'), pod('b', ['c2'], 'n1'), pod('p', ['new']),
    ];
    const { solved, first } = plan(objs);
    for (const p of [solved, first]) {
      expect(scaled(p)).to.deep.equal({ md: 1 });
      expect(p.placements.find((x) => x.pod === 'default/p')).to.not.have.property('node');
    }
    // With a limit of 3, the node takes it.
    const roomy = plan(objs.map((o) => ((o as { kind: string }).kind === 'CSINode' ? csiNode('n1', [{ name: EBS, count: 3 }]) : o)));
    expect(roomy.solved.scaleUps).to.deep.equal([]);
    expect(roomy.solved.placements.find((x) => x.pod === 'default/p')).to.deep.include({ node: 'n1' });
  });

  it('a volume two pods on the node share is attached once; other drivers and pods without volumes are not limited', () => {
    const objs = [
      sc('gp3', EBS), sc('other', 'other.csi.example.com'), node('n1'), csiNode('n1', [{ name: EBS, count: 2 }]), md('md'),
      pv('pv-1', EBS, 'vol-1'), pvc('c1', { volumeName: 'pv-1' }), pvc('new', { storageClassName: 'gp3' }), pvc('o', { storageClassName: 'other' }),
      pod('a', ['c1'], 'n1'), pod('b', ['c1'], 'n1'), pod('p', ['new']), pod('q', ['o', 'o']), pod('r', []),
    ];
    const { solved } = plan(objs);
    expect(solved.scaleUps).to.deep.equal([]);
    for (const p of ['p', 'q', 'r']) expect(solved.placements.find((x) => x.pod === `default/${p}`), p).to.deep.include({ node: 'n1' });
  });

  it('templates: new nodes attach the csi-driver annotation\'s count, so volume-heavy pods spread over nodes; a bad annotation is reported', () => {
    const claims = Array.from({ length: 6 }, (_, i) => pvc(`c${i}`, { storageClassName: 'gp3' }));
    const pods = Array.from({ length: 3 }, (_, i) => pod(`p${i}`, [`c${2 * i}`, `c${2 * i + 1}`]));
    const base = [sc('gp3', EBS), node('n0'), csiNode('n0', [{ name: EBS, count: 0 }]), ...claims, ...pods];
    const limited = plan([...base, md('md', { 'capacity.cluster-autoscaler.kubernetes.io/csi-driver': `${EBS}=3` })]);
    expect(scaled(limited.solved)).to.deep.equal({ md: 3 });
    expect(scaled(limited.first)).to.deep.equal({ md: 3 });
    const unlimited = plan([...base, md('md')]);
    expect(scaled(unlimited.solved)).to.deep.equal({ md: 1 });
    const bad = plan([...base, md('md', { 'capacity.cluster-autoscaler.kubernetes.io/csi-driver': 'lots' })]);
    expect(bad.issues.map((i) => i.message)).to.include.members([
      'MachineDeployment default/md: annotation capacity.cluster-autoscaler.kubernetes.io/csi-driver: "lots" is not driver=count (a whole number of volumes); no attach limits assumed',
    ]);
  });

  it('without any limit the snapshot is what it was (no attach resources)', () => {
    const { s } = plan([sc('gp3', EBS), node('n1'), md('md'), pvc('new', { storageClassName: 'gp3' }), pod('p', ['new'])]);
    expect(Object.keys(s.nodes[0]!.allocatable).some((k) => k.startsWith('attachable-volumes-csi-'))).to.equal(false);
    expect(Object.keys(s.pendingPods[0]!.requests).some((k) => k.startsWith('attachable-volumes-csi-'))).to.equal(false);
  });
});
