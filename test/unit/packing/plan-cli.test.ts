import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';

const ROOT = new URL('../../../', import.meta.url).pathname;

/**
 * Runs the real CLI (src/cli/main.ts through tsx), as a user would after a build. Async,
 * so a test's independent runs start together: each is about a second of tsx start-up,
 * and the unit suite's one process leaves the second core idle meanwhile.
 */
function headroom(args: string[], input?: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const entry = join(mkdtempSync(join(tmpdir(), 'plan-cli-')), 'cli.mjs');
  const main = new URL('src/cli/main.ts', new URL(`file://${ROOT}`)).href;
  writeFileSync(entry, `import { main } from ${JSON.stringify(main)};\nprocess.exitCode = await main(process.argv.slice(2));\n`);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', entry, ...args], { cwd: ROOT, timeout: 60_000 });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input);
  });
}

describe('headroom plan', function () {
  this.timeout(60_000);

  it('prints the JSON contract with exactly its keys for the example cluster', async () => {
    const r = await headroom(['plan', '-f', 'test/fixtures/example-cluster.yaml', '-o', 'json']);
    expect(r.code, r.stderr).to.equal(0);
    const out = JSON.parse(r.stdout);
    expect(Object.keys(out)).to.deep.equal(['scaleUps', 'placements', 'unschedulable', 'cost']);
    expect(Object.keys(out.cost)).to.deep.equal(['addedPerHour']);
    for (const s of out.scaleUps) {
      expect(Object.keys(s)).to.deep.equal(['kind', 'namespace', 'name', 'from', 'to']);
      expect(s.to).to.be.greaterThan(s.from);
    }
    for (const p of out.placements) expect(Object.keys(p).join()).to.be.oneOf(['pod,node', 'pod,group,newNode']);
    expect(out.placements.length).to.be.greaterThan(0);
  });

  it('plans every example in test/fixtures', async () => {
    const dir = join(ROOT, 'test/fixtures');
    const examples = readdirSync(dir).filter((f) => /\.ya?ml$/.test(f));
    expect(examples.length).to.be.greaterThan(0);
    const runs = await Promise.all(examples.map((f) => headroom(['plan', '-f', join('test/fixtures', f), '-o', 'json'])));
    for (const [i, f] of examples.entries()) {
      const r = runs[i]!;
      expect(r.code, `${f}: ${r.stderr}`).to.equal(0);
      const out = JSON.parse(r.stdout);
      expect(out.placements.length + out.unschedulable.length, f).to.be.greaterThan(0);
      for (const u of out.unschedulable) expect(u.reason, f).to.be.a('string').and.not.equal('');
    }
  });

  it('plans a CronJob run due within the boot horizon as predicted pods, listed apart from real pods', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'plan-predict-'));
    writeFileSync(join(dir, 'cluster.yaml'), [
      'apiVersion: cluster.x-k8s.io/v1beta2', 'kind: MachineDeployment', 'metadata:', '  name: batch', '  namespace: default', '  labels: {pool: batch}', '  annotations:',
      '    cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size: "0"', '    cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size: "5"',
      '    capacity.cluster-autoscaler.kubernetes.io/cpu: "4"', '    capacity.cluster-autoscaler.kubernetes.io/memory: 16Gi', '    headroom.dev/price: "0.2"',
      'spec:', '  clusterName: c', '  replicas: 0', '  template:', '    spec: {clusterName: c, bootstrap: {dataSecretName: x}, infrastructureRef: {apiGroup: infrastructure.cluster.x-k8s.io, kind: DockerMachineTemplate, name: t}}',
      '---', 'apiVersion: headroom.dev/v1alpha1', 'kind: NodePool', 'metadata: {name: batch}',
      'spec: {nodeGroupSelector: {matchLabels: {pool: batch}}, prediction: {enabled: true}}',
      '---', 'apiVersion: batch/v1', 'kind: CronJob', 'metadata: {name: report, namespace: default, creationTimestamp: "2026-03-02T09:00:00Z"}',
      'spec:', '  schedule: "*/5 * * * *"', '  jobTemplate:', '    spec:', '      parallelism: 2', '      template:',
      '        spec: {restartPolicy: Never, containers: [{name: c, image: x, resources: {requests: {cpu: "3", memory: 1Gi}}}]}',
      'status: {lastScheduleTime: "2026-03-02T10:00:00Z"}',
      '---', 'apiVersion: v1', 'kind: Pod', 'metadata: {name: web-1, namespace: default}',
      'spec: {containers: [{name: c, image: x, resources: {requests: {cpu: "1", memory: 1Gi}}}]}',
    ].join('\n'));
    // Last run 10:00, next 10:05. At 10:03 it is within the horizon (3 min boot + 1 min lead); at 10:00:30 it is not yet.
    const [due, text, laterRun, bad] = await Promise.all([
      headroom(['plan', '-f', dir, '-o', 'json', '--at', '2026-03-02T10:03:00Z']),
      headroom(['plan', '-f', dir, '--at', '2026-03-02T10:03:00Z']),
      headroom(['plan', '-f', dir, '-o', 'json', '--at', '2026-03-02T10:00:30Z']),
      headroom(['plan', '-f', dir, '--at', 'tomorrow']),
    ]);
    expect(due.code, due.stderr).to.equal(0);
    const out = JSON.parse(due.stdout);
    expect(out.placements.map((p: { pod: string }) => p.pod)).to.deep.equal(['default/web-1']);
    expect(out.predicted.placements.map((p: { pod: string }) => p.pod)).to.deep.equal(['default/predicted-cronjob-report-0', 'default/predicted-cronjob-report-1']);
    expect(out.scaleUps).to.deep.equal([{ kind: 'MachineDeployment', namespace: 'default', name: 'batch', from: 0, to: 2 }]);
    expect(text.stdout).to.match(/Placements: 1 pod\(s\)/).and.match(/Predicted pods \(forecast, lowest priority\): 2/);
    const later = JSON.parse(laterRun.stdout);
    expect(later.predicted).to.equal(undefined);
    expect(later.scaleUps).to.deep.equal([{ kind: 'MachineDeployment', namespace: 'default', name: 'batch', from: 0, to: 1 }]);
    expect(bad.code).to.equal(2);
    expect(bad.stderr.trim().split('\n')).to.have.length(1);
  });

  it('reads stdin and directories, and prints a text table', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'plan-'));
    writeFileSync(join(dir, 'a.yaml'), [
      'apiVersion: cluster.x-k8s.io/v1beta2', 'kind: MachineDeployment', 'metadata:', '  name: small', '  namespace: default', '  annotations:',
      '    cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size: "0"', '    cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size: "5"',
      '    capacity.cluster-autoscaler.kubernetes.io/cpu: "2"', '    capacity.cluster-autoscaler.kubernetes.io/memory: 8Gi', '    headroom.dev/price: "0.1"',
      'spec:', '  clusterName: c', '  replicas: 0', '  template:', '    spec: {clusterName: c, bootstrap: {dataSecretName: x}, infrastructureRef: {apiGroup: infrastructure.cluster.x-k8s.io, kind: DockerMachineTemplate, name: t}}',
    ].join('\n'));
    const pods = ['web-1', 'web-2', 'web-3'].map((n) => `apiVersion: v1\nkind: Pod\nmetadata: {name: ${n}, namespace: default}\nspec:\n  containers: [{name: c, image: x, resources: {requests: {cpu: "1", memory: 1Gi}}}]`).join('\n---\n');
    const r = await headroom(['plan', '-f', dir, '-f', '-'], pods);
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.match(/MachineDeployment\s+default\s+small\s+0\s+2/);
    expect(r.stdout).to.contain('default/web-3');
    expect(r.stdout).to.contain('Added cost: 0.2000 per hour');
  });

  it('a stricter NodePool never scales more: a requirement the group fails holds it at 0 (issue 25, ADR 0138)', async () => {
    const group = [
      'apiVersion: cluster.x-k8s.io/v1beta2', 'kind: MachineDeployment', 'metadata:', '  name: workers-m', '  namespace: default', '  labels: {pool: m}', '  annotations:',
      '    cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size: "0"', '    cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size: "5"',
      '    capacity.cluster-autoscaler.kubernetes.io/cpu: "2"', '    capacity.cluster-autoscaler.kubernetes.io/memory: 8Gi',
      'spec:', '  clusterName: c', '  replicas: 0', '  template:', '    spec: {clusterName: c, bootstrap: {dataSecretName: x}, infrastructureRef: {apiGroup: infrastructure.cluster.x-k8s.io, kind: DockerMachineTemplate, name: t}}',
      '---', 'apiVersion: v1', 'kind: Pod', 'metadata: {name: web, namespace: default}', 'spec:', '  containers: [{name: c, image: x, resources: {requests: {cpu: 500m, memory: 1Gi}}}]',
    ].join('\n');
    const pool = (requirements: string) => `---\napiVersion: headroom.dev/v1alpha1\nkind: NodePool\nmetadata: {name: m}\nspec:\n  nodeGroupSelector: {matchLabels: {pool: m}}\n  limits: {cpu: "1"}\n${requirements}`;
    const [limited, stricter, free] = await Promise.all([
      headroom(['plan', '-f', '-', '-o', 'json'], `${group}\n${pool('')}`),
      headroom(['plan', '-f', '-', '-o', 'json'], `${group}\n${pool('  requirements: [{key: karpenter.sh/capacity-type, operator: In, values: [spot]}]\n')}`),
      headroom(['plan', '-f', '-', '-o', 'json'], group),
    ]);
    for (const r of [limited, stricter, free]) expect(r.code, r.stderr).to.equal(0);
    expect(JSON.parse(free.stdout).scaleUps, 'no NodePool: scaled with the defaults').to.have.length(1);
    expect(JSON.parse(limited.stdout).scaleUps, 'the pool\'s cpu limit holds it').to.deep.equal([]);
    expect(JSON.parse(stricter.stdout).scaleUps, 'the stricter pool holds it too').to.deep.equal([]);
    expect(stricter.stderr).to.match(/warning: MachineDeployment default\/workers-m: held, neither scaled up nor down: NodePool m selects it/);
  });

  it('--why for a pod that is not in the input exits non-zero with one line (issue 25, item 8)', async () => {
    const r = await headroom(['plan', '-f', 'test/fixtures/example-cluster.yaml', '--why', 'default/no-such-pod']);
    expect(r.code).to.equal(1);
    expect(r.stderr.trim().split('\n')).to.have.length(1);
    expect(r.stderr).to.match(/--why default\/no-such-pod: no such pod in the input/);
  });

  it('exits non-zero with one line naming the object and the field on bad input', async () => {
    const cases = [
      ['bad-quantity.yaml', /MachineDeployment default\/small: annotation capacity.cluster-autoscaler.kubernetes.io\/memory: invalid quantity "12Qi"/],
      ['bad-pod-quantity.yaml', /Pod default\/web: spec.containers\[0\].resources.requests.cpu/],
      ['broken.yaml', /broken.yaml: document 2 \(line \d+, column \d+\): invalid YAML/],
    ] as const;
    const runs = await Promise.all(cases.map(([file]) => headroom(['plan', '-f', `test/fixtures/bad/${file}`])));
    for (const [i, [file, want]] of cases.entries()) {
      const r = runs[i]!;
      expect(r.code, file).to.equal(1);
      expect(r.stdout).to.equal('');
      const lines = r.stderr.trim().split('\n');
      expect(lines, file).to.have.length(1);
      expect(lines[0]).to.match(want);
    }
  });

  it('refuses negative quantities with one line naming the object and the field (issue 10)', async () => {
    const read = (f: string) => readFileSync(join(ROOT, 'test/fixtures/bad', f), 'utf8');
    const cases = [
      [read('bad-quantity.yaml').replace('memory: 12Qi', 'memory: "-12Gi"'), /MachineDeployment default\/small: annotation capacity.cluster-autoscaler.kubernetes.io\/memory: invalid quantity "-12Gi": must not be negative/],
      [read('bad-pod-quantity.yaml').replace('cpu: 1.5 cores', 'cpu: "-1000000"'), /Pod default\/web: spec.containers\[0\].resources.requests.cpu: invalid quantity "-1000000": must not be negative/],
    ] as const;
    const runs = await Promise.all(cases.map(([input]) => headroom(['plan', '-f', '-'], input)));
    for (const [i, [, want]] of cases.entries()) {
      const r = runs[i]!;
      expect(r.code, r.stderr).to.equal(1);
      const lines = r.stderr.trim().split('\n');
      expect(lines).to.have.length(1);
      expect(lines[0]).to.match(want);
    }
  });

  it('plans CapacityBuffers and ProvisioningRequests with what they reference, as the controller would', async () => {
    const r = await headroom(['plan', '-f', 'test/fixtures/capacity-apis.yaml', '-o', 'json']);
    expect(r.code, r.stderr).to.equal(0);
    const out = JSON.parse(r.stdout);
    expect(Object.keys(out)).to.deep.equal(['scaleUps', 'placements', 'unschedulable', 'cost', 'capacityBuffers', 'provisioningRequests']);
    // Two 3-CPU pods of the atomic request, one per 4-CPU node; the buffer's two 1-CPU
    // chunks (20% of 10 replicas) fill the rest; the check-capacity request scales nothing.
    expect(out.scaleUps).to.deep.equal([{ kind: 'MachineDeployment', namespace: 'capi', name: 'md', from: 0, to: 2 }]);
    expect(out.unschedulable).to.deep.equal([]);
    expect(out.capacityBuffers).to.deep.equal([
      { namespace: 'apps', name: 'web-spare', chunks: 2 },
      { namespace: 'apps', name: 'broken', chunks: 0, problem: 'podTemplateRef: PodTemplate apps/does-not-exist not found' },
    ]);
    const provisioned = (name: string) => out.provisioningRequests.find((p: { name: string }) => p.name === name).conditions.find((c: { type: string }) => c.type === 'Provisioned');
    expect(provisioned('train')).to.include({ status: 'True', reason: 'CapacityIsProvisioned' });
    expect(provisioned('check')).to.include({ status: 'False', reason: 'CapacityIsNotFound' });
    expect(r.stderr.trim().split('\n')).to.deep.equal(['headroom: warning: CapacityBuffer apps/broken: podTemplateRef: PodTemplate apps/does-not-exist not found']);
  });

  it('rejects a missing -f and an unknown output format with a usage error', async () => {
    const [missing, r] = await Promise.all([headroom(['plan']), headroom(['plan', '-f', 'test/fixtures/example-cluster.yaml', '-o', 'xml'])]);
    expect(missing.code).to.equal(2);
    expect(r.code).to.equal(2);
    expect(r.stderr.trim().split('\n')).to.have.length(1);
  });
});
