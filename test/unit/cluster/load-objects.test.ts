import { expect } from 'chai';
import { bucketOf, loadObjects, LoadError, parseObjects } from '../../../src/cluster/load-objects.js';

const multiDoc = `
apiVersion: v1
kind: Pod
metadata: {name: web-1, namespace: default}
spec: {containers: [{name: c, image: x}]}
---
# a comment-only document is fine
---
apiVersion: cluster.x-k8s.io/v1beta2
kind: MachineDeployment
metadata: {name: small, namespace: default}
---
apiVersion: cluster.x-k8s.io/v1beta1
kind: Machine
metadata: {name: small-abc, namespace: default}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: ignored}
---
apiVersion: headroom.dev/v1alpha1
kind: NodePool
metadata: {name: default}
`;

describe('loadObjects', () => {
  it('a .json file that is not JSON says invalid JSON, not invalid YAML (issue 25, item 8)', () => {
    expect(() => parseObjects('{"kind": "Pod", "apiVersion": "v1",}', 'pods.json')).to.throw(LoadError, /^pods\.json: invalid JSON: /);
    expect(() => parseObjects('kind: Pod\napiVersion: v1\n', 'pods.json')).to.throw(LoadError, /^pods\.json: invalid JSON: /);
    expect(parseObjects('{kind: Pod, apiVersion: v1}', 'pods.yaml')).to.have.length(1);
  });

  it('reads multi-document YAML into buckets, ignoring unknown kinds', () => {
    const o = loadObjects(multiDoc);
    expect(o.pods.map((p) => p.metadata?.name)).to.deep.equal(['web-1']);
    expect(o.nodeGroups.map((g) => g.metadata?.name)).to.deep.equal(['small']);
    expect(o.machines.map((g) => g.metadata?.name)).to.deep.equal(['small-abc']);
    expect(o.nodePools).to.have.length(1);
    expect(o.nodes).to.have.length(0);
  });

  it('reads a JSON List and kubectl -o yaml output (kind: List, nested)', () => {
    const json = JSON.stringify({
      apiVersion: 'v1', kind: 'List', items: [
        { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1' } },
        { apiVersion: 'v1', kind: 'PodList', items: [{ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'a' } }] },
      ],
    });
    const o = loadObjects(json);
    expect(o.nodes.map((n) => n.metadata?.name)).to.deep.equal(['n1']);
    expect(o.pods.map((n) => n.metadata?.name)).to.deep.equal(['p']);
    const yaml = 'apiVersion: v1\nkind: List\nitems:\n- apiVersion: storage.k8s.io/v1\n  kind: StorageClass\n  metadata:\n    name: gp3\n  volumeBindingMode: WaitForFirstConsumer\nmetadata:\n  resourceVersion: ""\n';
    expect(loadObjects(yaml).storageClasses.map((s) => s.metadata?.name)).to.deep.equal(['gp3']);
  });

  it('fills in apiVersion and kind of items of a typed API list (PodList, MachineDeploymentList)', () => {
    const o = loadObjects(JSON.stringify({
      apiVersion: 'v1', kind: 'PodList', metadata: { resourceVersion: '1' },
      items: [{ metadata: { name: 'a', namespace: 'x' }, spec: {} }, { metadata: { name: 'b', namespace: 'x' }, spec: {} }],
    }) + '\n');
    expect(o.pods.map((p) => [p.apiVersion, p.kind, p.metadata?.name])).to.deep.equal([['v1', 'Pod', 'a'], ['v1', 'Pod', 'b']]);
    const md = loadObjects(JSON.stringify({ apiVersion: 'cluster.x-k8s.io/v1beta2', kind: 'MachineDeploymentList', items: [{ metadata: { name: 'md' } }] }));
    expect(md.nodeGroups.map((g) => [g.apiVersion, g.kind])).to.deep.equal([['cluster.x-k8s.io/v1beta2', 'MachineDeployment']]);
    // A generic List still needs kinds on its items.
    expect(() => loadObjects('{"apiVersion":"v1","kind":"List","items":[{"metadata":{"name":"x"}}]}')).to.throw(LoadError, /no kind/);
  });

  it('reads PodTemplates (for CapacityBuffers) into their optional list', () => {
    const o = loadObjects('apiVersion: v1\nkind: PodTemplate\nmetadata: {name: t, namespace: x}\ntemplate: {spec: {containers: []}}\n');
    expect(o.podTemplates?.map((t) => t.metadata?.name)).to.deep.equal(['t']);
    expect(loadObjects('').podTemplates ?? []).to.deep.equal([]);
  });

  it('merges several sources; a later duplicate replaces an earlier one', () => {
    const o = loadObjects([
      { source: 'a.yaml', text: 'apiVersion: v1\nkind: Node\nmetadata: {name: n1, labels: {v: "1"}}\n' },
      { source: 'b.yaml', text: 'apiVersion: v1\nkind: Node\nmetadata: {name: n1, labels: {v: "2"}}\n---\napiVersion: v1\nkind: Node\nmetadata: {name: n2}\n' },
    ]);
    expect(o.nodes.map((n) => [n.metadata?.name, n.metadata?.labels?.v])).to.deep.equal([['n1', '2'], ['n2', undefined]]);
  });

  it('classifies kinds by group and version', () => {
    expect(bucketOf({ apiVersion: 'apps/v1', kind: 'DaemonSet' })).to.equal('daemonSets');
    expect(bucketOf({ apiVersion: 'policy/v1', kind: 'PodDisruptionBudget' })).to.equal('podDisruptionBudgets');
    expect(bucketOf({ apiVersion: 'cluster.x-k8s.io/v1beta1', kind: 'MachinePool' })).to.equal('nodeGroups');
    expect(bucketOf({ apiVersion: 'autoscaling.x-k8s.io/v1beta1', kind: 'CapacityBuffer' })).to.equal('capacityBuffers');
    expect(bucketOf({ apiVersion: 'v1', kind: 'Namespace' })).to.equal('namespaces');
    expect(bucketOf({ apiVersion: 'v1', kind: 'PodTemplate' })).to.equal('podTemplates');
    expect(bucketOf({ apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta2', kind: 'Machine' })).to.equal(undefined);
    expect(bucketOf({ apiVersion: 'apps/v1', kind: 'ControllerRevision' })).to.equal(undefined);
  });

  it('reads the capacity APIs and what they reference (scalableRef workloads, quotas)', () => {
    expect(bucketOf({ apiVersion: 'autoscaling.x-k8s.io/v1', kind: 'ProvisioningRequest' })).to.equal('provisioningRequests');
    expect(bucketOf({ apiVersion: 'autoscaling.x-k8s.io/v1alpha1', kind: 'CapacityBuffer' })).to.equal('capacityBuffers');
    expect(bucketOf({ apiVersion: 'apps/v1', kind: 'Deployment' })).to.equal('deployments');
    expect(bucketOf({ apiVersion: 'apps/v1', kind: 'StatefulSet' })).to.equal('statefulSets');
    expect(bucketOf({ apiVersion: 'apps/v1', kind: 'ReplicaSet' })).to.equal('replicaSets');
    expect(bucketOf({ apiVersion: 'batch/v1', kind: 'Job' })).to.equal('jobs');
    expect(bucketOf({ apiVersion: 'v1', kind: 'ResourceQuota' })).to.equal('resourceQuotas');
    // Prediction's signals (headroom plan lists the pods they announce).
    expect(bucketOf({ apiVersion: 'batch/v1', kind: 'CronJob' })).to.equal('cronJobs');
    expect(bucketOf({ apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler' })).to.equal('horizontalPodAutoscalers');
  });

  it('reports broken YAML with source, document and line', () => {
    const text = 'apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n---\napiVersion: v1\nkind: Pod\nmetadata: [unclosed\n';
    expect(() => parseObjects(text, 'cluster.yaml')).to.throw(LoadError, /^cluster\.yaml: document 2 \(line \d+, column \d+\): invalid YAML: /);
    try {
      parseObjects(text, 'cluster.yaml');
    } catch (err) {
      expect((err as Error).message).to.not.include('\n');
    }
  });

  it('rejects documents that are not objects, or lack kind/apiVersion', () => {
    expect(() => parseObjects('- a\n- b\n', 'f')).to.throw(LoadError, 'f: document 1: not a Kubernetes object (got a list)');
    expect(() => parseObjects('just a string\n', 'f')).to.throw(LoadError, /document 1: not a Kubernetes object \(got string\)/);
    expect(() => parseObjects('metadata: {name: x}\n', 'f')).to.throw(LoadError, /no kind/);
    expect(() => parseObjects('kind: Pod\n', 'f')).to.throw(LoadError, 'f: document 1: Pod has no apiVersion');
    expect(() => parseObjects('{"kind":"List","items":[3]}', 'f')).to.throw(LoadError, 'f: document 1 items[0]: not a Kubernetes object (got number)');
  });

  it('accepts empty input, and YAML flow documents that look like JSON', () => {
    expect(parseObjects('', 'f')).to.deep.equal([]);
    expect(parseObjects('{kind: Node, apiVersion: v1, metadata: {name: n}}', 'f')).to.have.length(1);
  });
});
