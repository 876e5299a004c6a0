/**
 * `headroom dev-cluster`: starts with the real Cluster API manager and the kwok
 * provider, serves a usable kubeconfig, turns the printed example MachineDeployment into
 * a Machine with a kwok Node, and cleans up on SIGTERM.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { expect } from 'chai';
import { parse } from 'yaml';
import { exampleMachineDeployment } from '../harness/dev-cluster-example.js';
import { kubeRequest } from '../harness/kube-request.js';
import { eventually } from '../harness/wait.js';

describe('harness: headroom dev-cluster', function () {
  this.timeout(180_000);
  const dir = mkdtempSync(join(tmpdir(), 'headroom-devcluster-test-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('prints a kubeconfig for a working cluster whose real CAPI turns a MachineDeployment into a kwok Node, and removes everything on SIGTERM', async () => {
    const kubeconfig = join(dir, 'kubeconfig');
    const entry = new URL('../../src/cli/main.ts', import.meta.url).href;
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', '--input-type=module', '-e', `const { main } = await import(${JSON.stringify(entry)}); process.exitCode = await main(process.argv.slice(1));`,
        'dev-cluster', '--boot-delay', '0', '--kubeconfig', kubeconfig],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    const exited = new Promise<number | null>((res) => child.on('exit', (code) => res(code)));
    try {
      await new Promise<void>((res, rej) => {
        const t = setInterval(() => {
          if (out.includes('Ctrl-C stops it')) { clearInterval(t); res(); }
          if (child.exitCode !== null) { clearInterval(t); rej(new Error(`dev-cluster exited early:\n${out}`)); }
        }, 100);
      });
      expect(out).to.include(`kubeconfig: ${kubeconfig}`);
      const logs = /logs: (\S+)\/logs/.exec(out)?.[1];
      expect(logs, out).to.be.a('string');
      const kc = new KubeConfig();
      kc.loadFromFile(kubeconfig);
      const ns = await kc.makeApiClient(CoreV1Api).listNamespace();
      expect(ns.items.map((n) => n.metadata?.name)).to.include('kube-system');
      expect(out).to.include('kind: MachineDeployment');
      const md = parse(exampleMachineDeployment('try')) as { spec: { replicas: number } };
      md.spec.replicas = 1;
      await kubeRequest(kc, 'POST', '/apis/cluster.x-k8s.io/v1beta2/namespaces/default/machinedeployments', md);
      await eventually('a Machine with a nodeRef', async () => {
        const items = (await kubeRequest<{ items: Array<{ status?: { nodeRef?: { name?: string } } }> }>(kc, 'GET', '/apis/cluster.x-k8s.io/v1beta2/namespaces/default/machines')).items;
        return items.length === 1 && Boolean(items[0]!.status?.nodeRef?.name);
      }, { timeoutMs: 90_000, intervalMs: 500 });

      child.kill('SIGTERM');
      expect(await exited).to.equal(0);
      expect(existsSync(kubeconfig), 'kubeconfig removed').to.equal(false);
      expect(existsSync(logs!), 'control plane dir removed').to.equal(false);
    } finally {
      child.kill('SIGKILL');
    }
  });
});
