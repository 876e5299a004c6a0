/**
 * Fleet mode's least privilege (docs/fleet.md#least-privilege), on a real kube-apiserver:
 * the chart's RBAC, rendered by the real `helm template`, applied, and then exercised by
 * real requests with a real ServiceAccount token of each identity:
 * - `mode: fleet-workload`: the identity a workload cluster's least-privilege kubeconfig
 *   uses. It reads what the per-cluster controller watches and writes only node taints,
 *   evictions, Events and capacity-API status; it gets 403 on Secrets, ConfigMaps, pod
 *   writes, deletes of nodes and namespaces, and on Cluster API objects (the CRDs are
 *   served here, so the 403 is RBAC's, not a missing API: the groups live in the
 *   management cluster);
 * - `mode: fleet`: the fleet's own identity in the management cluster. It scales a
 *   MachineDeployment through the scale subresource, reads a selected Cluster's
 *   kubeconfig Secret by name, keeps its Leases and writes the Cluster's status; it gets
 *   403 on listing Secrets, on Secrets outside fleet.namespace, on workload objects and on
 *   deletes of groups and namespaces.
 * One apiserver plays both clusters: the identities are apart by their bindings only.
 */
import { expect } from 'chai';
import { KubeConfig } from '@kubernetes/client-node';
import type { V1CustomResourceDefinition } from '@kubernetes/client-node';
import { stringify as toYaml } from 'yaml';
import { type ControlPlane, startControlPlane } from '../harness/control-plane.js';
import { installCrds } from '../harness/crds.js';
import { KubeRequestError, kubeRequest } from '../harness/kube-request.js';
import { eventually } from '../harness/wait.js';
import { type K8sObject, ofKind, renderChart } from './helm-chart.js';
import { machineDeployment, pendingPod } from './controller-objects.js';

const WL_NS = 'headroom-workload';
const SYSTEM = 'headroom-system';
const CLUSTERS = 'clusters';
const APPS = 'apps';
const DOOMED = 'doomed';
const CAPI = '/apis/cluster.x-k8s.io/v1beta2';
const LEASES = `/apis/coordination.k8s.io/v1/namespaces/${SYSTEM}/leases`;
const microNow = () => new Date().toISOString().replace('Z', '000Z');

/** A request and the status it must get. */
interface Check { what: string; method: string; path: string; body?: unknown; contentType?: string; expect: number }

const RBAC_PATHS: Record<string, (o: K8sObject) => string> = {
  ServiceAccount: (o) => `/api/v1/namespaces/${o.metadata.namespace}/serviceaccounts`,
  ClusterRole: () => '/apis/rbac.authorization.k8s.io/v1/clusterroles',
  ClusterRoleBinding: () => '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings',
  Role: (o) => `/apis/rbac.authorization.k8s.io/v1/namespaces/${o.metadata.namespace}/roles`,
  RoleBinding: (o) => `/apis/rbac.authorization.k8s.io/v1/namespaces/${o.metadata.namespace}/rolebindings`,
};

/** The status a request gets (2xx as the code it would have: 200, 201). */
async function statusOf(kc: KubeConfig, c: Check): Promise<number> {
  try {
    await kubeRequest(kc, c.method, c.path, c.body, c.contentType);
    return c.method === 'POST' ? 201 : 200;
  } catch (err) {
    if (err instanceof KubeRequestError) return err.code;
    throw err;
  }
}

/** Every check whose status differs, as "what: METHOD path: got N, want M". */
async function mismatches(kc: KubeConfig, checks: readonly Check[]): Promise<string[]> {
  const out: string[] = [];
  for (const c of checks) {
    const got = await statusOf(kc, c);
    // Created or OK are both success; the checks say 200 for any 2xx but POST.
    const ok = c.expect === 403 ? got === 403 : got >= 200 && got < 300;
    if (!ok) out.push(`${c.what}: ${c.method} ${c.path}: got ${got}, want ${c.expect}`);
  }
  return out;
}

