/**
 * Issue 25 item 2: the usual CAPI layout, as installed. Two kube-apiservers: a
 * management cluster (CAPI CRDs only; the real helm installs the chart's
 * `mode: management` objects: the NodePool CRD, a ServiceAccount and its ClusterRole)
 * and a workload cluster (the chart's `mode: workload` release with the management
 * cluster elsewhere, `rbac.capi=false`). The real `headroom controller` runs with the
 * Deployment's own args, the workload ServiceAccount's token as in-cluster identity and,
 * mounted as kubelet would, the kubeconfig Secret holding the management
 * ServiceAccount's token: nothing but the chart's RBAC. Then, in the management
 * cluster: NodePools with spec.clusterRef (ADR 0140), scale from zero from an
 * infrastructure template, Events, NodePool status and limits; another Cluster's pool
 * and group are left alone; a NodePool applied to the workload cluster is told it is
 * ignored.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import type { KubeConfig } from '@kubernetes/client-node';
import { stringify as toYaml } from 'yaml';
import { type ControlPlane, startControlPlane } from '../harness/control-plane.js';
import { kubeRequest } from '../harness/kube-request.js';
import { freePort } from '../harness/ports.js';
import { httpStatus, waitFor } from '../harness/probe.js';
import { ManagedProcess } from '../harness/process.js';
import { eventually } from '../harness/wait.js';
import { CHART_DIR, helm } from './helm-chart.js';
import { pendingPod } from './controller-objects.js';

const RELEASE = 'hr';
const FULLNAME = `${RELEASE}-headroom`;
const SYSTEM = 'headroom-system';
const FLEET = 'fleet';
const APPS = 'apps';
const FIXTURE_CRDS = fileURLToPath(new URL('../fixtures/crds', import.meta.url));

interface EventItem { reason: string; type: string; note: string; regarding: { kind: string; name: string } }

/** A kubeconfig file for a ServiceAccount token of `cp`. */
function tokenKubeconfig(cp: ControlPlane, token: string): string {
  return toYaml({
    apiVersion: 'v1', kind: 'Config',
    clusters: [{ name: 'c', cluster: { server: cp.server, 'certificate-authority-data': Buffer.from(cp.ca.certPem).toString('base64') } }],
    users: [{ name: 'sa', user: { token } }],
    contexts: [{ name: 'sa', context: { cluster: 'c', user: 'sa' } }],
    'current-context': 'sa',
  });
}

async function saToken(kc: KubeConfig, namespace: string, name: string): Promise<string> {
  const r = await kubeRequest(kc, 'POST', `/api/v1/namespaces/${namespace}/serviceaccounts/${name}/token`, {
    apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 },
  }) as { status: { token: string } };
  return r.status.token;
}

const group = (cluster: string, name: string) => ({
  apiVersion: 'cluster.x-k8s.io/v1beta2', kind: 'MachineDeployment',
  metadata: {
    name, namespace: FLEET, labels: { 'cluster.x-k8s.io/cluster-name': cluster, tier: 'general' },
    // No capacity annotations: the shape comes from the infrastructure template (scale from zero).
    annotations: { 'cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size': '0', 'cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size': '10' },
  },
  spec: {
    clusterName: cluster, replicas: 0,
    selector: { matchLabels: { 'cluster.x-k8s.io/deployment-name': name } },
    template: {
      metadata: { labels: { 'cluster.x-k8s.io/deployment-name': name } },
      spec: { clusterName: cluster, bootstrap: { dataSecretName: 'bootstrap' }, infrastructureRef: { apiGroup: 'infrastructure.test.headroom.dev', kind: 'FakeMachineTemplate', name: 'small' } },
    },
  },
});

const nodePool = (name: string, cluster: string | undefined, limits: Record<string, string> = {}) => ({
  apiVersion: 'headroom.dev/v1alpha1', kind: 'NodePool', metadata: { name },
  spec: { ...(cluster ? { clusterRef: { namespace: FLEET, name: cluster } } : {}), nodeGroupSelector: { matchLabels: { tier: 'general' } }, limits },
});

