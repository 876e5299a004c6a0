import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request, type RequestOptions } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AdmissionregistrationV1Api, CoreV1Api, type KubeConfig, type V1MutatingWebhookConfiguration, type V1Pod } from '@kubernetes/client-node';
import { expect } from 'chai';
import { createCertificateAuthority, issueCertificate } from '../../certs/pki.js';
import { startHeadroomServer } from '../../src/cli/headroom-server.js';
import { ExtenderState } from '../../src/extender/state.js';
import { DemandIntake } from '../../src/provisioning/demand-intake.js';
import { systemClock } from '../../src/provisioning/clock.js';
import { parseResourceList } from '../../src/scheduling/resources.js';
import type { RunningServer } from '../../src/server/listen.js';
import { httpRequests } from '../../src/server/metrics.js';
import { generateServingCert } from '../../src/server/serving-cert.js';
import { FIRST_SEEN_ANNOTATION } from '../../src/webhook/first-seen.js';
import { type ControlPlane, startControlPlane } from '../harness/control-plane.js';
import { createTestNamespace } from '../harness/namespace.js';
import { eventually } from '../harness/wait.js';

/**
 * Mutual TLS on the real control plane (docs/security.md). Headroom's server requires a
 * client certificate from `clientCa`. kube-apiserver gets one for the webhook through an
 * AdmissionConfiguration kubeconfig whose user is named after the webhook's host:port,
 * and kube-scheduler one through the extender's tlsConfig certFile/keyFile. A second
 * webhook reaches the same server as `localhost:PORT`, a host the kubeconfig has no
 * user for, so kube-apiserver calls it without a certificate: refused, and the pod is
 * admitted unpatched (failurePolicy Ignore: failing open). A second kube-scheduler
 * without a client certificate is refused too and schedules without the extender
 * (ignorable). A private control plane: the admission configuration is a start flag.
 */
