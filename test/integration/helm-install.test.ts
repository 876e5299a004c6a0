/**
 * `helm install` / `upgrade` / `uninstall` of charts/headroom against the real
 * kube-apiserver of the shared test control plane: every object is accepted by the API,
 * the pods pass the real PodSecurity admission at the "restricted" level,
 * the RBAC it creates means what the chart says (asked of the real authorizer with
 * SubjectAccessReviews), the generated certificate survives an upgrade, and the
 * shipped KubeSchedulerConfiguration is accepted by the real kube-scheduler, which
 * still binds pods when the extender cannot be reached (ignorable).
 *
 * Isolation from the other test files sharing the cluster: the pods get a nodeSelector
 * no node has (they stay Pending, so the Service never has endpoints), and the webhook
 * only matches namespaces carrying a label no namespace has.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  AdmissionregistrationV1Api,
  AppsV1Api,
  AuthorizationV1Api,
  CoordinationV1Api,
  CoreV1Api,
  type KubeConfig,
  type KubernetesObject,
  KubernetesObjectApi,
  PatchStrategy,
  RbacAuthorizationV1Api,
  setHeaderOptions,
  type V1ResourceAttributes,
} from '@kubernetes/client-node';
import { expect } from 'chai';
import { parse as parseYaml, stringify as toYaml } from 'yaml';
import type { ControlPlane } from '../harness/control-plane.js';
import { freePort } from '../harness/ports.js';
import { httpStatus, waitFor } from '../harness/probe.js';
import { ManagedProcess, makeTempDir, removeTempDir } from '../harness/process.js';
import { createTestNamespace, deleteTestNamespace } from '../harness/namespace.js';
import { CHART_DIR, helm, renderChart } from './helm-chart.js';
import { sharedControlPlane } from './hooks.js';

/** POST JSON over TLS, trusting only `caB64` and checking the certificate for `servername`. */
function postJson(port: number, path: string, caB64: string, servername: string, body: unknown): Promise<{ status: number; body: unknown }> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      { host: '127.0.0.1', port, path, method: 'POST', servername, ca: Buffer.from(caB64, 'base64'), headers: { 'content-type': 'application/json' }, timeout: 10_000 },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text ? (JSON.parse(text) as unknown) : undefined }));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

function notFound(err: unknown): boolean {
  return (err as { code?: number }).code === 404;
}

async function waitUntil<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