describe('fleet mode RBAC from the chart: the workload-cluster identity and the fleet identity, by real requests', function () {
  this.timeout(300_000);
  let cp: ControlPlane;
  let admin: KubeConfig;
  /** Capacity-API plural -> the version its CRD stores. */
  const storage = new Map<string, string>();

  /** A kubeconfig holding a fresh token of `namespace/name`: nothing but its RBAC. */
  async function as(namespace: string, name: string): Promise<KubeConfig> {
    const r = await kubeRequest(admin, 'POST', `/api/v1/namespaces/${namespace}/serviceaccounts/${name}/token`, {
      apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 },
    }) as { status: { token: string } };
    const kc = new KubeConfig();
    kc.loadFromString(toYaml({
      apiVersion: 'v1', kind: 'Config',
      clusters: [{ name: 'c', cluster: { server: cp.server, 'certificate-authority-data': Buffer.from(cp.ca.certPem).toString('base64') } }],
      users: [{ name: 'sa', user: { token: r.status.token } }],
      contexts: [{ name: 'sa', context: { cluster: 'c', user: 'sa' } }],
      'current-context': 'sa',
    }));
    return kc;
  }

  /** Applies the rendered identity and RBAC objects; returns the kinds of what it left out. */
  async function applyRbac(objects: K8sObject[]): Promise<string[]> {
    const skipped: string[] = [];
    for (const o of objects) {
      const path = RBAC_PATHS[o.kind];
      if (!path) {
        skipped.push(o.kind);
        continue;
      }
      await kubeRequest(admin, 'POST', path(o), o);
    }
    return skipped.sort();
  }

  before(async function () {
    this.timeout(300_000);
    // CAPI's CRDs and ours: the CAPI groups are served, so a 403 on them is RBAC's.
    cp = await startControlPlane({});
    admin = cp.kubeConfig();
    for (const name of [WL_NS, SYSTEM, CLUSTERS, APPS, DOOMED]) await kubeRequest(admin, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    // The capacity APIs, as the chart ships them (mode: workload renders them).
    const crds = ofKind<V1CustomResourceDefinition>(await renderChart(WL_NS, { 'capacityApis.installCrds': true }), 'CustomResourceDefinition');
    expect(crds.map((c) => c.metadata.name).sort()).to.deep.equal(['capacitybuffers.autoscaling.x-k8s.io', 'provisioningrequests.autoscaling.x-k8s.io']);
    await installCrds(admin, crds.map((crd) => ({ crd, source: 'charts/headroom/templates/autoscaling-crds.yaml' })));
    for (const crd of crds) storage.set(crd.spec.names.plural, crd.spec.versions.find((v) => v.storage)!.name);
  });

  after(async function () {
    this.timeout(60_000);
    await cp?.stop();
  });

  it('mode: fleet-workload: reads and taints what scaling needs in a workload cluster, and gets 403 on Secrets, pod writes, deletes and CAPI objects', async () => {
    const objects = await renderChart(WL_NS, { mode: 'fleet-workload' }, 'wl');
    expect(await applyRbac(objects), 'fleet-workload renders nothing but its identity and RBAC').to.deep.equal([]);
    const sa = ofKind(objects, 'ServiceAccount');
    expect(sa).to.have.length(1);
    expect(objects.map((o) => o.kind).sort()).to.deep.equal(['ClusterRole', 'ClusterRoleBinding', 'ServiceAccount']);

    // What the checks act on, made by the admin.
    await kubeRequest(admin, 'POST', '/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1', labels: { 'kubernetes.io/hostname': 'n1' } } });
    for (const name of ['p1', 'p-evict']) await kubeRequest(admin, 'POST', `/api/v1/namespaces/${APPS}/pods`, pendingPod(APPS, name, '1'));
    await kubeRequest(admin, 'POST', `/api/v1/namespaces/${APPS}/secrets`, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's1' }, stringData: { k: 'v' } });
    await kubeRequest(admin, 'POST', `/api/v1/namespaces/${APPS}/configmaps`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c1' }, data: { k: 'v' } });
    await kubeRequest(admin, 'POST', `${CAPI}/namespaces/${APPS}/machinedeployments`, machineDeployment({ namespace: APPS, name: 'md', clusterName: 'wl', replicas: 1, min: 0, max: 5 }));

    const kc = await as(WL_NS, sa[0]!.metadata.name);
    // RBAC reaches the authorizer through its informers: wait for the first grant.
    await eventually('the fleet-workload binding in effect', async () => (await statusOf(kc, { what: '', method: 'GET', path: '/api/v1/nodes', expect: 200 })) === 200, { timeoutMs: 30_000 });

    const allowed: Check[] = [
      { what: 'list pods, every namespace', method: 'GET', path: '/api/v1/pods', expect: 200 },
      { what: 'watch pods', method: 'GET', path: `/api/v1/namespaces/${APPS}/pods?watch=true&timeoutSeconds=1&fieldSelector=metadata.name%3Dnone`, expect: 200 },
      { what: 'list nodes', method: 'GET', path: '/api/v1/nodes', expect: 200 },
      { what: 'get a node', method: 'GET', path: '/api/v1/nodes/n1', expect: 200 },
      { what: 'list namespaces', method: 'GET', path: '/api/v1/namespaces', expect: 200 },
      { what: 'list PVs', method: 'GET', path: '/api/v1/persistentvolumes', expect: 200 },
      { what: 'list PVCs', method: 'GET', path: '/api/v1/persistentvolumeclaims', expect: 200 },
      { what: 'list DaemonSets', method: 'GET', path: '/apis/apps/v1/daemonsets', expect: 200 },
      { what: 'list Deployments', method: 'GET', path: '/apis/apps/v1/deployments', expect: 200 },
      { what: 'list StatefulSets', method: 'GET', path: '/apis/apps/v1/statefulsets', expect: 200 },
      { what: 'list ReplicaSets', method: 'GET', path: '/apis/apps/v1/replicasets', expect: 200 },
      { what: 'list Jobs', method: 'GET', path: '/apis/batch/v1/jobs', expect: 200 },
      { what: 'list CronJobs (prediction)', method: 'GET', path: '/apis/batch/v1/cronjobs', expect: 200 },
      { what: 'list HPAs (prediction)', method: 'GET', path: '/apis/autoscaling/v2/horizontalpodautoscalers', expect: 200 },
      { what: 'list PDBs', method: 'GET', path: '/apis/policy/v1/poddisruptionbudgets', expect: 200 },
      { what: 'list StorageClasses', method: 'GET', path: '/apis/storage.k8s.io/v1/storageclasses', expect: 200 },
      { what: 'list CSINodes', method: 'GET', path: '/apis/storage.k8s.io/v1/csinodes', expect: 200 },
      { what: 'list ResourceSlices (DRA)', method: 'GET', path: '/apis/resource.k8s.io/v1/resourceslices', expect: 200 },
      { what: 'list CapacityBuffers', method: 'GET', path: `/apis/autoscaling.x-k8s.io/${storage.get('capacitybuffers')}/capacitybuffers`, expect: 200 },
      { what: 'list ProvisioningRequests', method: 'GET', path: `/apis/autoscaling.x-k8s.io/${storage.get('provisioningrequests')}/provisioningrequests`, expect: 200 },
      { what: 'list PodTemplates', method: 'GET', path: '/api/v1/podtemplates', expect: 200 },
      { what: 'list ResourceQuotas', method: 'GET', path: '/api/v1/resourcequotas', expect: 200 },
      { what: 'list NodePools (told they are ignored here)', method: 'GET', path: '/apis/headroom.dev/v1alpha1/nodepools', expect: 200 },
      {
        what: 'taint a node (disruption)', method: 'PATCH', path: '/api/v1/nodes/n1',
        body: { spec: { taints: [{ key: 'headroom.dev/disrupted', effect: 'NoSchedule' }] } }, contentType: 'application/merge-patch+json', expect: 200,
      },
      {
        what: 'create an Event', method: 'POST', path: `/apis/events.k8s.io/v1/namespaces/${APPS}/events`, expect: 201,
        body: {
          apiVersion: 'events.k8s.io/v1', kind: 'Event', metadata: { name: 'rbac-check' }, eventTime: microNow(), type: 'Normal', reason: 'ScaledUp', action: 'Scale',
          reportingController: 'headroom.dev/controller', reportingInstance: 'rbac-check', note: 'checked', regarding: { apiVersion: 'v1', kind: 'Pod', namespace: APPS, name: 'p1' },
        },
      },
      {
        what: 'evict a pod (drain)', method: 'POST', path: `/api/v1/namespaces/${APPS}/pods/p-evict/eviction`, expect: 201,
        body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'p-evict', namespace: APPS } },
      },
    ];
    const denied: Check[] = [
      { what: 'get a Secret', method: 'GET', path: `/api/v1/namespaces/${APPS}/secrets/s1`, expect: 403 },
      { what: 'list Secrets', method: 'GET', path: '/api/v1/secrets', expect: 403 },
      { what: 'get a ConfigMap', method: 'GET', path: `/api/v1/namespaces/${APPS}/configmaps/c1`, expect: 403 },
      { what: 'create a pod', method: 'POST', path: `/api/v1/namespaces/${APPS}/pods`, body: pendingPod(APPS, 'p-new', '1'), expect: 403 },
      { what: 'patch a pod', method: 'PATCH', path: `/api/v1/namespaces/${APPS}/pods/p1`, body: { metadata: { labels: { x: 'y' } } }, contentType: 'application/merge-patch+json', expect: 403 },
      { what: 'delete a pod', method: 'DELETE', path: `/api/v1/namespaces/${APPS}/pods/p1`, expect: 403 },
      { what: 'delete a node', method: 'DELETE', path: '/api/v1/nodes/n1', expect: 403 },
      { what: 'delete a namespace', method: 'DELETE', path: `/api/v1/namespaces/${DOOMED}`, expect: 403 },
      { what: 'get a MachineDeployment (CAPI is the management cluster\'s)', method: 'GET', path: `${CAPI}/namespaces/${APPS}/machinedeployments/md`, expect: 403 },
      {
        what: 'scale a MachineDeployment here', method: 'PATCH', path: `${CAPI}/namespaces/${APPS}/machinedeployments/md/scale`,
        body: { spec: { replicas: 3 } }, contentType: 'application/merge-patch+json', expect: 403,
      },
      { what: 'create a Lease (the fleet\'s Leases are in the management cluster)', method: 'POST', path: `/apis/coordination.k8s.io/v1/namespaces/${WL_NS}/leases`, body: { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'x' }, spec: {} }, expect: 403 },
      {
        what: 'bind itself cluster-admin', method: 'POST', path: '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', expect: 403,
        body: { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: 'escalate' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' }, subjects: [{ kind: 'ServiceAccount', name: sa[0]!.metadata.name, namespace: WL_NS }] },
      },
    ];
    expect(await mismatches(kc, allowed), 'what scaling needs in the workload cluster').to.deep.equal([]);
    expect(await mismatches(kc, denied), 'what the workload identity must not do').to.deep.equal([]);

    // And nothing refused happened anyway; what was allowed did.
    const ns = await kubeRequest(admin, 'GET', `/api/v1/namespaces/${DOOMED}`) as { metadata: { deletionTimestamp?: string } };
    expect(ns.metadata.deletionTimestamp).to.equal(undefined);
    const md = await kubeRequest(admin, 'GET', `${CAPI}/namespaces/${APPS}/machinedeployments/md`) as { spec: { replicas: number } };
    expect(md.spec.replicas).to.equal(1);
    const node = await kubeRequest(admin, 'GET', '/api/v1/nodes/n1') as { spec: { taints?: Array<{ key: string }> } };
    expect(node.spec.taints?.map((t) => t.key)).to.deep.equal(['headroom.dev/disrupted']);
    await eventually('the evicted pod gone', async () => (await statusOf(admin, { what: '', method: 'GET', path: `/api/v1/namespaces/${APPS}/pods/p-evict`, expect: 404 })) === 404, { timeoutMs: 30_000 });
  });

  it('mode: fleet: scales a MachineDeployment, reads a selected Cluster\'s kubeconfig Secret by name, keeps its Leases; 403 on listing Secrets, other namespaces\' Secrets, workload objects and deletes', async () => {
    const objects = await renderChart(SYSTEM, { mode: 'fleet', 'fleet.namespace': CLUSTERS }, 'hr');
    expect(await applyRbac(objects), 'only the Deployment and its PDB are left out').to.deep.equal(['Deployment', 'PodDisruptionBudget']);
    const sa = ofKind(objects, 'ServiceAccount')[0]!.metadata.name;

    await kubeRequest(admin, 'POST', `${CAPI}/namespaces/${CLUSTERS}/clusters`, { apiVersion: 'cluster.x-k8s.io/v1beta2', kind: 'Cluster', metadata: { name: 'a', namespace: CLUSTERS }, spec: { paused: false } });
    await kubeRequest(admin, 'POST', `${CAPI}/namespaces/${CLUSTERS}/machinedeployments`, machineDeployment({ namespace: CLUSTERS, name: 'a-md', clusterName: 'a', replicas: 1, min: 0, max: 5 }));
    await kubeRequest(admin, 'POST', `/api/v1/namespaces/${CLUSTERS}/secrets`, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'a-kubeconfig' }, stringData: { value: 'kubeconfig' } });
    await kubeRequest(admin, 'POST', `/api/v1/namespaces/${SYSTEM}/secrets`, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'other' }, stringData: { k: 'v' } });

    const kc = await as(SYSTEM, sa);
    await eventually('the fleet bindings in effect', async () => (await statusOf(kc, { what: '', method: 'GET', path: `${CAPI}/clusters`, expect: 200 })) === 200
      && (await statusOf(kc, { what: '', method: 'GET', path: LEASES, expect: 200 })) === 200, { timeoutMs: 30_000 });

    const cluster = await kubeRequest(admin, 'GET', `${CAPI}/namespaces/${CLUSTERS}/clusters/a`) as K8sObject;
    const allowed: Check[] = [
      { what: 'list Clusters, every namespace', method: 'GET', path: `${CAPI}/clusters`, expect: 200 },
      { what: 'read the selected Cluster\'s kubeconfig Secret by name', method: 'GET', path: `/api/v1/namespaces/${CLUSTERS}/secrets/a-kubeconfig`, expect: 200 },
      { what: 'list MachineDeployments', method: 'GET', path: `${CAPI}/machinedeployments`, expect: 200 },
      {
        what: 'scale a MachineDeployment', method: 'PATCH', path: `${CAPI}/namespaces/${CLUSTERS}/machinedeployments/a-md/scale`,
        body: { spec: { replicas: 3 } }, contentType: 'application/merge-patch+json', expect: 200,
      },
      { what: 'write the Cluster\'s status (HeadroomAutoscaling)', method: 'PUT', path: `${CAPI}/namespaces/${CLUSTERS}/clusters/a/status`, body: cluster, expect: 200 },
      { what: 'list NodePools', method: 'GET', path: '/apis/headroom.dev/v1alpha1/nodepools', expect: 200 },
      {
        what: 'create a Lease', method: 'POST', path: LEASES, expect: 201,
        body: { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'headroom-fleet-check', labels: { 'headroom.dev/fleet': 'replica' } }, spec: { holderIdentity: 'check', leaseDurationSeconds: 8 } },
      },
      { what: 'list Leases', method: 'GET', path: `${LEASES}?labelSelector=headroom.dev%2Ffleet`, expect: 200 },
      {
        what: 'create an Event', method: 'POST', path: `/apis/events.k8s.io/v1/namespaces/${CLUSTERS}/events`, expect: 201,
        body: {
          apiVersion: 'events.k8s.io/v1', kind: 'Event', metadata: { name: 'rbac-check' }, eventTime: microNow(), type: 'Normal', reason: 'Autoscaling', action: 'Own',
          reportingController: 'headroom.dev/fleet', reportingInstance: 'rbac-check', note: 'checked', regarding: { apiVersion: 'cluster.x-k8s.io/v1beta2', kind: 'Cluster', namespace: CLUSTERS, name: 'a' },
        },
      },
    ];
    const denied: Check[] = [
      { what: 'list Secrets in fleet.namespace (get by name only)', method: 'GET', path: `/api/v1/namespaces/${CLUSTERS}/secrets`, expect: 403 },
      { what: 'list Secrets, every namespace', method: 'GET', path: '/api/v1/secrets', expect: 403 },
      { what: 'get a Secret outside fleet.namespace', method: 'GET', path: `/api/v1/namespaces/${SYSTEM}/secrets/other`, expect: 403 },
      { what: 'delete a kubeconfig Secret', method: 'DELETE', path: `/api/v1/namespaces/${CLUSTERS}/secrets/a-kubeconfig`, expect: 403 },
      { what: 'delete a MachineDeployment', method: 'DELETE', path: `${CAPI}/namespaces/${CLUSTERS}/machinedeployments/a-md`, expect: 403 },
      { what: 'change a Cluster\'s spec', method: 'PATCH', path: `${CAPI}/namespaces/${CLUSTERS}/clusters/a`, body: { spec: { paused: true } }, contentType: 'application/merge-patch+json', expect: 403 },
      { what: 'delete a namespace', method: 'DELETE', path: `/api/v1/namespaces/${DOOMED}`, expect: 403 },
      { what: 'create a Lease outside the release namespace', method: 'POST', path: `/apis/coordination.k8s.io/v1/namespaces/${CLUSTERS}/leases`, body: { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'x' }, spec: {} }, expect: 403 },
      { what: 'list pods (workload clusters are reached through their kubeconfigs)', method: 'GET', path: '/api/v1/pods', expect: 403 },
      { what: 'list nodes', method: 'GET', path: '/api/v1/nodes', expect: 403 },
    ];
    expect(await mismatches(kc, allowed), 'what the fleet needs in the management cluster').to.deep.equal([]);
    expect(await mismatches(kc, denied), 'what the fleet identity must not do').to.deep.equal([]);
    // The Lease's delete, preconditioned as presence GC sends it (ADR 0148): stale 409, current 200.
    const lease = await kubeRequest(admin, 'GET', `${LEASES}/headroom-fleet-check`) as { metadata: { resourceVersion: string } };
    const del = (rv: string): Check => ({ what: 'delete a presence Lease', method: 'DELETE', path: `${LEASES}/headroom-fleet-check`, body: { apiVersion: 'v1', kind: 'DeleteOptions', preconditions: { resourceVersion: rv } }, expect: 200 });
    expect(await statusOf(kc, del(`${Number(lease.metadata.resourceVersion) - 1}`))).to.equal(409);
    expect(await statusOf(kc, del(lease.metadata.resourceVersion))).to.equal(200);

    const md = await kubeRequest(admin, 'GET', `${CAPI}/namespaces/${CLUSTERS}/machinedeployments/a-md`) as { spec: { replicas: number }; metadata: { deletionTimestamp?: string } };
    expect(md.spec.replicas, 'scaled through the scale subresource').to.equal(3);
    expect(md.metadata.deletionTimestamp).to.equal(undefined);
    const c = await kubeRequest(admin, 'GET', `${CAPI}/namespaces/${CLUSTERS}/clusters/a`) as { spec: { paused?: boolean } };
    expect(c.spec.paused ?? false).to.equal(false);
  });
});
