import { X509Certificate } from 'node:crypto';
import { mkdirSync, renameSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect } from 'node:tls';
import { AdmissionregistrationV1Api, CoreV1Api, type KubeConfig, type V1MutatingWebhookConfiguration, type V1Node, type V1Pod } from '@kubernetes/client-node';
import { expect } from 'chai';
import { parse } from 'yaml';
import { type CertificateAuthority, createCertificateAuthority, issueCertificate } from '../../certs/pki.js';
import { startHeadroomServer } from '../../src/cli/headroom-server.js';
import { ExtenderState } from '../../src/extender/state.js';
import { DemandIntake } from '../../src/provisioning/demand-intake.js';
import { systemClock } from '../../src/provisioning/clock.js';
import { parseResourceList } from '../../src/scheduling/resources.js';
import type { RunningServer } from '../../src/server/listen.js';
import { FIRST_SEEN_ANNOTATION } from '../../src/webhook/first-seen.js';
import type { Component, ControlPlane } from '../harness/control-plane.js';
import { createTestNamespace, deleteTestNamespace } from '../harness/namespace.js';
import { makeTempDir, removeTempDir } from '../harness/process.js';
import { eventually } from '../harness/wait.js';
import { sharedControlPlane } from './hooks.js';

/**
 * Issue 17, certificate rotation: the webhook and the extender are served from a
 * mounted TLS directory (as the CLI's --tls-dir) and keep answering the real
 * kube-apiserver and kube-scheduler while the certificate on disk is replaced, first
 * by a new leaf of the same CA, then by a leaf of a new CA (published in the trust
 * bundles beforehand, as trust-manager or cert-manager's CA injector do), without a
 * restart: the same listener, the same port.
 *
 * The webhook is registered failurePolicy: Fail here (the shipped one fails open), so
 * a TLS failure shows as a refused pod. The extender marks node `a` as being disrupted:
 * kube-scheduler puts pods on `b` only when the extender answered (it is ignorable, so
 * without an answer the default spreading would use `a` too).
 */
const GROUP_LABEL = 'headroom.dev/test-group';

