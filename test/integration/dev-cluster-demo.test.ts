/**
 * `headroom dev-cluster --demo` end to end, as a user runs it: the printed kubectl
 * commands scale the sample Deployment up, Headroom (controller, webhook, extender)
 * scales the demo MachineDeployments through the real Cluster API manager, kwok Nodes
 * join and the pods run on them; scaled back to 0, the empty nodes leave after the
 * NodePool's consolidateAfter (5 s here, through --consolidate-after).
 */
import { spawn, execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { resolveKubectl } from '../harness/assets.js';
import { eventually } from '../harness/wait.js';

const run = promisify(execFile);

interface NodeList { items: Array<{ metadata: { name: string; annotations?: Record<string, string> }; status?: { conditions?: Array<{ type: string; status: string }> } }> }
interface PodList { items: Array<{ metadata: { annotations?: Record<string, string> }; spec: { nodeName?: string }; status: { phase: string } }> }

describe('headroom dev-cluster --demo (bounded: about 4 minutes)', function () {
  this.timeout(420_000);
  const dir = mkdtempSync(join(tmpdir(), 'headroom-demo-test-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('scaling the sample Deployment with kubectl makes nodes join, and scaling it to 0 makes them leave', async () => {
    const kubectlPath = resolveKubectl();
    const kubeconfig = join(dir, 'kubeconfig');
    const entry = new URL('../harness/headroom-entry.ts', import.meta.url).pathname;
    const child = spawn(process.execPath, ['--import', 'tsx', entry, 'dev-cluster', '--demo', '--consolidate-after', '5s', '--kubeconfig', kubeconfig],
      { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    const exited = new Promise<number | null>((res) => child.on('exit', (code) => res(code)));
    const kubectl = async (...args: string[]) => (await run(kubectlPath, ['--kubeconfig', kubeconfig, ...args], { maxBuffer: 16 << 20 })).stdout;
    const demoNodes = async () => ((JSON.parse(await kubectl('get', 'nodes', '-o', 'json')) as NodeList).items)
      .filter((n) => n.metadata.annotations?.['cluster.x-k8s.io/machine']);
    try {
      await new Promise<void>((res, rej) => {
        const t = setInterval(() => {
          if (out.includes('Ctrl-C stops it')) { clearInterval(t); res(); }
          if (child.exitCode !== null) { clearInterval(t); rej(new Error(`dev-cluster --demo exited early:\n${out}`)); }
        }, 200);
      });
      const logFile = /log (\S+headroom-controller\.log)/.exec(out)?.[1];
      const why = () => `\n--- dev-cluster output ---\n${out}\n--- kubectl get machines,nodes ---`;
      // The printed commands are the ones this test runs.
      const scaleUp = out.split('\n').map((l) => l.trim()).find((l) => l.startsWith('kubectl -n demo scale deployment/web --replicas=10'));
      expect(scaleUp, out).to.be.a('string');
      expect(out).to.include('kubectl get nodes -w');
      expect(out).to.include(`export PATH=${join(kubectlPath, '..')}:$PATH`);
      expect(await demoNodes()).to.have.length(0);

      const t0 = Date.now();
      await kubectl('-n', 'demo', 'scale', 'deployment/web', '--replicas=10');
      // Cluster API annotates a Node with its Machine once it has seen the nodeRef, which
      // can be a moment after the pods start: wait for both, not just the pods.
      const running = await eventually('10 demo pods Running on nodes Headroom brought up', async () => {
        const pods = (JSON.parse(await kubectl('-n', 'demo', 'get', 'pods', '-o', 'json')) as PodList).items;
        if (pods.length !== 10 || !pods.every((p) => p.status.phase === 'Running' && p.spec.nodeName)) return false;
        const names = new Set((await demoNodes()).map((n) => n.metadata.name));
        return pods.every((p) => names.has(p.spec.nodeName!)) ? pods : false;
      }, { timeoutMs: 180_000, intervalMs: 1000 }).catch(async (err: Error) => {
        throw new Error(`${err.message}${why()}\n${await kubectl('get', 'machines,nodes', '-A').catch(() => '')}`);
      });
      const joined = await demoNodes();
      const upSeconds = (Date.now() - t0) / 1000;
      expect(joined.length, 'nodes joined').to.be.greaterThan(0);
      expect(joined.every((n) => n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'))).to.equal(true);
      // The webhook saw the pods: it stamps first-seen on every pod it admits.
      expect(running.every((p) => p.metadata.annotations?.['headroom.dev/first-seen'])).to.equal(true);
      // No more capacity than 10 x 1 cpu needs: at most 3 small or 2 large nodes' worth.
      expect(joined.length).to.be.at.most(3);

      const t1 = Date.now();
      await kubectl('-n', 'demo', 'scale', 'deployment/web', '--replicas=0');
      await eventually('the demo nodes to leave', async () => (await demoNodes()).length === 0, { timeoutMs: 150_000, intervalMs: 1000 })
        .catch(async (err: Error) => { throw new Error(`${err.message}${why()}\n${await kubectl('get', 'machines,nodes', '-A').catch(() => '')}\n${logFile ?? ''}`); });
      const downSeconds = (Date.now() - t1) / 1000;
      const mds = await kubectl('get', 'machinedeployments', '-n', 'default', '-o', 'jsonpath={range .items[*]}{.metadata.name}={.spec.replicas} {end}');
      expect(mds.trim().split(' ').sort()).to.deep.equal(['demo-large=0', 'demo-small=0']);
      console.log(`      [measure] dev-cluster --demo: ${joined.length} node(s) joined, 10 pods Running ${upSeconds.toFixed(1)} s after the scale-up; nodes gone ${downSeconds.toFixed(1)} s after the scale-down (consolidateAfter 5s)`);

      child.kill('SIGTERM');
      expect(await exited).to.equal(0);
      expect(existsSync(kubeconfig), 'kubeconfig removed').to.equal(false);
    } finally {
      child.kill('SIGKILL');
    }
  });
});
