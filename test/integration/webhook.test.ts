import { readFileSync } from 'node:fs';
import { AdmissionregistrationV1Api, CoreV1Api, type KubeConfig, type V1MutatingWebhookConfiguration, type V1Pod } from '@kubernetes/client-node';
import { expect } from 'chai';
import { parse } from 'yaml';
import { startHeadroomServer } from '../../src/cli/headroom-server.js';
import { ExtenderState } from '../../src/extender/state.js';
import { DemandIntake } from '../../src/provisioning/demand-intake.js';
import { systemClock } from '../../src/provisioning/clock.js';
import { injectCaBundle, CERT_MANAGER_INJECT_CA_FROM } from '../../src/server/ca-bundle.js';
import type { RunningServer } from '../../src/server/listen.js';
import { generateServingCert } from '../../src/server/serving-cert.js';
import { FIRST_SEEN_ANNOTATION, firstSeenOf } from '../../src/webhook/first-seen.js';
import type { ControlPlane } from '../harness/control-plane.js';
import { createTestNamespace, deleteTestNamespace } from '../harness/namespace.js';
import { sharedControlPlane } from './hooks.js';

/**
 * The real kube-apiserver calls Headroom's webhook over TLS (clientConfig.url on
 * loopback, caBundle injected by injectCaBundle) using the shipped example
 * configuration, scoped to this test's namespace so other test files are unaffected.
 */
describe('mutating webhook with a real kube-apiserver', function () {
  this.timeout(120_000);
  let cp: ControlPlane;
  let kc: KubeConfig;
  let ns: string;
  let core: CoreV1Api;
  let admission: AdmissionregistrationV1Api;
  let server: RunningServer | undefined;
  let intake: DemandIntake;
  const created: string[] = [];
  const tls = generateServingCert({ service: 'headroom', namespace: 'headroom-system' });

  before(async function () {
    this.timeout(240_000);
    cp = await sharedControlPlane();
    kc = cp.kubeConfig();
    ns = await createTestNamespace(kc, 'webhook');
    core = kc.makeApiClient(CoreV1Api);
    admission = kc.makeApiClient(AdmissionregistrationV1Api);
    intake = new DemandIntake(100);
    server = await startHeadroomServer({
      host: '127.0.0.1', port: 0, tls, state: () => new ExtenderState(), intake, clock: systemClock, ready: () => true,
    });
  });

  after(async function () {
    await server?.close(0);
    for (const name of created) await admission.deleteMutatingWebhookConfiguration({ name }).catch(() => undefined);
    if (kc && ns) await deleteTestNamespace(kc, ns);
  });

  /** The shipped example, pointed at our loopback server and scoped to this namespace. */
  function exampleConfig(name: string): V1MutatingWebhookConfiguration {
    const config = parse(readFileSync('webhook-config/mutating-webhook-configuration.yaml', 'utf8')) as V1MutatingWebhookConfiguration;
    config.metadata = { name };
    const hook = config.webhooks![0]!;
    hook.clientConfig = { url: `${server!.url}/mutate/pods` };
    hook.namespaceSelector!.matchExpressions!.push({ key: 'kubernetes.io/metadata.name', operator: 'In', values: [ns] });
    return config;
  }

  const newPod = (): V1Pod => ({
    metadata: { generateName: 'web-', namespace: ns, labels: { app: 'web' } },
    spec: {
      containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.10', resources: { requests: { cpu: '100m', memory: '32Mi' } } }],
      // Keep the pod unschedulable so no scheduler in the shared cluster acts on it.
      nodeSelector: { 'headroom.dev/nowhere': 'true' },
    },
  });

  it('injects the caBundle, and leaves it to cert-manager when annotated', async () => {
    const name = `headroom-${ns}`;
    created.push(name);
    await admission.createMutatingWebhookConfiguration({ body: exampleConfig(name) });
    expect(await injectCaBundle(admission, name, tls.caPem)).to.equal('updated');
    const read = await admission.readMutatingWebhookConfiguration({ name });
    expect(Buffer.from(read.webhooks![0]!.clientConfig.caBundle!, 'base64').toString()).to.equal(tls.caPem);
    expect(read.webhooks![0]!.failurePolicy).to.equal('Ignore');
    expect(read.webhooks![0]!.reinvocationPolicy).to.equal('IfNeeded');
    expect(await injectCaBundle(admission, name, tls.caPem)).to.equal('unchanged');

    const cmName = `headroom-cm-${ns}`;
    created.push(cmName);
    const cm = exampleConfig(cmName);
    cm.metadata!.annotations = { [CERT_MANAGER_INJECT_CA_FROM]: 'headroom-system/headroom' };
    cm.webhooks![0]!.namespaceSelector!.matchExpressions!.push({ key: 'kubernetes.io/metadata.name', operator: 'In', values: ['none'] });
    await admission.createMutatingWebhookConfiguration({ body: cm });
    expect(await injectCaBundle(admission, cmName, tls.caPem)).to.equal('cert-manager');
    expect((await admission.readMutatingWebhookConfiguration({ name: cmName })).webhooks![0]!.clientConfig.caBundle).to.equal(undefined);
  });

  it('patches pods created through the API with the first-seen annotation and records demand', async () => {
    // The apiserver picks up a new webhook configuration asynchronously: retry until patched.
    const before = Date.now();
    let pod: V1Pod | undefined;
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline) {
      pod = await core.createNamespacedPod({ namespace: ns, body: newPod() });
      if (pod.metadata?.annotations?.[FIRST_SEEN_ANNOTATION]) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    const seen = firstSeenOf(pod!);
    expect(seen, 'pod carries the first-seen annotation').to.be.instanceOf(Date);
    expect(seen!.getTime()).to.be.within(before - 1000, Date.now() + 1000);
    // Stored, not just returned: read it back.
    const read = await core.readNamespacedPod({ name: pod!.metadata!.name!, namespace: ns });
    expect(read.metadata!.annotations![FIRST_SEEN_ANNOTATION]).to.equal(pod!.metadata!.annotations![FIRST_SEEN_ANNOTATION]);
    const records = intake.drain();
    const rec = records.find((r) => r.observedAt === seen!.getTime());
    expect(rec, 'demand recorded for the patched pod').to.not.equal(undefined);
    expect(rec!.source).to.equal('webhook');
    expect(rec!.generateName).to.equal('web-');
    expect(rec!.pod.namespace).to.equal(ns);
    expect(rec!.pod.requests.cpu).to.equal(100);
  });

  it('patches a dry-run create but records nothing', async () => {
    const pod = await core.createNamespacedPod({ namespace: ns, body: newPod(), dryRun: 'All' });
    expect(pod.metadata!.annotations?.[FIRST_SEEN_ANNOTATION]).to.be.a('string');
    expect(intake.size).to.equal(0);
  });

  it('fails open: with the webhook stopped, pod creation still succeeds', async () => {
    await server!.close(0);
    server = undefined;
    const started = Date.now();
    const pod = await core.createNamespacedPod({ namespace: ns, body: newPod() });
    expect(pod.metadata!.uid).to.be.a('string');
    expect(pod.metadata!.annotations?.[FIRST_SEEN_ANNOTATION]).to.equal(undefined);
    // Connection refused is immediate; the configured 2 s timeout bounds the worst case.
    expect(Date.now() - started).to.be.below(10_000);
  });
});