describe('faults: webhook and extender certificate rotation, served without restart (shared control plane, ~1 min)', function () {
  let cp: ControlPlane;
  let kc: KubeConfig;
  let core: CoreV1Api;
  let admission: AdmissionregistrationV1Api;
  let ns: string;
  let tlsDir: string;
  let server: RunningServer | undefined;
  let scheduler: Component | undefined;
  const nodes: string[] = [];
  const state = new ExtenderState();
  const ca1 = createCertificateAuthority({ commonName: 'headroom-rotation-ca-1' });
  const ca2 = createCertificateAuthority({ commonName: 'headroom-rotation-ca-2' });
  const bundle = ca1.certPem + ca2.certPem;
  const leaf = (ca: CertificateAuthority) => issueCertificate(ca, { commonName: 'headroom', ipAddresses: ['127.0.0.1'], usages: ['server'] });
  const webhookName = () => `headroom-rotation-${ns}`;

  /** Replaces tls.crt and tls.key the way a rotation does: each file written aside, then renamed over. */
  function install(pair: { certPem: string; keyPem: string }): void {
    for (const [file, pem] of [['tls.crt', pair.certPem], ['tls.key', pair.keyPem]] as const) {
      writeFileSync(join(tlsDir, `.${file}.tmp`), pem, { mode: 0o600 });
      renameSync(join(tlsDir, `.${file}.tmp`), join(tlsDir, file));
    }
  }

  /** The serial number of the certificate a fresh TLS handshake with the server presents. */
  function servedSerial(): Promise<string> {
    return new Promise((resolve, reject) => {
      const socket = connect({ host: '127.0.0.1', port: Number(new URL(server!.url).port), rejectUnauthorized: false }, () => {
        const serial = socket.getPeerCertificate().serialNumber;
        socket.end();
        resolve(serial.toLowerCase());
      });
      socket.on('error', reject);
    });
  }
  const serialOf = (pem: string) => new X509Certificate(pem).serialNumber.toLowerCase();

  before(async function () {
    this.timeout(240_000);
    cp = await sharedControlPlane();
    kc = cp.kubeConfig();
    core = kc.makeApiClient(CoreV1Api);
    admission = kc.makeApiClient(AdmissionregistrationV1Api);
    ns = await createTestNamespace(kc, 'fault-certs');
    tlsDir = makeTempDir('headroom-rotation-');
    mkdirSync(tlsDir, { recursive: true });
    install(leaf(ca1));
    server = await startHeadroomServer({
      host: '127.0.0.1', port: 0, tls: { dir: tlsDir, watch: { pollMs: 1000, debounceMs: 100 } },
      state: () => state, intake: new DemandIntake(100), clock: systemClock, ready: () => true,
    });
    // The webhook, scoped to this namespace, trusting both CAs.
    const config = parse(readFileSync('webhook-config/mutating-webhook-configuration.yaml', 'utf8')) as V1MutatingWebhookConfiguration;
    config.metadata = { name: webhookName() };
    const hook = config.webhooks![0]!;
    hook.clientConfig = { url: `${server.url}/mutate/pods`, caBundle: Buffer.from(bundle).toString('base64') };
    hook.failurePolicy = 'Fail';
    hook.namespaceSelector!.matchExpressions!.push({ key: 'kubernetes.io/metadata.name', operator: 'In', values: [ns] });
    await admission.createMutatingWebhookConfiguration({ body: config });
    // Two kwok nodes only this file's pods select and tolerate; `a` is being disrupted.
    for (const suffix of ['a', 'b']) {
      const name = `${ns}-${suffix}`;
      const allocatable = { cpu: '8', memory: '16Gi', pods: '110' };
      const body: V1Node = {
        metadata: { name, labels: { [GROUP_LABEL]: ns, 'kubernetes.io/hostname': name }, annotations: { 'kwok.x-k8s.io/node': 'fake' } },
        spec: { taints: [{ key: GROUP_LABEL, value: ns, effect: 'NoSchedule' }] },
        status: { allocatable, capacity: allocatable },
      };
      await core.createNode({ body });
      nodes.push(name);
      state.setNode(name, { allocatable: parseResourceList(allocatable), requested: {} });
    }
    state.markDisrupting(`${ns}-a`, 'test: being disrupted');
    const schedulerConfig = parse(readFileSync('webhook-config/kube-scheduler-configuration.yaml', 'utf8')) as Record<string, unknown>;
    Object.assign((schedulerConfig.extenders as Record<string, unknown>[])[0]!, {
      urlPrefix: `${server.url}/scheduler`,
      tlsConfig: { caData: Buffer.from(bundle).toString('base64') },
    });
    scheduler = await cp.startScheduler({ schedulerName: `rotation-${ns}`, config: schedulerConfig });
  });

  after(async function () {
    this.timeout(60_000);
    await scheduler?.stop();
    await server?.close(0);
    await admission?.deleteMutatingWebhookConfiguration({ name: webhookName() }).catch(() => undefined);
    for (const name of nodes) await core.deleteNode({ name }).catch(() => undefined);
    if (ns) await deleteTestNamespace(kc, ns).catch(() => undefined);
    if (tlsDir) removeTempDir(tlsDir);
  });

  let round = 0;
  /** Four pods through the webhook and the extender: all admitted with the annotation, all bound to `b`. */
  async function podsServed(): Promise<{ annotated: number; onB: number }> {
    round++;
    const names = Array.from({ length: 4 }, (_, i) => `r${round}-${i}`);
    const created: V1Pod[] = [];
    for (const name of names) {
      created.push(await core.createNamespacedPod({
        namespace: ns,
        body: {
          metadata: { name, namespace: ns },
          spec: {
            schedulerName: `rotation-${ns}`,
            nodeSelector: { [GROUP_LABEL]: ns },
            tolerations: [{ key: GROUP_LABEL, operator: 'Equal', value: ns, effect: 'NoSchedule' }],
            containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.10', resources: { requests: { cpu: '100m', memory: '64Mi' } } }],
          },
        },
      }));
    }
    const bound = await eventually('the pods bound', async () => {
      const pods = await Promise.all(names.map((name) => core.readNamespacedPod({ name, namespace: ns })));
      return pods.every((p) => p.spec?.nodeName) ? pods : false;
    }, { timeoutMs: 60_000, intervalMs: 200 });
    for (const p of bound) state.addPod(p.spec!.nodeName!, parseResourceList({ cpu: '100m', memory: '64Mi', pods: '1' }));
    return {
      annotated: created.filter((p) => p.metadata?.annotations?.[FIRST_SEEN_ANNOTATION]).length,
      onB: bound.filter((p) => p.spec?.nodeName === `${ns}-b`).length,
    };
  }

  it('rotates to a new leaf of the same CA, then to a leaf of a new CA: the apiserver and the scheduler keep being answered on the same port', async function () {
    this.timeout(180_000);
    const port = new URL(server!.url).port;
    // The apiserver picks the webhook configuration up asynchronously.
    await eventually('the webhook in force', async () => (await podsServed()).annotated === 4, { timeoutMs: 30_000, intervalMs: 500 });
    const first = await podsServed();
    const rows: string[] = [`initial (CA 1): ${first.annotated}/4 annotated, ${first.onB}/4 on b`];
    expect(first).to.deep.equal({ annotated: 4, onB: 4 });
    for (const [label, ca] of [['new leaf, same CA', ca1], ['leaf of a new CA', ca2]] as const) {
      const next = leaf(ca);
      const want = serialOf(next.certPem);
      const t0 = Date.now();
      install(next);
      await eventually(`the ${label} served`, async () => (await servedSerial()) === want, { timeoutMs: 20_000, intervalMs: 100 });
      const servedAfter = Date.now() - t0;
      const r = await podsServed();
      rows.push(`${label}: served ${servedAfter} ms after the write; ${r.annotated}/4 annotated, ${r.onB}/4 on b`);
      expect(r).to.deep.equal({ annotated: 4, onB: 4 });
    }
    console.log(`      [measure] certificate rotation: ${rows.join('; ')}`);
    expect(new URL(server!.url).port).to.equal(port);
  });
});
