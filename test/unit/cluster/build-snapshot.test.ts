import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { ObjectValidationError } from '../../../src/api/validation-error.js';
import { buildSnapshot, type SnapshotIssue } from '../../../src/cluster/build-snapshot.js';
import { loadObjects } from '../../../src/cluster/load-objects.js';
import { emptyClusterObjects } from '../../../src/cluster/objects.js';

const fixture = (name: string) => readFileSync(new URL(`../../fixtures/${name}`, import.meta.url), 'utf8');
const GiB = 2 ** 30;
const MAX = 'cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size';

describe('buildSnapshot', () => {
  describe('on the example cluster', () => {
    const s = buildSnapshot(loadObjects(fixture('example-cluster.yaml')));

    it('keeps only managed groups (no unannotated MD, no MachineSet of an MD)', () => {
      expect(s.groups.map((g) => g.id)).to.deep.equal([
        'MachineDeployment/default/small', 'MachineDeployment/default/large', 'MachineDeployment/default/spot', 'MachinePool/default/pool',
      ]);
    });

    it('models groups from annotations (v1beta1 and v1beta2) and learns the MachinePool from its node', () => {
      const [small, large, spot, pool] = s.groups;
      expect(small!.template.allocatable).to.include({ cpu: 2000, memory: 8 * GiB, pods: 29 });
      expect(small!.template.labels).to.include({ 'topology.kubernetes.io/zone': 'us-east-1a', 'node.kubernetes.io/instance-type': 'm5.large' });
      expect(small!.pricePerHour).to.equal(0.096);
      expect(large!.template.allocatable).to.deep.equal({ cpu: 16000, memory: 64 * GiB, pods: 110 });
      expect(large!.template.labels['topology.kubernetes.io/zone']).to.equal('us-east-1b');
      expect(spot!.capacityType).to.equal('spot');
      expect(spot!.template.taints).to.deep.equal([{ key: 'spot', value: 'true', effect: 'NoSchedule' }]);
      expect(pool!.template.allocatable).to.deep.equal({ cpu: 3920, memory: 15324 * 2 ** 20, pods: 58 });
      expect(pool!.template.labels).to.include({ 'kubernetes.io/arch': 'arm64', 'topology.kubernetes.io/zone': 'us-east-1c' });
      expect(pool!.template.labels).to.not.have.property('kubernetes.io/hostname');
      expect(pool!.minSize).to.equal(1);
    });

    it('counts the node-exporter DaemonSet but not the GPU-only one as overhead', () => {
      for (const g of s.groups) {
        expect(g.daemonSetOverhead, g.id).to.deep.equal({ cpu: 100, memory: 128 * 2 ** 20, pods: 1 });
        expect(g.daemonSetPods?.[0]?.hostPorts).to.deep.equal([{ port: 9100, protocol: 'TCP', hostIP: '0.0.0.0' }]);
      }
    });

    it('maps nodes to groups and attaches bound pods', () => {
      const n1 = s.nodes.find((n) => n.name === 'ip-10-0-1-5.ec2.internal')!;
      expect(n1.groupId).to.equal('MachineDeployment/default/small');
      expect(n1.pods.map((p) => p.key)).to.deep.equal(['monitoring/node-exporter-abcde', 'shop/web-6c9f8-aaaaa']);
      expect(n1.allocatable).to.include({ cpu: 1930, memory: 7569 * 2 ** 20 });
      expect(n1.inFlight).to.equal(false);
      expect(s.nodes.find((n) => n.name === 'ip-10-0-3-7.ec2.internal')!.groupId).to.equal('MachinePool/default/pool');
    });

    it('adds in-flight placeholders for replicas without nodes, with DaemonSet pods', () => {
      const inFlight = s.nodes.filter((n) => n.inFlight);
      expect(inFlight.map((n) => [n.name, n.groupId])).to.deep.equal([['in-flight:default/pool:0', 'MachinePool/default/pool']]);
      expect(inFlight[0]!.labels['kubernetes.io/hostname']).to.equal('in-flight:default/pool:0');
      expect(inFlight[0]!.pods.map((p) => p.nodeName)).to.deep.equal(['in-flight:default/pool:0']);
    });

    it('pending pods are demand only (no gated, completed or bound pods), with equivalence classes', () => {
      expect(s.pendingPods.map((p) => p.key)).to.deep.equal([
        'shop/web-6c9f8-bbbbb', 'shop/web-6c9f8-ccccc', 'shop/web-6c9f8-ddddd', 'shop/analytics-0', 'shop/db-0', 'shop/batch-x1',
      ]);
      expect(new Set(s.pendingPods.slice(0, 3).map((p) => p.equivalenceKey)).size).to.equal(1);
      expect(new Set(s.pendingPods.map((p) => p.equivalenceKey)).size).to.equal(4);
    });

    it('volumes use the default StorageClass; namespaces carry their name label', () => {
      expect(s.volumes.claims['shop/data-db-0']).to.deep.equal({ bound: false, storageClassName: 'gp3' });
      expect(s.volumes.storageClasses.gp3?.waitForFirstConsumer).to.equal(true);
      expect(s.namespaceLabels.shop).to.deep.equal({ 'kubernetes.io/metadata.name': 'shop', team: 'shop' });
      expect(s.namespaceLabels.monitoring).to.deep.equal({ 'kubernetes.io/metadata.name': 'monitoring' });
      expect(s.limits).to.deep.equal({});
    });

    it('is plain data (structured-clone safe) and deterministic', () => {
      expect(structuredClone(s)).to.deep.equal(s);
      expect(buildSnapshot(loadObjects(fixture('example-cluster.yaml')))).to.deep.equal(s);
    });
  });

  describe('validation', () => {
    const badGroup = `apiVersion: cluster.x-k8s.io/v1beta2
kind: MachineDeployment
metadata: {name: small, namespace: default, annotations: {${MAX}: "3", capacity.cluster-autoscaler.kubernetes.io/memory: 12Qi}}
spec: {clusterName: c, template: {spec: {}}}
---
apiVersion: cluster.x-k8s.io/v1beta2
kind: MachineDeployment
metadata: {name: ok, namespace: default, annotations: {${MAX}: "3", capacity.cluster-autoscaler.kubernetes.io/cpu: "1", capacity.cluster-autoscaler.kubernetes.io/memory: 1Gi}}
spec: {clusterName: c, template: {spec: {}}}
`;

    it('strict (default): the first invalid object throws, naming object and field', () => {
      expect(() => buildSnapshot(loadObjects(badGroup))).to.throw(
        ObjectValidationError, 'MachineDeployment default/small: annotation capacity.cluster-autoscaler.kubernetes.io/memory: invalid quantity "12Qi"',
      );
    });

    it('non-strict: skips invalid objects and reports them', () => {
      const issues: SnapshotIssue[] = [];
      const s = buildSnapshot(loadObjects(badGroup), { strict: false, onIssue: (i) => issues.push(i) });
      expect(s.groups.map((g) => g.name)).to.deep.equal(['ok']);
      expect(issues).to.deep.equal([{
        severity: 'error', message: 'MachineDeployment default/small: annotation capacity.cluster-autoscaler.kubernetes.io/memory: invalid quantity "12Qi"',
        // The controller's log line about it carries the object's kind, namespace and name.
        object: { kind: 'MachineDeployment', namespace: 'default', name: 'small' },
      }]);
    });

    it('names the pod field of a bad quantity', () => {
      const o = emptyClusterObjects();
      o.pods.push({ metadata: { name: 'p', namespace: 'x' }, spec: { containers: [{ name: 'a' }, { name: 'b', resources: { limits: { memory: '1Qi' } } }] } });
      expect(() => buildSnapshot(o)).to.throw(ObjectValidationError, 'Pod x/p: spec.containers[1].resources.limits.memory: invalid quantity "1Qi"');
      o.pods = [{ metadata: { name: 'p', namespace: 'x' }, spec: { resources: { requests: { cpu: 'two' } }, containers: [{ name: 'a' }] } }];
      expect(() => buildSnapshot(o)).to.throw(ObjectValidationError, 'Pod x/p: spec.resources.requests.cpu: invalid quantity "two"');
      o.pods = [{
        metadata: { name: 'p', namespace: 'x' }, spec: { nodeName: 'n', containers: [{ name: 'a' }] },
        status: { containerStatuses: [{ name: 'a', image: 'i', imageID: '', ready: true, restartCount: 0, resources: {}, allocatedResources: { memory: '1Qi' } }] },
      }];
      expect(() => buildSnapshot(o)).to.throw(ObjectValidationError, 'Pod x/p: status.containerStatuses[0].allocatedResources.memory: invalid quantity "1Qi"');
      o.pods = [];
      o.nodes.push({ metadata: { name: 'n' }, status: { allocatable: { cpu: 'lots' } } });
      expect(() => buildSnapshot(o)).to.throw(ObjectValidationError, 'Node n: status.allocatable.cpu: invalid quantity "lots"');
    });

    it('rejects non-string labels and nodeSelector values (unquoted YAML)', () => {
      expect(() => buildSnapshot(loadObjects('apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {nodeSelector: {gpu: true}, containers: []}\n')))
        .to.throw(ObjectValidationError, 'Pod default/p: spec.nodeSelector.gpu: must be a string, got true');
      expect(() => buildSnapshot(loadObjects('apiVersion: v1\nkind: Node\nmetadata: {name: n, labels: {tier: 1}}\n')))
        .to.throw(ObjectValidationError, 'Node n: metadata.labels.tier: must be a string, got 1');
    });

    it('rejects malformed lists in pods and nodes instead of crashing later', () => {
      expect(() => buildSnapshot(loadObjects('apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {tolerations: {key: x}, containers: []}\n')))
        .to.throw(ObjectValidationError, 'Pod default/p: spec.tolerations: must be a list, got an object');
      expect(() => buildSnapshot(loadObjects('apiVersion: v1\nkind: Node\nmetadata: {name: n}\nspec: {taints: gpu}\n')))
        .to.throw(ObjectValidationError, 'Node n: spec.taints: must be a list, got "gpu"');
      expect(() => buildSnapshot(loadObjects('apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: d, namespace: k}\nspec: {template: {spec: {tolerations: all}}}\n')))
        .to.throw(ObjectValidationError, 'DaemonSet k/d: spec.template.spec.tolerations: must be a list, got "all"');
    });

    it('warns about a managed group with no known shape and leaves it out', () => {
      const issues: SnapshotIssue[] = [];
      const s = buildSnapshot(loadObjects(`apiVersion: cluster.x-k8s.io/v1beta1
kind: MachineSet
metadata: {name: bare, namespace: default, annotations: {${MAX}: "3"}}
spec: {clusterName: c, template: {spec: {}}}
`), { onIssue: (i) => issues.push(i) });
      expect(s.groups).to.have.length(0);
      expect(issues[0]?.severity).to.equal('warning');
      expect(issues[0]?.message).to.match(/^MachineSet default\/bare: node shape unknown/);
    });
  });

  it('in-flight placeholders follow pending Machines and their failure domains', () => {
    const s = buildSnapshot(loadObjects(`apiVersion: cluster.x-k8s.io/v1beta2
kind: MachinePool
metadata: {name: mp, namespace: ns, annotations: {${MAX}: "9", capacity.cluster-autoscaler.kubernetes.io/cpu: "2", capacity.cluster-autoscaler.kubernetes.io/memory: 4Gi}}
spec: {clusterName: c, replicas: 3, failureDomains: [a, b], template: {spec: {}}}
---
apiVersion: cluster.x-k8s.io/v1beta2
kind: Machine
metadata: {name: mp-m1, namespace: ns, ownerReferences: [{apiVersion: cluster.x-k8s.io/v1beta2, kind: MachinePool, name: mp, uid: u, controller: true}]}
spec: {clusterName: c, failureDomain: b}
`));
    const inFlight = s.nodes.filter((n) => n.inFlight);
    expect(inFlight.map((n) => n.name)).to.deep.equal(['in-flight:ns/mp:mp-m1', 'in-flight:ns/mp:0', 'in-flight:ns/mp:1']);
    expect(inFlight.map((n) => n.labels['topology.kubernetes.io/zone'])).to.deep.equal(['b', undefined, undefined]);
    expect(s.groups[0]!.template.labels).to.not.have.property('topology.kubernetes.io/zone'); // two failure domains
  });

  it('a new Node has the labels CAPI will copy from its Machine before CAPI has copied them (no second scale-up meanwhile)', () => {
    const s = buildSnapshot(loadObjects(`apiVersion: cluster.x-k8s.io/v1beta2
kind: MachineDeployment
metadata: {name: md, namespace: ns, annotations: {${MAX}: "9", capacity.cluster-autoscaler.kubernetes.io/cpu: "2", capacity.cluster-autoscaler.kubernetes.io/memory: 4Gi}}
spec: {clusterName: c, replicas: 1, template: {metadata: {labels: {node.cluster.x-k8s.io/size: s, app.example/tier: a}}, spec: {}}}
---
apiVersion: cluster.x-k8s.io/v1beta2
kind: Machine
metadata: {name: m, namespace: ns, labels: {cluster.x-k8s.io/deployment-name: md, node.cluster.x-k8s.io/size: s, app.example/tier: a}}
spec: {clusterName: c}
status: {nodeRef: {name: n}}
---
apiVersion: v1
kind: Node
metadata: {name: n, labels: {kubernetes.io/hostname: n}}
status: {allocatable: {cpu: "2", memory: 4Gi, pods: "110"}}
`));
    const n = s.nodes.find((x) => x.name === 'n')!;
    expect(n.labels).to.deep.equal({ 'kubernetes.io/hostname': 'n', 'node.cluster.x-k8s.io/size': 's' });
  });

  it('a node whose Machine is being deleted does not count as a replica (its replacement is in flight)', () => {
    const s = buildSnapshot(loadObjects(`apiVersion: cluster.x-k8s.io/v1beta2
kind: MachineDeployment
metadata: {name: md, namespace: ns, annotations: {${MAX}: "9", capacity.cluster-autoscaler.kubernetes.io/cpu: "2", capacity.cluster-autoscaler.kubernetes.io/memory: 4Gi}}
spec: {clusterName: c, replicas: 2, template: {spec: {}}}
---
apiVersion: cluster.x-k8s.io/v1beta2
kind: Machine
metadata: {name: old, namespace: ns, deletionTimestamp: "2026-01-01T00:00:00Z", labels: {cluster.x-k8s.io/deployment-name: md}}
spec: {clusterName: c}
status: {nodeRef: {name: n-old}}
---
apiVersion: cluster.x-k8s.io/v1beta2
kind: Machine
metadata: {name: keep, namespace: ns, labels: {cluster.x-k8s.io/deployment-name: md}}
spec: {clusterName: c}
status: {nodeRef: {name: n-keep}}
---
apiVersion: v1
kind: Node
metadata: {name: n-old}
status: {allocatable: {cpu: "2", memory: 4Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: n-keep}
status: {allocatable: {cpu: "2", memory: 4Gi, pods: "110"}}
`));
    expect(s.nodes.map((n) => [n.name, n.inFlight, n.unschedulable, n.groupId])).to.deep.equal([
      ['n-old', false, true, 'MachineDeployment/ns/md'],
      ['n-keep', false, false, 'MachineDeployment/ns/md'],
      ['in-flight:ns/md:0', true, false, 'MachineDeployment/ns/md'],
    ]);
  });

  it('cordoned nodes and nodes of Machines marked for deletion are unschedulable', () => {
    const s = buildSnapshot(loadObjects(`apiVersion: v1
kind: Node
metadata: {name: cordoned}
spec: {unschedulable: true}
status: {allocatable: {cpu: "2", memory: 4Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: doomed}
status: {allocatable: {cpu: "2", memory: 4Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: fine}
status: {allocatable: {cpu: "2", memory: 4Gi, pods: "110"}}
---
apiVersion: cluster.x-k8s.io/v1beta2
kind: Machine
metadata: {name: m, namespace: default, annotations: {cluster.x-k8s.io/delete-machine: "yes"}}
spec: {clusterName: c}
status: {nodeRef: {name: doomed}}
`));
    expect(s.nodes.map((n) => [n.name, n.unschedulable])).to.deep.equal([['cordoned', true], ['doomed', true], ['fine', false]]);
  });

  it('each node carries its Machine, a node tainted headroom.dev/disrupted is unschedulable, and each NodePool\'s disruption settings are resolved once', () => {
    const s = buildSnapshot(loadObjects(`apiVersion: v1
kind: Node
metadata: {name: tainted}
spec: {taints: [{key: headroom.dev/disrupted, effect: NoSchedule}]}
status: {allocatable: {cpu: "2", memory: 4Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: doomed}
status: {allocatable: {cpu: "2", memory: 4Gi, pods: "110"}}
---
apiVersion: cluster.x-k8s.io/v1beta2
kind: Machine
metadata: {name: m, namespace: ns, annotations: {cluster.x-k8s.io/delete-machine: "yes"}}
spec: {clusterName: c}
status: {nodeRef: {name: doomed}}
---
apiVersion: headroom.dev/v1alpha1
kind: NodePool
metadata: {name: spot}
spec: {nodeGroupSelector: {}, disruption: {consolidationPolicy: WhenEmpty, consolidateAfter: 2m, budgets: [{nodes: "1"}]}}
`));
    expect(s.nodes.map((n) => [n.name, n.unschedulable, n.machine])).to.deep.equal([
      ['tainted', true, undefined],
      ['doomed', true, { namespace: 'ns', name: 'm', leaving: true }],
    ]);
    expect(s.disruption).to.deep.equal({
      spot: { consolidationPolicy: 'WhenEmpty', consolidateAfterMs: 120_000, expireAfterMs: null, budgets: [{ nodes: '1' }] },
    });
  });

  it('ignores the NoSchedule taints of starting nodes but keeps NoExecute and other taints', () => {
    const s = buildSnapshot(loadObjects(`apiVersion: v1
kind: Node
metadata: {name: starting}
spec:
  taints:
  - {key: node.kubernetes.io/not-ready, effect: NoSchedule}
  - {key: node.cloudprovider.kubernetes.io/uninitialized, value: "true", effect: NoSchedule}
  - {key: node.kubernetes.io/not-ready, effect: NoExecute}
  - {key: dedicated, value: infra, effect: NoSchedule}
status: {allocatable: {cpu: "2", memory: 4Gi, pods: "110"}}
`));
    expect(s.nodes[0]!.taints).to.deep.equal([
      { key: 'node.kubernetes.io/not-ready', effect: 'NoExecute' },
      { key: 'dedicated', value: 'infra', effect: 'NoSchedule' },
    ]);
  });

  it('generic ephemeral volumes: a pending pod gets its future claim from the template (or the default class)', () => {
    const s = buildSnapshot(loadObjects(`apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: std, annotations: {storageclass.kubernetes.io/is-default-class: "true"}}
provisioner: x
volumeBindingMode: WaitForFirstConsumer
---
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: ns}
spec:
  containers: [{name: c, image: x}]
  volumes:
  - name: scratch
    ephemeral: {volumeClaimTemplate: {spec: {storageClassName: zonal, accessModes: [ReadWriteOnce]}}}
  - name: cache
    ephemeral: {volumeClaimTemplate: {spec: {accessModes: [ReadWriteOnce]}}}
`));
    expect(s.pendingPods[0]!.claims).to.deep.equal(['p-scratch', 'p-cache']);
    expect(s.volumes.claims).to.deep.equal({
      'ns/p-scratch': { bound: false, storageClassName: 'zonal' },
      'ns/p-cache': { bound: false, storageClassName: 'std' },
    });
  });

  it('fills pool limits with usage of existing and in-flight nodes', () => {
    const s = buildSnapshot(loadObjects(`apiVersion: headroom.dev/v1alpha1
kind: NodePool
metadata: {name: general}
spec: {nodeGroupSelector: {matchLabels: {pool: general}}, limits: {cpu: "100", nodes: 10}}
---
apiVersion: cluster.x-k8s.io/v1beta2
kind: MachineDeployment
metadata: {name: md, namespace: default, labels: {pool: general}, annotations: {${MAX}: "9", capacity.cluster-autoscaler.kubernetes.io/cpu: "4", capacity.cluster-autoscaler.kubernetes.io/memory: 16Gi}}
spec: {clusterName: c, replicas: 2, template: {spec: {}}}
`));
    expect(s.groups[0]!.nodePool).to.equal('general');
    expect(s.limits).to.deep.equal({ general: { cpu: 100000, nodes: 10, used: { cpu: 8000, memory: 32 * GiB, nodes: 2 } } });
  });
});