describe('helm install of charts/headroom on a real kube-apiserver', function () {
  this.timeout(240_000);
  let cp: ControlPlane;
  let kc: KubeConfig;
  let ns: string;
  let tmp: string;
  let installed = false;
  let notes = '';
  const release = `hr-${randomBytes(2).toString('hex')}`;
  const fullname = `${release}-headroom`;
  const helmArgs = () => ['--namespace', ns, '--kubeconfig', cp.kubeconfigPath];

  before(async function () {
    this.timeout(300_000);
    cp = await sharedControlPlane();
    kc = cp.kubeConfig();
    ns = await createTestNamespace(kc, 'helm-install');
    // The real PodSecurity admission holds the pods to the "restricted" standard.
    await kc.makeApiClient(CoreV1Api).patchNamespace(
      { name: ns, body: { metadata: { labels: { 'pod-security.kubernetes.io/enforce': 'restricted', 'pod-security.kubernetes.io/enforce-version': 'latest' } } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    tmp = mkdtempSync(join(tmpdir(), 'headroom-helm-install-'));
    writeFileSync(
      join(tmp, 'values.yaml'),
      toYaml({
        nodeSelector: { 'headroom.dev/no-such-node': 'true' },
        webhook: { namespaceSelectorExpressions: [{ key: 'headroom.dev/helm-install-test', operator: 'In', values: [ns] }] },
      }),
    );
    // The harness has already installed charts/headroom/crds (helm would skip them).
    const r = await helm(['install', release, CHART_DIR, '--skip-crds', ...helmArgs(), '-f', join(tmp, 'values.yaml')]);
    expect(r.code, r.stderr).to.equal(0);
    installed = true;
    notes = r.stdout.slice(r.stdout.indexOf('NOTES:'));
  });

  after(async function () {
    this.timeout(120_000);
    if (installed) await helm(['uninstall', release, ...helmArgs()]);
    if (ns) await deleteTestNamespace(kc, ns);
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  it('creates every object, and the webhook carries the CA of the generated secret', async () => {
    const core = kc.makeApiClient(CoreV1Api);
    const apps = kc.makeApiClient(AppsV1Api);
    const rbac = kc.makeApiClient(RbacAuthorizationV1Api);
    const deploy = await apps.readNamespacedDeployment({ name: fullname, namespace: ns });
    expect(deploy.spec!.replicas).to.equal(2);
    expect(deploy.spec!.template.spec!.containers[0]!.securityContext!.readOnlyRootFilesystem).to.equal(true);
    await core.readNamespacedService({ name: fullname, namespace: ns });
    await core.readNamespacedServiceAccount({ name: fullname, namespace: ns });
    await core.readNamespacedConfigMap({ name: `${fullname}-scheduler-config`, namespace: ns });
    await rbac.readNamespacedRole({ name: fullname, namespace: ns });
    await rbac.readNamespacedRoleBinding({ name: fullname, namespace: ns });
    await rbac.readClusterRole({ name: `${fullname}-${ns}` });
    await rbac.readClusterRoleBinding({ name: `${fullname}-${ns}` });
    const secret = await core.readNamespacedSecret({ name: `${fullname}-tls`, namespace: ns });
    const mwc = await kc.makeApiClient(AdmissionregistrationV1Api).readMutatingWebhookConfiguration({ name: `${fullname}-${ns}` });
    expect(mwc.webhooks![0]!.clientConfig.caBundle).to.equal(secret.data!['ca.crt']);
    expect(mwc.webhooks![0]!.failurePolicy).to.equal('Ignore');
  });

  it('runs pods that the real PodSecurity admission accepts under the "restricted" standard', async () => {
    const core = kc.makeApiClient(CoreV1Api);
    // Control: the namespace really enforces "restricted".
    const rejected = await core
      .createNamespacedPod({ namespace: ns, dryRun: 'All', body: { metadata: { name: 'privileged' }, spec: { containers: [{ name: 'c', image: 'x', securityContext: { privileged: true } }] } } })
      .then(() => undefined, (err: { code?: number; body?: string }) => err);
    expect(rejected?.code).to.equal(403);
    expect((JSON.parse(String(rejected?.body)) as { message: string }).message).to.match(/violates PodSecurity "restricted/);
    // The ReplicaSet could create both replicas (they stay Pending: no node matches).
    const pods = await waitUntil('2 pods', async () => {
      const list = await core.listNamespacedPod({ namespace: ns, labelSelector: `app.kubernetes.io/instance=${release}` });
      return list.items.length === 2 ? list.items : undefined;
    }, 60_000);
    for (const p of pods) expect(p.spec!.securityContext!.runAsUser).to.equal(65532);
  });

  it('prints NOTES that name the real objects', () => {
    expect(notes).to.include(`rollout status deployment/${fullname}`);
    expect(notes).to.include(`get lease ${fullname}`);
    expect(notes).to.include(`get configmap ${fullname}-scheduler-config`);
    expect(notes).to.include(`MutatingWebhookConfiguration ${fullname}-${ns}`);
  });

  it('the real authorizer grants the ServiceAccount what the controller needs, and no more', async () => {
    const authz = kc.makeApiClient(AuthorizationV1Api);
    const user = `system:serviceaccount:${ns}:${fullname}`;
    const can = async (attrs: V1ResourceAttributes) => {
      const review = await authz.createSubjectAccessReview({ body: { spec: { user, groups: ['system:serviceaccounts', `system:serviceaccounts:${ns}`], resourceAttributes: attrs } } });
      return review.status!.allowed;
    };
    const capi = 'cluster.x-k8s.io';
    const allowed: V1ResourceAttributes[] = [
      { verb: 'list', resource: 'pods' },
      { verb: 'watch', resource: 'nodes' },
      { verb: 'watch', resource: 'persistentvolumeclaims', namespace: 'default' },
      { verb: 'list', group: 'apps', resource: 'daemonsets' },
      { verb: 'watch', group: 'policy', resource: 'poddisruptionbudgets' },
      { verb: 'list', group: 'storage.k8s.io', resource: 'storageclasses' },
      { verb: 'watch', group: 'autoscaling.x-k8s.io', resource: 'capacitybuffers' },
      { verb: 'list', resource: 'podtemplates' },
      { verb: 'list', group: capi, resource: 'machinedeployments' },
      { verb: 'patch', group: capi, resource: 'machines', namespace: 'default' },
      { verb: 'update', group: capi, resource: 'machinedeployments', subresource: 'scale', namespace: 'default' },
      { verb: 'patch', group: capi, resource: 'machinepools', subresource: 'scale', namespace: 'default' },
      { verb: 'create', group: capi, resource: 'machines', namespace: 'default' },
      { verb: 'delete', group: capi, resource: 'machines', namespace: 'default' },
      { verb: 'get', group: 'bootstrap.cluster.x-k8s.io', resource: 'kubeadmconfigtemplates', namespace: 'default' },
      { verb: 'create', group: 'bootstrap.cluster.x-k8s.io', resource: 'kubeadmconfigs', namespace: 'default' },
      { verb: 'watch', group: 'headroom.dev', resource: 'nodepools' },
      { verb: 'patch', group: 'headroom.dev', resource: 'nodepools', subresource: 'status' },
      { verb: 'create', group: 'events.k8s.io', resource: 'events', namespace: 'default' },
      { verb: 'patch', resource: 'nodes' },
      { verb: 'create', group: 'coordination.k8s.io', resource: 'leases', namespace: ns },
      { verb: 'update', group: 'coordination.k8s.io', resource: 'leases', namespace: ns, name: fullname },
      // Disruption drains through the Eviction API (ADR 0082); paused Clusters are read.
      { verb: 'create', resource: 'pods', subresource: 'eviction', namespace: 'default' },
      { verb: 'watch', group: capi, resource: 'clusters' },
      // Prediction: its signals, and the model's ConfigMaps by name (ADR 0092).
      { verb: 'watch', group: 'batch', resource: 'cronjobs' },
      { verb: 'list', group: 'autoscaling', resource: 'horizontalpodautoscalers' },
      // CSI attach limits.
      { verb: 'watch', group: 'storage.k8s.io', resource: 'csinodes' },
      // DRA, read only (ADR 0142).
      { verb: 'watch', group: 'resource.k8s.io', resource: 'resourceclaims', namespace: 'default' },
      { verb: 'list', group: 'resource.k8s.io', resource: 'resourceclaimtemplates' },
      { verb: 'watch', group: 'resource.k8s.io', resource: 'deviceclasses' },
      { verb: 'list', group: 'resource.k8s.io', resource: 'resourceslices' },
      { verb: 'create', resource: 'configmaps', namespace: ns },
      { verb: 'update', resource: 'configmaps', namespace: ns, name: `${fullname}-prediction` },
      { verb: 'get', resource: 'configmaps', namespace: ns, name: `${fullname}-prediction-b-7` },
    ];
    const denied: V1ResourceAttributes[] = [
      { verb: 'get', resource: 'secrets', namespace: ns, name: `${fullname}-tls` },
      { verb: 'list', resource: 'secrets', namespace: ns },
      { verb: 'watch', resource: 'secrets' },
      { verb: 'list', resource: 'configmaps', namespace: ns },
      { verb: 'update', resource: 'configmaps', namespace: ns, name: 'someone-elses' },
      { verb: 'delete', resource: 'configmaps', namespace: ns, name: `${fullname}-prediction` },
      { verb: 'update', resource: 'configmaps', namespace: 'default', name: `${fullname}-prediction` },
      { verb: 'get', resource: 'secrets', namespace: ns, name: 'someone-elses' },
      { verb: 'get', resource: 'secrets', namespace: 'default', name: `${fullname}-tls` },
      { verb: 'update', resource: 'secrets', namespace: ns, name: `${fullname}-tls` },
      { verb: 'create', resource: 'pods', namespace: 'default' },
      { verb: 'delete', resource: 'pods', namespace: 'default' },
      { verb: 'delete', resource: 'nodes' },
      { verb: 'update', group: capi, resource: 'machinedeployments', namespace: 'default' },
      { verb: 'delete', group: capi, resource: 'machinedeployments', namespace: 'default' },
      { verb: 'create', group: capi, resource: 'clusters', namespace: 'default' },
      { verb: 'update', group: 'headroom.dev', resource: 'nodepools' },
      { verb: 'update', group: 'bootstrap.cluster.x-k8s.io', resource: 'kubeadmconfigs', namespace: 'default' },
      { verb: 'create', group: 'bootstrap.cluster.x-k8s.io', resource: 'kubeadmconfigtemplates', namespace: 'default' },
      { verb: 'update', group: 'coordination.k8s.io', resource: 'leases', namespace: ns, name: 'another-lease' },
      { verb: 'create', group: 'coordination.k8s.io', resource: 'leases', namespace: 'kube-system' },
      { verb: 'update', group: 'admissionregistration.k8s.io', resource: 'mutatingwebhookconfigurations', name: `${fullname}-${ns}` },
      { verb: 'get', group: 'admissionregistration.k8s.io', resource: 'mutatingwebhookconfigurations', name: `${fullname}-${ns}` },
      { verb: 'list', group: 'admissionregistration.k8s.io', resource: 'mutatingwebhookconfigurations' },
      { verb: 'create', group: 'rbac.authorization.k8s.io', resource: 'clusterrolebindings' },
      { verb: 'impersonate', resource: 'serviceaccounts', namespace: ns },
      // kube-scheduler allocates claims and drivers publish slices: Headroom writes neither.
      { verb: 'update', group: 'resource.k8s.io', resource: 'resourceclaims', subresource: 'status', namespace: 'default' },
      { verb: 'create', group: 'resource.k8s.io', resource: 'resourceclaims', namespace: 'default' },
      { verb: 'create', group: 'resource.k8s.io', resource: 'resourceslices' },
      { verb: 'delete', group: 'resource.k8s.io', resource: 'deviceclasses' },
      { verb: 'update', group: 'storage.k8s.io', resource: 'csinodes' },
    ];
    const wrong: string[] = [];
    for (const a of allowed) if (!(await can(a))) wrong.push(`denied but needed: ${JSON.stringify(a)}`);
    for (const a of denied) if (await can(a)) wrong.push(`allowed but not needed: ${JSON.stringify(a)}`);
    expect(wrong).to.deep.equal([]);
  });

  it('keeps the generated certificate across helm upgrade', async () => {
    const core = kc.makeApiClient(CoreV1Api);
    const before = await core.readNamespacedSecret({ name: `${fullname}-tls`, namespace: ns });
    // Dry run, and node groups from this namespace only: the controller started below
    // with these args must not act on other test files' objects.
    const r = await helm(['upgrade', release, CHART_DIR, ...helmArgs(), '--reuse-values', '--set', 'controller.dryRun=true', '--set', `controller.nodeGroupAutoDiscovery[0]=clusterapi:namespace=${ns}`]);
    expect(r.code, r.stderr).to.equal(0);
    const after = await core.readNamespacedSecret({ name: `${fullname}-tls`, namespace: ns });
    expect(after.data).to.deep.equal(before.data);
    const mwc = await kc.makeApiClient(AdmissionregistrationV1Api).readMutatingWebhookConfiguration({ name: `${fullname}-${ns}` });
    expect(mwc.webhooks![0]!.clientConfig.caBundle).to.equal(before.data!['ca.crt']);
    const deploy = await kc.makeApiClient(AppsV1Api).readNamespacedDeployment({ name: fullname, namespace: ns });
    expect(deploy.spec!.template.spec!.containers[0]!.args).to.include('--dry-run');
  });

  it('the real controller, run with the Deployment\'s args, the ServiceAccount\'s token and the TLS Secret, syncs every informer, takes the Lease and serves the webhook', async function () {
    this.timeout(180_000);
    const core = kc.makeApiClient(CoreV1Api);
    const deploy = await kc.makeApiClient(AppsV1Api).readNamespacedDeployment({ name: fullname, namespace: ns });
    const args = deploy.spec!.template.spec!.containers[0]!.args!;
    expect(args).to.include('--dry-run');
    expect(args.some((a) => a.startsWith('--webhook-address='))).to.equal(true);
    const token = await core.createNamespacedServiceAccountToken({ name: deploy.spec!.template.spec!.serviceAccountName!, namespace: ns, body: { spec: { audiences: [], expirationSeconds: 3600 } } });
    const dir = makeTempDir('headroom-helm-controller-');
    const kubeconfig = join(dir, 'sa.kubeconfig');
    writeFileSync(
      kubeconfig,
      toYaml({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [{ name: 'c', cluster: { server: cp.server, 'certificate-authority-data': Buffer.from(cp.ca.certPem).toString('base64') } }],
        users: [{ name: 'sa', user: { token: token.status!.token } }],
        contexts: [{ name: 'sa', context: { cluster: 'c', user: 'sa' } }],
        'current-context': 'sa',
      }),
      { mode: 0o600 },
    );
    const port = await freePort();
    const webhookPort = await freePort();
    // The TLS Secret as kubelet would mount it.
    const secret = await core.readNamespacedSecret({ name: `${fullname}-tls`, namespace: ns });
    mkdirSync(join(dir, 'tls'));
    for (const [k, v] of Object.entries(secret.data!)) writeFileSync(join(dir, 'tls', k), Buffer.from(v, 'base64'));
    const env = { ...process.env, POD_NAMESPACE: ns, POD_NAME: `${fullname}-test` };
    // As kubelet would: $(POD_NAMESPACE) expanded; then the in-cluster config replaced by
    // the token kubeconfig, the listeners moved to free loopback ports and the mount path
    // to the directory above.
    const expanded = args.map((a) => a.replace(/\$\(([A-Z_]+)\)/g, (_m, v: string) => (env as Record<string, string>)[v] ?? ''));
    // bin/headroom.js runs dist/; this runs the same main() from the sources (worker
    // threads inherit --import tsx).
    const launcher = join(dir, 'headroom.mjs');
    const mainUrl = new URL('../../src/cli/main.ts', import.meta.url).href;
    writeFileSync(launcher, `const { main } = await import(${JSON.stringify(mainUrl)});\nprocess.exitCode = await main(process.argv.slice(2));\n`);
    const proc = ManagedProcess.start('headroom-controller', process.execPath, ['--import', 'tsx', launcher, ...expanded, `--kubeconfig=${kubeconfig}`, `--metrics-address=127.0.0.1:${port}`, `--webhook-address=127.0.0.1:${webhookPort}`, `--tls-dir=${join(dir, 'tls')}`], { logFile: join(dir, 'controller.log'), env });
    try {
      await waitFor('/readyz (every informer synced with the chart\'s RBAC)', async () => (await httpStatus(`http://127.0.0.1:${port}/readyz`)) === 200, { timeoutMs: 120_000, intervalMs: 250, watch: [proc] });
      const coordination = kc.makeApiClient(CoordinationV1Api);
      const holder = await waitUntil('the Lease to be held', async () => {
        const lease = await coordination.readNamespacedLease({ name: fullname, namespace: ns }).catch(() => undefined);
        return lease?.spec?.holderIdentity || undefined;
      }, 60_000);
      expect(holder).to.be.a('string');
      // The webhook answers over TLS with the chart's certificate, verified against the
      // chart's CA for the Service name the apiserver uses.
      const review = await postJson(webhookPort, '/mutate/pods', secret.data!['ca.crt']!, `${fullname}.${ns}.svc`, {
        apiVersion: 'admission.k8s.io/v1',
        kind: 'AdmissionReview',
        request: {
          uid: 'helm-check-1',
          kind: { group: '', version: 'v1', kind: 'Pod' },
          resource: { group: '', version: 'v1', resource: 'pods' },
          namespace: 'default',
          operation: 'CREATE',
          dryRun: true,
          object: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'default' }, spec: { containers: [{ name: 'c', image: 'x' }] } },
        },
      });
      expect(review.status).to.equal(200);
      expect((review.body as { response: { uid: string; allowed: boolean } }).response).to.include({ uid: 'helm-check-1', allowed: true });
      expect(proc.logTail(200)).to.not.match(/forbidden|\b403\b/i);
      await proc.stop(10_000);
      // A graceful stop releases the Lease (a PUT the Role must allow).
      const released = await coordination.readNamespacedLease({ name: fullname, namespace: ns });
      expect(released.spec?.holderIdentity ?? null).to.not.equal(holder);
      expect(proc.logTail(200)).to.not.match(/forbidden|\b403\b/i);
    } finally {
      await proc.stop(2_000);
      removeTempDir(dir);
    }
  });

  it('ships a scheduler configuration the real kube-scheduler accepts, and pods still bind with the extender unreachable', async function () {
    this.timeout(180_000);
    const cm = await kc.makeApiClient(CoreV1Api).readNamespacedConfigMap({ name: `${fullname}-scheduler-config`, namespace: ns });
    const config = parseYaml(cm.data!['scheduler-config.yaml']!) as Record<string, unknown>;
    const schedulerName = `helm-check-${ns}`;
    // The Service has no endpoints (and no DNS here): every extender call fails.
    const scheduler = await cp.startScheduler({ schedulerName, config });
    const core = kc.makeApiClient(CoreV1Api);
    const node = `helm-check-${ns}`;
    const taint = { key: 'headroom.dev/helm-check', value: ns, effect: 'NoSchedule' };
    try {
      await core.createNode({
        body: {
          metadata: { name: node, annotations: { 'kwok.x-k8s.io/node': 'fake' }, labels: { 'kubernetes.io/hostname': node, type: 'kwok' } },
          spec: { taints: [taint] },
          status: { allocatable: { cpu: '4', memory: '8Gi', pods: '10' }, capacity: { cpu: '4', memory: '8Gi', pods: '10' } },
        },
      });
      await core.createNamespacedPod({
        namespace: ns,
        body: {
          metadata: { name: 'bound-without-extender' },
          spec: {
            schedulerName,
            nodeSelector: { 'kubernetes.io/hostname': node },
            tolerations: [{ ...taint, operator: 'Equal' }],
            securityContext: { runAsNonRoot: true, runAsUser: 65532, seccompProfile: { type: 'RuntimeDefault' } },
            containers: [
              {
                name: 'c',
                image: 'registry.k8s.io/pause:3.10',
                resources: { requests: { cpu: '100m' } },
                securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } },
              },
            ],
          },
        },
      });
      const bound = await waitUntil('the pod to be bound', async () => {
        const pod = await core.readNamespacedPod({ name: 'bound-without-extender', namespace: ns });
        return pod.spec!.nodeName || undefined;
      }, 90_000);
      expect(bound).to.equal(node);
      expect(scheduler.running).to.equal(true);
      // ...and the extender was really configured: the scheduler called it and skipped it.
      const url = `https://${fullname}.${ns}.svc:443/scheduler/filter`;
      await waitUntil('the scheduler to log the extender call', async () => (readFileSync(scheduler.logFile, 'utf8').includes(url) ? true : undefined), 10_000);
    } finally {
      await scheduler.stop();
      await core.deleteNamespacedPod({ name: 'bound-without-extender', namespace: ns, gracePeriodSeconds: 0 }).catch(() => undefined);
      await core.deleteNode({ name: node }).catch(() => undefined);
    }
  });

  it('every object rendered with all optional features on passes server-side dry-run validation', async () => {
    const objects = await renderChart(ns, {
      fullnameOverride: `kitchen-sink-${ns}`.slice(0, 50),
      'managementCluster.kubeconfigSecret.name': 'mgmt-kubeconfig',
      'controller.nodeGroupAutoDiscovery[0]': `clusterapi:namespace=${ns}`,
      'controller.dryRun': true,
      'controller.extraEnv[0].name': 'EXTRA',
      'controller.extraEnv[0].value': 'x',
      'service.annotations.a': 'b',
      'serviceAccount.annotations.c': 'd',
      'commonLabels.team': 'autoscaling',
      'podLabels.tier': 'control',
      'podAnnotations.e': 'f',
      'nodeSelector.kubernetes\\.io/os': 'linux',
      'tolerations[0].key': 'CriticalAddonsOnly',
      'tolerations[0].operator': 'Exists',
      'topologySpreadConstraints[0].maxSkew': 1,
      'topologySpreadConstraints[0].topologyKey': 'topology.kubernetes.io/zone',
      'topologySpreadConstraints[0].whenUnsatisfiable': 'ScheduleAnyway',
      'topologySpreadConstraints[0].labelSelector.matchLabels.app\\.kubernetes\\.io/name': 'headroom',
      'imagePullSecrets[0].name': 'regcred',
      'image.digest': `sha256:${'a'.repeat(64)}`,
      'webhook.excludeNamespaces[0]': 'monitoring',
      'webhook.objectSelector.matchExpressions[0].key': 'headroom.dev/ignore',
      'webhook.objectSelector.matchExpressions[0].operator': 'DoesNotExist',
      'extender.urlPrefix': 'https://10.96.0.50:443/scheduler',
      'extender.serverName': 'headroom.headroom-system.svc',
      'metrics.serviceMonitor.enabled': true,
      'certManager.enabled': true,
      'rbac.standaloneMachineResources[0].apiGroup': 'infrastructure.cluster.x-k8s.io',
      'rbac.standaloneMachineResources[0].templates[0]': 'dockermachinetemplates',
      'rbac.standaloneMachineResources[0].resources[0]': 'dockermachines',
    });
    const api = KubernetesObjectApi.makeApiClient(kc);
    // No cert-manager or prometheus-operator CRDs in the test cluster.
    const needCrds = new Set(['cert-manager.io/v1', 'monitoring.coreos.com/v1']);
    expect(objects.filter((o) => needCrds.has(o.apiVersion)).map((o) => o.kind).sort()).to.deep.equal(['Certificate', 'Certificate', 'Issuer', 'Issuer', 'ServiceMonitor']);
    const checked: string[] = [];
    for (const o of objects.filter((x) => !needCrds.has(x.apiVersion))) {
      await api.create(o as KubernetesObject, undefined, 'All').catch((err: { body?: string }) => {
        throw new Error(`${o.kind}/${o.metadata.name} rejected: ${err.body ?? String(err)}`);
      });
      checked.push(o.kind);
    }
    expect(checked).to.include.members(['Deployment', 'MutatingWebhookConfiguration', 'ClusterRole', 'Role', 'Service', 'PodDisruptionBudget', 'ConfigMap']);
  });

  it('helm uninstall removes the cluster-scoped objects too', async () => {
    const r = await helm(['uninstall', release, ...helmArgs()]);
    expect(r.code, r.stderr).to.equal(0);
    installed = false;
    const rbac = kc.makeApiClient(RbacAuthorizationV1Api);
    const gone = async (read: () => Promise<unknown>) => read().then(() => false, (err) => notFound(err));
    expect(await gone(() => rbac.readClusterRole({ name: `${fullname}-${ns}` }))).to.equal(true);
    expect(await gone(() => rbac.readClusterRoleBinding({ name: `${fullname}-${ns}` }))).to.equal(true);
    expect(await gone(() => kc.makeApiClient(AdmissionregistrationV1Api).readMutatingWebhookConfiguration({ name: `${fullname}-${ns}` }))).to.equal(true);
  });
});
