import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CRD_FIELDS_FILE, crdFieldsSource } from '../../../scripts/crd-fields.js';
import { LoadError, loadObjects } from '../../../src/cluster/load-objects.js';
import { strictProblem } from '../../../src/cluster/known-fields.js';

const REPO = join(fileURLToPath(import.meta.url), '..', '..', '..', '..');

const pod = (spec: object, extra: object = {}): string => JSON.stringify({
  apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web', namespace: 'shop' }, spec, ...extra,
});
const group = (spec: object, kind = 'MachineDeployment', apiVersion = 'cluster.x-k8s.io/v1beta2'): string => JSON.stringify({
  apiVersion, kind, metadata: { name: 'md-0', namespace: 'default', annotations: { 'cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size': '3' } }, spec,
});
const load = (text: string, source = 'in.yaml'): unknown => loadObjects({ source, text });

describe('unknown fields in plan -f input (issue 25, item 4)', () => {
  it('refuses a misspelt Pod field, naming the file, the object and the field', () => {
    expect(() => load(pod({ nodeSelecter: { a: 'b' }, containers: [{ name: 'c' }] }), 'pods.yaml'))
      .to.throw(LoadError, /^pods\.yaml: Pod shop\/web: spec\.nodeSelecter: unknown field \(did you mean nodeSelector\?\)$/);
  });

  it('refuses a misspelt container field, deep in a Deployment too', () => {
    expect(() => load(pod({ containers: [{ name: 'c', resources: { requets: { cpu: '1' } } }] })))
      .to.throw(LoadError, /Pod shop\/web: spec\.containers\[0\]\.resources\.requets: unknown field \(did you mean requests\?\)/);
    const deployment = JSON.stringify({
      apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd', namespace: 'shop' },
      spec: { replicas: 2, template: { spec: { containers: [{ name: 'c' }], tolerations: [{ key: 'k', efect: 'NoSchedule' }] } } },
    });
    expect(() => load(deployment)).to.throw(LoadError, /Deployment shop\/d: spec\.template\.spec\.tolerations\[0\]\.efect: unknown field/);
  });

  it('refuses a NodePool limts, from the CRD schema', () => {
    const np = JSON.stringify({ apiVersion: 'headroom.dev/v1alpha1', kind: 'NodePool', metadata: { name: 'default' }, spec: { limts: { cpu: '1' } } });
    expect(() => load(np)).to.throw(LoadError, /^in\.yaml: NodePool default: spec\.limts: unknown field \(did you mean limits\?\)$/);
    const budget = JSON.stringify({ apiVersion: 'headroom.dev/v1alpha1', kind: 'NodePool', metadata: { name: 'default' }, spec: { disruption: { budgets: [{ node: '1' }] } } });
    expect(() => load(budget)).to.throw(LoadError, /spec\.disruption\.budgets\[0\]\.node: unknown field \(did you mean nodes\?\)/);
  });

  it('refuses a misspelt kind in a group Headroom reads', () => {
    expect(() => load(group({ replicas: 1 }, 'MachineDeployement'))).to.throw(LoadError,
      /^in\.yaml: MachineDeployement default\/md-0: kind: unknown kind MachineDeployement in cluster\.x-k8s\.io\/v1beta2 \(did you mean MachineDeployment\?\)$/);
    expect(() => load(JSON.stringify({ apiVersion: 'v1', kind: 'Pdo', metadata: { name: 'p' } }))).to.throw(LoadError, /unknown kind Pdo in v1 \(did you mean Pod\?\)/);
    // Real kinds Headroom does not read are still ignored, in checked groups and others.
    const ignored = [
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { a: 'b' } },
      { apiVersion: 'cluster.x-k8s.io/v1beta2', kind: 'MachineHealthCheck', metadata: { name: 'm' }, spec: { anything: 1 } },
      { apiVersion: 'example.com/v1', kind: 'Widjet', metadata: { name: 'w' } },
      { apiVersion: 'v1', kind: 'List', items: [] },
    ];
    expect(() => load(ignored.map((o) => JSON.stringify(o)).join('\n---\n'))).to.not.throw();
  });

  it('refuses a misspelt MachineDeployment field, and takes every real one of v1beta1 and v1beta2', () => {
    expect(() => load(group({ replicas: 1, templte: {} }))).to.throw(LoadError, /MachineDeployment default\/md-0: spec\.templte: unknown field \(did you mean template\?\)/);
    expect(() => load(group({ template: { spec: { infrastructureref: {} } } }))).to.throw(LoadError, /spec\.template\.spec\.infrastructureref: unknown field \(did you mean infrastructureRef\?\)/);
    const v1beta1 = {
      clusterName: 'c', replicas: 1, selector: {}, strategy: { type: 'RollingUpdate' }, minReadySeconds: 0, revisionHistoryLimit: 1, paused: false,
      progressDeadlineSeconds: 600, rolloutAfter: '2026-01-01T00:00:00Z', machineNamingStrategy: { template: 'x' },
      template: { metadata: { labels: {} }, spec: { clusterName: 'c', bootstrap: { configRef: {} }, infrastructureRef: {}, version: 'v1.36.0', nodeDrainTimeout: '1m', nodeDeletionTimeout: '1m', nodeVolumeDetachTimeout: '1m', failureDomain: 'a', providerID: 'x', readinessGates: [], taints: [] } },
    };
    const v1beta2 = {
      clusterName: 'c', replicas: 1, selector: {}, rollout: { strategy: {} }, machineNaming: {}, remediation: {}, deletion: { order: 'Random' }, paused: false,
      template: { spec: { clusterName: 'c', bootstrap: {}, infrastructureRef: {}, deletion: {}, minReadySeconds: 0 } },
    };
    expect(() => load(group(v1beta1, 'MachineDeployment', 'cluster.x-k8s.io/v1beta1'))).to.not.throw();
    expect(() => load(group(v1beta2))).to.not.throw();
  });

  it('takes every top-level Pod spec field of the upstream API, fields under status, and the whole of ObjectMeta', () => {
    const spec = {
      activeDeadlineSeconds: 1, affinity: {}, automountServiceAccountToken: true, containers: [{ name: 'c', image: 'x', env: [{ name: 'A', value: 'b' }], resources: { claims: [{ name: 'x' }] } }],
      dnsConfig: {}, dnsPolicy: 'ClusterFirst', enableServiceLinks: true, ephemeralContainers: [], hostAliases: [], hostIPC: false, hostNetwork: false,
      hostPID: false, hostUsers: true, hostname: 'h', imagePullSecrets: [], initContainers: [], nodeName: 'n', nodeSelector: {}, os: { name: 'linux' },
      overhead: {}, preemptionPolicy: 'Never', priority: 0, priorityClassName: 'p', readinessGates: [], resourceClaims: [], resources: {}, restartPolicy: 'Always',
      runtimeClassName: 'r', schedulerName: 's', schedulingGates: [], securityContext: {}, serviceAccount: 's', serviceAccountName: 's', setHostnameAsFQDN: false,
      shareProcessNamespace: false, subdomain: 's', terminationGracePeriodSeconds: 30, tolerations: [], topologySpreadConstraints: [], volumes: [{ name: 'v', emptyDir: {} }],
    };
    const metadata = { name: 'web', namespace: 'shop', labels: {}, annotations: {}, generateName: 'w-', ownerReferences: [{ apiVersion: 'v1', kind: 'X', name: 'x', uid: 'u', controller: true, blockOwnerDeletion: true }], finalizers: [] };
    expect(() => load(pod(spec, { metadata, status: { phase: 'Pending', aFieldOfKubernetes2030: 1 } }))).to.not.throw();
    expect(() => load(pod({}, { metadata: { name: 'web', lables: {} } }))).to.throw(LoadError, /Pod web: metadata\.lables: unknown field \(did you mean labels\?\)/);
  });

  it('does not check objects read from an apiserver (metadata.uid or resourceVersion): it has already refused unknown fields', () => {
    expect(strictProblem({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', uid: 'u' }, spec: { fieldOfANewerKubernetes: 1 } } as never)).to.equal(undefined);
    expect(strictProblem({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', resourceVersion: '7' }, spec: { fieldOfANewerKubernetes: 1 } } as never)).to.equal(undefined);
    expect(strictProblem({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { fieldOfANewerKubernetes: 1 } } as never)).to.match(/unknown field/);
  });

  it('the test fixtures and the example manifests in docs pass', () => {
    for (const f of ['example-cluster.yaml', 'scale-from-zero.yaml', 'gpu-cluster.yaml', 'capacity-apis.yaml']) {
      expect(() => load(readFileSync(join(REPO, 'test', 'fixtures', f), 'utf8'), f)).to.not.throw();
    }
  });

  it('src/cluster/crd-fields.ts is what scripts/crd-fields.ts writes from the CRDs (run it after changing a CRD)', () => {
    expect(readFileSync(join(REPO, CRD_FIELDS_FILE), 'utf8')).to.equal(crdFieldsSource());
  });
});
