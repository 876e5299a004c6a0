import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { KubeClient } from '../../src/kube/kube-client.js';
import { startControlPlane, type ControlPlane } from '../harness/control-plane.js';
import { makeTempDir, removeTempDir } from '../harness/process.js';
import { machineDeployment, pendingPod } from './controller-objects.js';

/**
 * `headroom plan --kubeconfig` against a real kube-apiserver whose audit log records
 * every request: the plan reads what the controller reads and writes nothing. A private
 * control plane with no scheduler, controller manager or kwok, so the plan is the only
 * client while it runs.
 */
describe('headroom plan --kubeconfig (live, read-only)', function () {
  this.timeout(240_000);
  let cp: ControlPlane;
  let dir: string;
  let auditLog: string;
  let client: KubeClient;
  const ns = 'plan-live';

  before(async () => {
    dir = makeTempDir('headroom-plan-live-');
    auditLog = join(dir, 'audit.log');
    const policy = join(dir, 'audit-policy.yaml');
    writeFileSync(policy, 'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n');
    cp = await startControlPlane({ apiServerArgs: [`--audit-policy-file=${policy}`, `--audit-log-path=${auditLog}`, '--audit-log-mode=blocking'] });
    client = new KubeClient(cp.kubeConfig());
    await client.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } } });
    await client.request('POST', `/apis/cluster.x-k8s.io/v1beta2/namespaces/${ns}/machinedeployments`, {
      body: machineDeployment({ namespace: ns, name: 'small', replicas: 0, min: 0, max: 5, cpu: '2', memory: '8Gi' }),
    });
    for (const name of ['web-1', 'web-2', 'web-3']) {
      await client.request('POST', `/api/v1/namespaces/${ns}/pods`, { body: pendingPod(ns, name, '1500m') });
    }
    await client.request('POST', `/api/v1/namespaces/${ns}/pods`, { body: pendingPod(ns, 'huge', '64') });
  });

  after(async () => {
    client?.close();
    await cp?.stop();
    if (dir) removeTempDir(dir);
  });

  function plan(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    const entry = join(process.cwd(), 'test', 'integration', 'controller-cli-entry.ts');
    return new Promise((resolve) => {
      execFile(process.execPath, ['--import', 'tsx', entry, 'plan', '--kubeconfig', cp.kubeconfigPath, ...args], { timeout: 150_000 }, (err, stdout, stderr) => {
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr });
      });
    });
  }

  /** Audit events (ResponseComplete) after byte `from` of the log. */
  /** Audit events after byte `from` of the log, of clients other than kube-apiserver itself (its own leases and controllers). */
  function auditEvents(from: number): Array<{ verb: string; requestURI: string; stage: string; user: { username: string } }> {
    return readFileSync(auditLog, 'utf8').slice(from).split('\n').filter(Boolean)
      .map((l) => JSON.parse(l) as { verb: string; requestURI: string; stage: string; user: { username: string } })
      .filter((e) => (e.stage === 'ResponseComplete' || e.stage === 'ResponseStarted') && e.user.username !== 'system:apiserver');
  }

  it('plans what the controller would do now, and the audit log shows no write', async () => {
    const from = readFileSync(auditLog, 'utf8').length;
    const r = await plan(['-o', 'json']);
    expect(r.code, r.stderr).to.equal(0);
    const out = JSON.parse(r.stdout) as { scaleUps: unknown[]; unschedulable: Array<{ pod: string; reason: string }> };
    // Three 1.5-CPU pods on 2-CPU nodes: one node each.
    expect(out.scaleUps).to.deep.equal([{ kind: 'MachineDeployment', namespace: ns, name: 'small', from: 0, to: 3 }]);
    expect(out.unschedulable.map((u) => u.pod)).to.deep.equal([`${ns}/huge`]);

    const events = auditEvents(from);
    const verbs = new Set(events.map((e) => e.verb));
    // The informers list by watch-list stream (ADR 0121): a watch with sendInitialEvents.
    const reads = events.filter((e) => e.verb === 'list' || (e.verb === 'watch' && e.requestURI.includes('sendInitialEvents=true')));
    expect(reads.length, `audit saw ${[...verbs].join(',')}`).to.be.greaterThan(0);
    const writes = events.filter((e) => !['get', 'list', 'watch'].includes(e.verb));
    expect(writes, JSON.stringify(writes.slice(0, 5))).to.deep.equal([]);
  });

  it('--why explains one pending pod; yaml output; bad flags exit 2 with one line', async () => {
    const why = await plan(['--why', `${ns}/web-1`]);
    expect(why.code, `${why.stderr} ${why.stdout}`).to.equal(0);
    expect(why.stdout).to.match(new RegExp(`^pod ${ns}/web-1: pending`));
    expect(why.stdout).to.match(/would provision new node \d+ of .*small.*0 -> 3 replicas/);
    const huge = await plan(['--why', `${ns}/huge`, '-o', 'json']);
    expect(JSON.parse(huge.stdout).why[1]).to.match(/^Headroom cannot provision for it: /);
    const yaml = await plan(['-o', 'yaml']);
    expect(yaml.code, yaml.stderr).to.equal(0);
    expect(yaml.stdout).to.match(/^scaleUps:\n {2}- kind: MachineDeployment/);
    const bad = await plan(['--why', 'not a pod']);
    expect(bad.code).to.equal(2);
    expect(bad.stderr.trim().split('\n')).to.have.length(1);
  });
});