describe('mutual TLS with the real kube-apiserver and kube-scheduler', function () {
  this.timeout(240_000);
  const tls = generateServingCert({ service: 'headroom', namespace: 'headroom-system' });
  const clientCa = createCertificateAuthority({ commonName: 'headroom-test-client-ca' });
  const apiserverClient = issueCertificate(clientCa, { commonName: 'kube-apiserver-headroom-webhook', usages: ['client'] });
  const schedulerClient = issueCertificate(clientCa, { commonName: 'kube-scheduler-headroom-extender', usages: ['client'] });
  const state = new ExtenderState();
  const intake = new DemandIntake(100);
  let dir: string;
  let server: RunningServer;
  let cp: ControlPlane;
  let kc: KubeConfig;
  let core: CoreV1Api;

  before(async function () {
    this.timeout(300_000);
    dir = mkdtempSync(join(tmpdir(), 'headroom-mtls-it-'));
    server = await startHeadroomServer({
      host: '127.0.0.1', port: 0, tls: { ...tls, clientCaPem: clientCa.certPem },
      state: () => state, intake, clock: systemClock, ready: () => true, logError: () => undefined,
    });
    const write = (name: string, text: string) => {
      writeFileSync(join(dir, name), text, { mode: 0o600 });
      return join(dir, name);
    };
    const certFile = write('apiserver-client.crt', apiserverClient.certPem);
    const keyFile = write('apiserver-client.key', apiserverClient.keyPem);
    // The user is looked up by the webhook's host (host:port for a URL webhook).
    const kubeconfig = write('admission-kubeconfig.yaml', [
      'apiVersion: v1', 'kind: Config', 'users:',
      `  - name: "127.0.0.1:${server.port}"`, '    user:', `      client-certificate: ${certFile}`, `      client-key: ${keyFile}`, '',
    ].join('\n'));
    const admission = write('admission.yaml', [
      'apiVersion: apiserver.config.k8s.io/v1', 'kind: AdmissionConfiguration', 'plugins:',
      '  - name: MutatingAdmissionWebhook', '    configuration:',
      '      apiVersion: apiserver.config.k8s.io/v1', '      kind: WebhookAdmissionConfiguration', `      kubeConfigFile: ${kubeconfig}`, '',
    ].join('\n'));
    cp = await startControlPlane({ kwok: true, crds: false, apiServerArgs: [`--admission-control-config-file=${admission}`] });
    kc = cp.kubeConfig();
    core = kc.makeApiClient(CoreV1Api);
  });

  after(async function () {
    this.timeout(120_000);
    await cp?.stop();
    await server?.close(0);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const pod = (namespace: string, extra: Partial<V1Pod['spec']> = {}): V1Pod => ({
    metadata: { generateName: 'mtls-', namespace },
    spec: {
      containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.10', resources: { requests: { cpu: '100m', memory: '32Mi' } } }],
      nodeSelector: { 'headroom.dev/nowhere': 'true' },
      ...extra,
    },
  });

  async function webhookFor(namespace: string, host: string): Promise<void> {
    const body: V1MutatingWebhookConfiguration = {
      metadata: { name: `headroom-${namespace}` },
      webhooks: [{
        name: 'pods.headroom.dev',
        admissionReviewVersions: ['v1'],
        sideEffects: 'None',
        failurePolicy: 'Ignore',
        timeoutSeconds: 5,
        clientConfig: { url: `https://${host}:${server.port}/mutate/pods`, caBundle: Buffer.from(tls.caPem).toString('base64') },
        rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }],
        namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': namespace } },
      }],
    };
    await kc.makeApiClient(AdmissionregistrationV1Api).createMutatingWebhookConfiguration({ body });
  }

  /** kube-apiserver's own metric, read with the admin client certificate. */
  async function apiserverMetric(name: string): Promise<number> {
    const opts: RequestOptions = { method: 'GET' };
    await kc.applyToHTTPSOptions(opts);
    const text = await new Promise<string>((resolve, reject) => {
      const req = request(`${cp.server}/metrics`, opts, (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve(body));
      });
      req.on('error', reject);
      req.end();
    });
    return text.split('\n').filter((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `))
      .reduce((sum, l) => sum + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
  }

  it('kube-apiserver with its client certificate gets the webhook\'s patch; without one it is refused and the pod is admitted unpatched (fail open)', async () => {
    const withCert = await createTestNamespace(kc, 'mtls-cert');
    const withoutCert = await createTestNamespace(kc, 'mtls-nocert');
    await webhookFor(withCert, '127.0.0.1');
    await webhookFor(withoutCert, 'localhost');

    // The apiserver picks up new webhook configurations asynchronously: retry until patched.
    const patched = await eventually('a pod patched through the mTLS webhook', async () => {
      const p = await core.createNamespacedPod({ namespace: withCert, body: pod(withCert) });
      return p.metadata?.annotations?.[FIRST_SEEN_ANNOTATION] ? p : false;
    }, { timeoutMs: 60_000, intervalMs: 500 });
    expect(patched.metadata!.annotations![FIRST_SEEN_ANNOTATION]).to.be.a('string');
    expect(intake.drain().some((r) => r.pod.namespace === withCert), 'demand recorded from the authenticated call').to.equal(true);

    // Without a certificate: every create succeeds, none is patched, and the apiserver
    // counts the failed call as failing open.
    const failOpenBefore = await apiserverMetric('apiserver_admission_webhook_fail_open_count');
    await eventually('the apiserver failing open on the certificate-less webhook', async () => {
      const p = await core.createNamespacedPod({ namespace: withoutCert, body: pod(withoutCert) });
      expect(p.metadata?.annotations?.[FIRST_SEEN_ANNOTATION], 'a refused call cannot patch').to.equal(undefined);
      return (await apiserverMetric('apiserver_admission_webhook_fail_open_count')) > failOpenBefore;
    }, { timeoutMs: 60_000, intervalMs: 500 });
    expect(intake.drain().some((r) => r.pod.namespace === withoutCert), 'nothing reached the handler').to.equal(false);
  });

  it('kube-scheduler with its client certificate calls the extender; without one it is refused and schedules without it (ignorable)', async () => {
    const ns = await createTestNamespace(kc, 'mtls-sched');
    const node = `${ns}-n1`;
    const allocatable = { cpu: '4', memory: '8Gi', pods: '110' };
    await core.createNode({
      body: {
        metadata: { name: node, labels: { 'kubernetes.io/hostname': node, 'headroom.dev/mtls': ns, type: 'kwok' }, annotations: { 'kwok.x-k8s.io/node': 'fake' } },
        status: { allocatable, capacity: allocatable },
      },
    });
    state.setNode(node, { allocatable: parseResourceList(allocatable), requested: {} });
    const write = (name: string, text: string) => {
      writeFileSync(join(dir, name), text, { mode: 0o600 });
      return join(dir, name);
    };
    const extender = (withCert: boolean) => ({
      urlPrefix: `${server.url}/scheduler`,
      filterVerb: 'filter',
      prioritizeVerb: 'prioritize',
      weight: 5,
      enableHTTPS: true,
      nodeCacheCapable: true,
      ignorable: true,
      httpTimeout: '2s',
      tlsConfig: {
        caData: Buffer.from(tls.caPem).toString('base64'),
        ...(withCert ? { certFile: write('scheduler-client.crt', schedulerClient.certPem), keyFile: write('scheduler-client.key', schedulerClient.keyPem) } : {}),
      },
    });
    const filterCalls = async () =>
      (await httpRequests.get()).values.filter((v) => v.labels.endpoint === '/scheduler/filter' && v.labels.code === '200').reduce((s, v) => s + v.value, 0);
    const bound = (name: string) => eventually(`pod ${name} bound`, async () => {
      const p = await core.readNamespacedPod({ name, namespace: ns });
      return p.spec?.nodeName ?? false;
    }, { timeoutMs: 90_000, intervalMs: 250 });
    const schedule = async (schedulerName: string, name: string) => {
      await core.createNamespacedPod({ namespace: ns, body: { ...pod(ns, { schedulerName, nodeSelector: { 'headroom.dev/mtls': ns } }), metadata: { name, namespace: ns } } });
      return bound(name);
    };

    const withCert = await cp.startScheduler({ schedulerName: 'mtls-with-cert', config: { extenders: [extender(true)] } });
    const before = await filterCalls();
    expect(await schedule('mtls-with-cert', 'with-cert')).to.equal(node);
    expect(await filterCalls(), 'the extender answered kube-scheduler').to.be.greaterThan(before);
    await withCert.stop();

    const withoutCert = await cp.startScheduler({ schedulerName: 'mtls-no-cert', config: { extenders: [extender(false)] } });
    const beforeRefused = await filterCalls();
    expect(await schedule('mtls-no-cert', 'no-cert'), 'scheduled anyway: the extender is ignorable').to.equal(node);
    expect(await filterCalls(), 'no filter call got through without a certificate').to.equal(beforeRefused);
    await withoutCert.stop();
  });
});
