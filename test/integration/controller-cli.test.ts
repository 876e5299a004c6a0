import { mkdirSync, writeFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { join } from 'node:path';
import { expect } from 'chai';
import type { KubeConfig, V1Pod } from '@kubernetes/client-node';
import { KubeClient } from '../../src/kube/kube-client.js';
import type { ControlPlane } from '../harness/control-plane.js';
import { MachineFixture, fixtureNodeSelector } from '../harness/machine-fixture.js';
import { createTestNamespace, deleteTestNamespace } from '../harness/namespace.js';
import { freePort } from '../harness/ports.js';
import { ManagedProcess, makeTempDir, removeTempDir } from '../harness/process.js';
import { eventually } from '../harness/wait.js';
import { sharedControlPlane } from './hooks.js';
import { generateServingCert } from '../../src/server/serving-cert.js';
import { machineDeployment, pendingPod } from './controller-objects.js';

/**
 * `headroom controller` as a real process (from source, via tsx): flags, health and
 * metrics endpoints, the piscina solver pool, leader election, SIGKILL in the middle
 * of a scale-up and a restart, and a graceful SIGTERM that releases the lease.
 */
describe('headroom controller process (CLI)', function () {
  let cp: ControlPlane;
  let kc: KubeConfig;
  let client: KubeClient;
  let ns: string;
  let fixture: MachineFixture;
  const procs: ManagedProcess[] = [];
  let logDir: string;

  before(async function () {
    this.timeout(180_000);
    cp = await sharedControlPlane();
    kc = cp.kubeConfig();
    client = new KubeClient(kc);
    logDir = makeTempDir('headroom-controller-cli-');
    ns = await createTestNamespace(kc, 'ctl-cli');
    fixture = await MachineFixture.start({ kubeConfig: kc, namespace: ns, bootDelayMs: 3000, intervalMs: 100 });
  });

  after(async function () {
    this.timeout(60_000);
    for (const p of procs) await p.stop(2000).catch(() => {});
    await client.request('DELETE', `/api/v1/namespaces/${ns}/pods`, { query: { gracePeriodSeconds: 0 } }).catch(() => {});
    await fixture?.stop();
    await deleteTestNamespace(kc, ns).catch(() => {});
    client?.close();
    if (logDir) removeTempDir(logDir);
  });

  async function startProcess(port: number, extra: string[] = ['--leader-elect', '--leader-election-namespace', ns]): Promise<ManagedProcess> {
    const entry = join(process.cwd(), 'test', 'integration', 'controller-cli-entry.ts');
    const p = ManagedProcess.start('headroom-controller', process.execPath, [
      '--import', 'tsx', entry, 'controller',
      '--kubeconfig', cp.kubeconfigPath,
      '--namespace', ns, '--cluster-name', 'test',
      '--pod-namespace', ns, '--node-label-selector', fixtureNodeSelector({ namespace: ns }),
      ...extra,
      '--batch-idle-duration', '300', '--batch-max-duration', '3000',
      '--solver-threads', '1',
      '--metrics-address', `127.0.0.1:${port}`,
    ], { logFile: join(logDir, `headroom-controller-${port}.log`) });
    procs.push(p);
    return p;
  }

  const http = async (port: number, path: string) => {
    const res = await fetch(`http://127.0.0.1:${port}${path}`);
    return { status: res.status, text: await res.text() };
  };
  const replicas = async () => (await client.get<{ spec: { replicas: number } }>(`/apis/cluster.x-k8s.io/v1beta2/namespaces/${ns}/machinedeployments/md`)).spec.replicas;
  const lease = () => client.get<{ spec: { holderIdentity?: string } }>(`/apis/coordination.k8s.io/v1/namespaces/${ns}/leases/headroom-controller`);

  it('serves health and metrics, scales up, survives SIGKILL mid-scale-up, and releases its lease on SIGTERM', async function () {
    this.timeout(240_000);
    await client.request('POST', `/apis/cluster.x-k8s.io/v1beta2/namespaces/${ns}/machinedeployments`, {
      body: machineDeployment({ namespace: ns, name: 'md', replicas: 0, min: 0, max: 20, cpu: '4', memory: '16Gi' }),
    });
    const port1 = await freePort();
    const first = await startProcess(port1);
    await eventually('/readyz 200', async () => (await http(port1, '/readyz').catch(() => ({ status: 0 }))).status === 200, { timeoutMs: 60_000, intervalMs: 200 })
      .catch((err: Error) => { throw new Error(`${err.message}\n${first.logTail()}`); });
    expect((await http(port1, '/healthz')).status).to.equal(200);
    await eventually('the first process to lead', async () => !!(await lease()).spec.holderIdentity, { timeoutMs: 20_000 });

    await Promise.all(Array.from({ length: 30 }, (_, i) => client.request('POST', `/api/v1/namespaces/${ns}/pods`, { body: pendingPod(ns, `p-${i}`, '500m') })));
    await eventually('the scale-up', async () => (await replicas()) > 0, { timeoutMs: 30_000, intervalMs: 20 })
      .catch((err: Error) => { throw new Error(`${err.message}\n${first.logTail()}`); });
    // The counter moves when the controller has the scale write's response, which a
    // loaded machine can delay by seconds after the write is visible here.
    const metrics = await eventually('scale-up metrics', async () => {
      const m = (await http(port1, '/metrics')).text;
      return /headroom_scale_ups_total\{[^}]*name="md"[^}]*\} 1/.test(m) ? m : false;
    }, { timeoutMs: 20_000, intervalMs: 100 });
    expect(metrics).to.match(/headroom_node_group_replicas\{kind="MachineDeployment",namespace="[^"]+",name="md"\} [1-9]/);
    expect(metrics).to.match(/headroom_informer_last_sync_age_seconds\{resource="pods"\} \d/);
    expect(metrics).to.match(/headroom_scheduler_scheduling_duration_seconds_count\{controller="provisioner"\} [1-9]/);
    expect(metrics).to.match(/^headroom_leader 1$/m);

    // Crash while the new nodes are still booting (the fixture's boot delay is 3 s).
    const atKill = await replicas();
    const nodesAtKill = (await client.get<{ items: unknown[] }>('/api/v1/nodes', { labelSelector: fixtureNodeSelector({ namespace: ns }) })).items.length;
    process.kill(-first.pid, 'SIGKILL');
    await first.exited;
    expect(nodesAtKill).to.be.lessThan(atKill);

    const port2 = await freePort();
    const second = await startProcess(port2);
    const pods = await eventually('30 pods Running', async () => {
      const items = (await client.get<{ items: V1Pod[] }>(`/api/v1/namespaces/${ns}/pods`)).items;
      return items.length === 30 && items.every((p) => p.status?.phase === 'Running') ? items : false;
    }, { timeoutMs: 90_000, intervalMs: 250 }).catch((err: Error) => { throw new Error(`${err.message}\n${second.logTail()}`); });
    expect(pods).to.have.length(30);
    // The restarted process took over the lease and counted the in-flight replicas: the
    // result is what an uninterrupted run gives (30 x 500m at 8 per 4-cpu node = 4 nodes;
    // controller.test.ts compares against an actual uninterrupted run).
    // The second process leads once the killed one's 10 s lease expires, and only after
    // its own start (tsx, the solver pool, every informer synced), which a loaded CI
    // machine stretches as it does the first process's: the same 60 s allowance.
    await eventually('the second process to lead', async () => /^headroom_leader 1$/m.test((await http(port2, '/metrics').catch(() => ({ text: '' }))).text), { timeoutMs: 70_000, intervalMs: 250 })
      .catch((err: Error) => { throw new Error(`${err.message}\n${second.logTail()}`); });
    expect(atKill).to.be.at.most(4);
    expect(await replicas()).to.equal(4);
    console.log(`      [measure] CLI restart after SIGKILL: replicas at kill ${atKill} (nodes ${nodesAtKill}), after restart ${await replicas()}`);

    // Graceful stop: exit 0 and the lease is released for the next replica.
    await second.stop(10_000);
    const exit = await second.exited;
    expect(exit.code).to.equal(0);
    expect((await lease()).spec.holderIdentity ?? '', second.logTail()).to.equal('');
  });

  it('serves the webhook and the scheduler extender over TLS from the live cache (--webhook-address)', async function () {
    this.timeout(90_000);
    const tls = generateServingCert({ service: 'headroom', namespace: ns, extraHosts: ['127.0.0.1'] });
    const tlsDir = join(logDir, 'tls');
    mkdirSync(tlsDir);
    writeFileSync(join(tlsDir, 'tls.crt'), tls.certPem);
    writeFileSync(join(tlsDir, 'tls.key'), tls.keyPem);
    const port = await freePort();
    const webhookPort = await freePort();
    const p = await startProcess(port, ['--webhook-address', `127.0.0.1:${webhookPort}`, '--tls-dir', tlsDir]);
    await eventually('/readyz 200', async () => (await http(port, '/readyz').catch(() => ({ status: 0 }))).status === 200, { timeoutMs: 60_000, intervalMs: 200 })
      .catch((err: Error) => { throw new Error(`${err.message}\n${p.logTail()}`); });
    const post = (path: string, body: unknown) => new Promise<{ status: number; json: unknown }>((resolve, reject) => {
      const req = httpsRequest({ host: '127.0.0.1', port: webhookPort, path, method: 'POST', ca: tls.caPem, headers: { 'Content-Type': 'application/json' } }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => { text += c; });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, json: text ? JSON.parse(text) : undefined }));
      });
      req.on('error', reject);
      req.end(JSON.stringify(body));
    });
    // The nodes of the first test hold 8, 8, 8 and 6 pods: a live view scores them apart.
    const nodes = (await client.get<{ items: Array<{ metadata: { name: string } }> }>('/api/v1/nodes', { labelSelector: fixtureNodeSelector({ namespace: ns }) })).items.map((n) => n.metadata.name);
    expect(nodes.length).to.be.at.least(2);
    const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'probe', namespace: ns, uid: 'probe-uid' }, spec: { containers: [{ name: 'c', image: 'x', resources: { requests: { cpu: '100m' } } }] } };
    const scores = await eventually('the extender to see the nodes\' pods', async () => {
      const res = await post('/scheduler/prioritize', { Pod: pod, NodeNames: nodes });
      const list = res.json as Array<{ Host: string; Score: number }>;
      // Apart: two different scores, or some nodes scored and the rest left out (score 0).
      const apart = list.length > 0 && (new Set(list.map((h) => h.Score)).size > 1 || list.length < nodes.length);
      return res.status === 200 && apart ? list : false;
    }, { timeoutMs: 15_000, intervalMs: 300 });
    // Nodes scored 0 are left out of the answer (ADR 0135): every listed host is a candidate, scored 1..10.
    expect(scores.every((h) => nodes.includes(h.Host) && h.Score >= 1 && h.Score <= 10), JSON.stringify(scores)).to.equal(true);
    const filter = await post('/scheduler/filter', { Pod: pod, NodeNames: nodes });
    expect(filter.status).to.equal(200);
    expect((filter.json as { NodeNames: string[] }).NodeNames.sort()).to.deep.equal([...nodes].sort());
    const review = await post('/mutate/pods', {
      apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview',
      request: { uid: 'r-1', kind: { group: '', version: 'v1', kind: 'Pod' }, resource: { group: '', version: 'v1', resource: 'pods' }, namespace: ns, operation: 'CREATE', object: pod },
    });
    expect(review.status).to.equal(200);
    expect(review.json).to.deep.include({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview' });
    expect((review.json as { response: { uid: string; allowed: boolean } }).response).to.include({ uid: 'r-1', allowed: true });
    await p.stop(10_000);
    expect((await p.exited).code).to.equal(0);
  });
});