describe('the management cluster elsewhere, set up from the chart (mode: management), two apiservers', function () {
  this.timeout(300_000);
  let mgmt: ControlPlane;
  let wl: ControlPlane;
  let mkc: KubeConfig;
  let wkc: KubeConfig;
  let tmp: string;
  let proc: ManagedProcess | undefined;

  before(async function () {
    this.timeout(300_000);
    [mgmt, wl] = await Promise.all([
      // CAPI's CRDs and the test infrastructure template kind; the NodePool CRD comes from helm.
      startControlPlane({ ownCrds: false, extraCrdDirs: [FIXTURE_CRDS] }),
      // The workload cluster: no CAPI; the NodePool and capacity CRDs as an older chart left them.
      startControlPlane({ crds: false, ownCrds: true }),
    ]);
    mkc = mgmt.kubeConfig();
    wkc = wl.kubeConfig();
    tmp = mkdtempSync(join(tmpdir(), 'headroom-mgmt-'));
    for (const [kc, names] of [[mkc, [SYSTEM, FLEET]], [wkc, [SYSTEM, APPS]]] as const) {
      for (const name of names) await kubeRequest(kc, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    }
  });

  after(async function () {
    this.timeout(60_000);
    await proc?.stop(5_000);
    if (tmp) rmSync(tmp, { recursive: true, force: true });
    await Promise.all([mgmt?.stop(), wl?.stop()]);
  });

  it('the documented objects let the controller scale, read templates, write Events and status and keep limits there; a workload-cluster NodePool is told it is ignored', async function () {
    // 1. Management cluster: the chart's management mode, by the real helm (CRD included).
    writeFileSync(join(tmp, 'mgmt-values.yaml'), toYaml({
      mode: 'management',
      rbac: { infrastructureTemplateResources: [{ apiGroup: 'infrastructure.test.headroom.dev', resources: ['fakemachinetemplates'] }] },
    }));
    let r = await helm(['install', RELEASE, CHART_DIR, '-n', SYSTEM, '--kubeconfig', mgmt.kubeconfigPath, '-f', join(tmp, 'mgmt-values.yaml')]);
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.include('spec.clusterRef');
    const mgmtDeploys = await kubeRequest(mkc, 'GET', `/apis/apps/v1/namespaces/${SYSTEM}/deployments`) as { items: unknown[] };
    expect(mgmtDeploys.items, 'nothing runs in the management cluster').to.have.length(0);
    await kubeRequest(mkc, 'GET', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/nodepools.headroom.dev');
    const mgmtKubeconfig = tokenKubeconfig(mgmt, await saToken(mkc, SYSTEM, FULLNAME));

    // 2. Workload cluster: the kubeconfig Secret, then the chart (CRDs already there).
    await kubeRequest(wkc, 'POST', `/api/v1/namespaces/${SYSTEM}/secrets`, {
      apiVersion: 'v1', kind: 'Secret', metadata: { name: 'capi-mgmt', namespace: SYSTEM }, data: { value: Buffer.from(mgmtKubeconfig).toString('base64') },
    });
    writeFileSync(join(tmp, 'wl-values.yaml'), toYaml({
      managementCluster: { kubeconfigSecret: { name: 'capi-mgmt' } },
      rbac: { capi: false },
      webhook: { enabled: false }, extender: { enabled: false },
      controller: { nodeGroupAutoDiscovery: [`clusterapi:namespace=${FLEET},clusterName=eu`], solverThreads: 0 },
    }));
    r = await helm(['install', RELEASE, CHART_DIR, '-n', SYSTEM, '--skip-crds', '--kubeconfig', wl.kubeconfigPath, '-f', join(tmp, 'wl-values.yaml')]);
    expect(r.code, r.stderr).to.equal(0);

    // 3. CAPI objects and NodePools in the management cluster; a stray NodePool in the workload one.
    await kubeRequest(mkc, 'POST', `/apis/infrastructure.test.headroom.dev/v1beta2/namespaces/${FLEET}/fakemachinetemplates`, {
      apiVersion: 'infrastructure.test.headroom.dev/v1beta2', kind: 'FakeMachineTemplate', metadata: { name: 'small', namespace: FLEET },
      spec: { template: { spec: {} } }, status: { capacity: { cpu: '4', memory: '16Gi', pods: '110' }, nodeInfo: { architecture: 'amd64', operatingSystem: 'linux' } },
    });
    for (const [cluster, name] of [['eu', 'eu-workers'], ['us', 'us-workers']]) {
      await kubeRequest(mkc, 'POST', `/apis/cluster.x-k8s.io/v1beta2/namespaces/${FLEET}/machinedeployments`, group(cluster!, name!));
    }
    // eu: 8 cpu = two 4-cpu nodes at most. us: another Cluster's pool, heavier, no limit.
    await kubeRequest(mkc, 'POST', '/apis/headroom.dev/v1alpha1/nodepools', nodePool('eu', 'eu', { cpu: '8' }));
    await kubeRequest(mkc, 'POST', '/apis/headroom.dev/v1alpha1/nodepools', { ...nodePool('us', 'us'), spec: { ...nodePool('us', 'us').spec, weight: 90 } });
    await kubeRequest(wkc, 'POST', '/apis/headroom.dev/v1alpha1/nodepools', nodePool('stray', 'eu'));

    // 4. The controller as the Deployment runs it, with only the chart's identities.
    const deploy = await kubeRequest(wkc, 'GET', `/apis/apps/v1/namespaces/${SYSTEM}/deployments/${FULLNAME}`) as {
      spec: { template: { spec: { serviceAccountName: string; containers: Array<{ args: string[] }> } } };
    };
    const args = deploy.spec.template.spec.containers[0]!.args;
    expect(args).to.include('--management-kubeconfig=/etc/headroom/management/kubeconfig');
    const wlKubeconfig = join(tmp, 'workload.kubeconfig');
    writeFileSync(wlKubeconfig, tokenKubeconfig(wl, await saToken(wkc, SYSTEM, deploy.spec.template.spec.serviceAccountName)), { mode: 0o600 });
    // The Secret's key as kubelet mounts it.
    const secret = await kubeRequest(wkc, 'GET', `/api/v1/namespaces/${SYSTEM}/secrets/capi-mgmt`) as { data: { value: string } };
    const mounted = join(tmp, 'management.kubeconfig');
    writeFileSync(mounted, Buffer.from(secret.data.value, 'base64'), { mode: 0o600 });
    const env = { ...process.env, POD_NAMESPACE: SYSTEM, POD_NAME: `${FULLNAME}-test` };
    const port = await freePort();
    const expanded = args
      .map((a) => a.replace(/\$\(([A-Z_]+)\)/g, (_m, v: string) => (env as Record<string, string>)[v] ?? ''))
      .map((a) => (a.startsWith('--management-kubeconfig=') ? `--management-kubeconfig=${mounted}` : a))
      .filter((a) => !a.startsWith('--metrics-address='));
    const launcher = join(tmp, 'headroom.mjs');
    writeFileSync(launcher, `const { main } = await import(${JSON.stringify(new URL('../../src/cli/main.ts', import.meta.url).href)});\nprocess.exitCode = await main(process.argv.slice(2));\n`);
    proc = ManagedProcess.start('headroom-controller', process.execPath, [
      '--import', 'tsx', launcher, ...expanded, `--kubeconfig=${wlKubeconfig}`, `--metrics-address=127.0.0.1:${port}`, '--batch-idle-duration=300', '--batch-max-duration=3000',
    ], { logFile: join(tmp, 'controller.log'), env });
    await waitFor('/readyz (every informer synced with the chart\'s RBAC in both clusters)', async () => (await httpStatus(`http://127.0.0.1:${port}/readyz`)) === 200, { timeoutMs: 120_000, intervalMs: 250, watch: [proc] });

    // 5. Five pods of 3 cpu want five nodes; the eu pool's limit allows two.
    for (let i = 0; i < 5; i++) await kubeRequest(wkc, 'POST', `/api/v1/namespaces/${APPS}/pods`, pendingPod(APPS, `p-${i}`, '3'));
    const replicas = async (name: string) => (await kubeRequest(mkc, 'GET', `/apis/cluster.x-k8s.io/v1beta2/namespaces/${FLEET}/machinedeployments/${name}`) as { spec: { replicas: number } }).spec.replicas;
    await eventually('eu-workers scaled up to the pool limit', async () => (await replicas('eu-workers')) === 2, { timeoutMs: 60_000, intervalMs: 250 });
    await new Promise((res) => setTimeout(res, 4000));
    expect(await replicas('eu-workers'), 'never past the limit of 8 cpu').to.equal(2);
    expect(await replicas('us-workers'), 'another Cluster\'s group').to.equal(0);

    // Events on the management cluster's objects; the pool's status there.
    await eventually('a ScaledUp Event on eu-workers in the management cluster', async () => {
      const events = await kubeRequest(mkc, 'GET', `/apis/events.k8s.io/v1/namespaces/${FLEET}/events`) as { items: EventItem[] };
      return events.items.some((e) => e.reason === 'ScaledUp' && e.regarding.name === 'eu-workers');
    }, { timeoutMs: 20_000 });
    const status = await eventually('the eu NodePool status', async () => {
      const p = await kubeRequest(mkc, 'GET', '/apis/headroom.dev/v1alpha1/nodepools/eu') as { status?: { resources?: { cpu: string; nodes: string }; nodeGroups?: string[] } };
      return p.status?.resources?.nodes === '2' ? p.status : false;
    }, { timeoutMs: 30_000 });
    expect(status.nodeGroups).to.deep.equal(['MachineDeployment/fleet/eu-workers']);
    expect(status.resources!.cpu).to.equal('8');
    const us = await kubeRequest(mkc, 'GET', '/apis/headroom.dev/v1alpha1/nodepools/us') as { status?: unknown };
    expect(us.status, 'another Cluster\'s pool is not this controller\'s').to.equal(undefined);

    // 6. The NodePool in the workload cluster: a Warning Event and a condition, not silence.
    await eventually('the stray NodePool told it is ignored', async () => {
      const p = await kubeRequest(wkc, 'GET', '/apis/headroom.dev/v1alpha1/nodepools/stray') as { status?: { conditions?: Array<{ type: string; status: string; reason: string; message: string }> } };
      const c = p.status?.conditions?.find((x) => x.type === 'Ready');
      return c?.status === 'False' && c.reason === 'IgnoredInWorkloadCluster' && c.message.includes(mgmt.server);
    }, { timeoutMs: 30_000 });
    const wEvents = await kubeRequest(wkc, 'GET', '/apis/events.k8s.io/v1/namespaces/default/events') as { items: EventItem[] };
    expect(wEvents.items.filter((e) => e.regarding.kind === 'NodePool' && e.regarding.name === 'stray').map((e) => [e.type, e.reason])).to.deep.include(['Warning', 'IgnoredInWorkloadCluster']);
    expect(proc.logTail(400)).to.match(/NodePool stray is in the workload cluster/);
    // Nothing was refused: the chart's objects grant all the controller uses in both clusters.
    expect(proc.logTail(400)).to.not.match(/forbidden|\b403\b/i);
    // No token in the log.
    expect(proc.logTail(400)).to.not.include(mgmtKubeconfig.match(/token: (\S+)/)![1]!);
  });
});
