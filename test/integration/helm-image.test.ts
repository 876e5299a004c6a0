/**
 * The image the chart deploys, built without a Docker engine: the build context that
 * .dockerignore lets through is copied to a temp dir, the build stage's RUN lines are
 * executed there as written in the Dockerfile (npm ci, npm run build, npm prune
 * --omit=dev), the runtime stage's COPY --from=build lines assemble the runtime tree,
 * which is then made read-only and started with the Dockerfile's ENTRYPOINT and a
 * replaced CMD. This catches what a static look at the Dockerfile cannot: a runtime
 * import of a devDependency, a file the program needs that is not in dist/, a build
 * that needs something .dockerignore leaves out.
 *
 * Finally the image's controller runs against the shared test apiserver and scales a
 * MachineDeployment through its solver worker pool (dist/workers under plain node).
 *
 * Slow (npm ci + tsc: about a minute on 2 cores); npm uses its local cache first.
 */
import { execFile } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { type KubernetesObject, KubernetesObjectApi } from '@kubernetes/client-node';
import { KubeClient } from '../../src/kube/kube-client.js';
import { createTestNamespace, deleteTestNamespace } from '../harness/namespace.js';
import { freePort } from '../harness/ports.js';
import { waitFor } from '../harness/probe.js';
import { ManagedProcess, makeTempDir, removeTempDir } from '../harness/process.js';
import { copyOperands, DockerIgnore, parseDockerfile } from '../unit/chart/dockerfile.js';
import { machineDeployment, pendingPod } from './controller-objects.js';
import { sharedControlPlane } from './hooks.js';

const root = fileURLToPath(new URL('../../', import.meta.url));

function sh(cmd: string, cwd: string, env: NodeJS.ProcessEnv, timeoutMs = 300_000): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile('/bin/sh', ['-c', cmd], { cwd, env, timeout: timeoutMs, maxBuffer: 64 << 20 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr });
    });
  });
}

function run(argv: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(argv[0]!, argv.slice(1), { cwd, env, timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr });
    });
  });
}

function setWritable(path: string, writable: boolean): void {
  const st = statSync(path);
  if (st.isDirectory()) {
    if (writable) chmodSync(path, 0o755);
    for (const e of readdirSync(path)) setWritable(join(path, e), writable);
    if (!writable) chmodSync(path, 0o555);
  } else {
    chmodSync(path, writable ? 0o644 | (st.mode & 0o111) : 0o444 | (st.mode & 0o111));
  }
}

describe('container image (Dockerfile emulated without a Docker engine)', function () {
  this.timeout(600_000);
  const dockerfile = parseDockerfile(readFileSync(join(root, 'Dockerfile'), 'utf8'));
  const build = dockerfile.stages[0]!;
  const runtime = dockerfile.stages[dockerfile.stages.length - 1]!;
  const workdir = (stage: typeof build) => stage.instructions.filter((i) => i.keyword === 'WORKDIR').pop()?.args ?? '/';
  let tmp: string;
  let app: string;
  let rt: string;
  let rootfs: string;
  let env: NodeJS.ProcessEnv;

  before(async function () {
    tmp = mkdtempSync(join(tmpdir(), 'headroom-image-'));
    app = join(tmp, 'build');
    rt = join(tmp, 'runtime');
    // Files the runtime stage copies to paths outside its WORKDIR (util-linux chrt).
    rootfs = join(tmp, 'rootfs');
    // The build context, as .dockerignore filters it.
    for (const f of new DockerIgnore(readFileSync(join(root, '.dockerignore'), 'utf8')).contextFiles(root)) {
      mkdirSync(dirname(join(app, f)), { recursive: true });
      cpSync(join(root, f), join(app, f));
    }
    const buildEnv = { ...process.env, npm_config_prefer_offline: 'true', npm_config_update_notifier: 'false' };
    for (const ins of build.instructions.filter((i) => i.keyword === 'RUN')) {
      const r = await sh(ins.args, app, buildEnv);
      expect(r.code, `RUN ${ins.args}\n${r.stderr.slice(-2000)}`).to.equal(0);
    }
    // The runtime stage: only what it copies from the build stage. A source outside the
    // build WORKDIR is a file of the build image (Debian, like this machine: taken from
    // here); a destination outside the runtime WORKDIR lands in the emulated rootfs.
    const from = workdir(build);
    const to = workdir(runtime);
    const inside = (path: string, dir: string) => path === dir || path.startsWith(`${dir}/`);
    for (const ins of runtime.instructions.filter((i) => i.keyword === 'COPY')) {
      expect(ins.flags.from, ins.args).to.equal(build.name);
      const { sources, dest } = copyOperands(ins);
      for (const src of sources) {
        const source = !src.startsWith('/') ? join(app, src) : inside(src, from) ? join(app, src.slice(from.length)) : src;
        const target = !dest.startsWith('/') ? join(rt, dest.replace(/^\.\//, '')) : inside(dest, to) ? join(rt, dest.slice(to.length)) : join(rootfs, dest);
        mkdirSync(dirname(target), { recursive: true });
        cpSync(source, target, { recursive: true });
      }
    }
    setWritable(rt, false); // readOnlyRootFilesystem
    const imageEnv = Object.fromEntries(
      runtime.instructions.filter((i) => i.keyword === 'ENV').flatMap((i) => i.words.map((w) => w.split('=', 2) as [string, string])),
    );
    mkdirSync(join(tmp, 'tmp'));
    // distroless's PATH, over the emulated rootfs: the image finds only the programs it ships.
    const path = ['/usr/local/sbin', '/usr/local/bin', '/usr/sbin', '/usr/bin', '/sbin', '/bin'].map((d) => join(rootfs, d)).join(':');
    env = { PATH: path, HOME: '/nonexistent', TMPDIR: join(tmp, 'tmp'), ...imageEnv };
  });

  after(() => {
    if (!tmp) return;
    try {
      setWritable(rt, true);
    } catch {
      // nothing was built
    }
    rmSync(tmp, { recursive: true, force: true });
  });

  const entrypoint = () => {
    const entry = runtime.instructions.filter((i) => i.keyword === 'ENTRYPOINT').pop()!.words;
    return [process.execPath, ...entry.slice(1)]; // the image's /nodejs/bin/node is this node
  };

  it('holds only the runtime: no sources, tests or devDependencies', () => {
    expect(readdirSync(rt).sort()).to.deep.equal(['bin', 'dist', 'node_modules', 'package.json']);
    expect(readdirSync(join(rootfs, 'usr/bin')), 'outside /app: util-linux chrt only').to.deep.equal(['chrt']);
    // The lockfile marks packages only devDependencies need; none may be left after the prune.
    const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as { packages: Record<string, { dev?: boolean }> };
    const devOnly = Object.entries(lock.packages)
      .filter(([path, p]) => p.dev && path.startsWith('node_modules/'))
      .map(([path]) => path)
      .filter((path) => existsSync(join(rt, path)));
    expect(devOnly).to.deep.equal([]);
    expect(existsSync(join(rt, 'node_modules', 'typescript')), 'the compiler is a devDependency').to.equal(false);
    expect(readdirSync(join(rt, 'dist'))).to.not.include('test');
  });

  it('starts from a read-only tree with the default CMD replaced by --help', async () => {
    const r = await run([...entrypoint(), '--help'], join(rt), env);
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.include('Usage: headroom <command>');
  });

  it('does real work from the read-only tree: `headroom plan` on the example cluster', async () => {
    const r = await run([...entrypoint(), 'plan', '-f', join(root, 'test/fixtures/example-cluster.yaml'), '-o', 'json'], rt, env);
    expect(r.code, r.stderr).to.equal(0);
    expect(JSON.parse(r.stdout)).to.be.an('object');
  });

  it('loads the whole `controller` command (its full import graph) with production dependencies only', async () => {
    const cmd = runtime.instructions.filter((i) => i.keyword === 'CMD').pop()!.words;
    const r = await run([...entrypoint(), ...cmd, '--help'], rt, env);
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.include(`Usage: headroom ${cmd[0]}`);
  });

  it('runs the controller from the image against the real apiserver: the solver worker pool in dist/ scales a MachineDeployment', async function () {
    this.timeout(240_000);
    const cp = await sharedControlPlane();
    const kc = cp.kubeConfig();
    const ns = await createTestNamespace(kc, 'image-controller');
    const api = KubernetesObjectApi.makeApiClient(kc);
    const dir = makeTempDir('headroom-image-controller-');
    let proc: ManagedProcess | undefined;
    try {
      await api.create(machineDeployment({ namespace: ns, name: 'md', replicas: 0, min: 0, max: 3 }) as KubernetesObject);
      // No scheduler handles this name: the pod stays unbound (demand) and cannot land on
      // another test file's nodes.
      const pod = pendingPod(ns, 'p', '500m');
      await api.create({ ...pod, spec: { ...pod.spec, schedulerName: `none-${ns}` } } as KubernetesObject);
      const port = await freePort();
      proc = ManagedProcess.start('headroom-image-controller', entrypoint()[0]!, [
        ...entrypoint().slice(1), 'controller',
        `--kubeconfig=${cp.kubeconfigPath}`,
        `--metrics-address=127.0.0.1:${port}`,
        '--solver-threads=1',
        `--pod-namespace=${ns}`,
        `--node-label-selector=headroom.dev/image-test=${ns}`,
        `--node-group-auto-discovery=clusterapi:namespace=${ns}`,
      ], { logFile: join(dir, 'controller.log'), env, cwd: rt });
      const md = `/apis/cluster.x-k8s.io/v1beta2/namespaces/${ns}/machinedeployments/md`;
      const client = new KubeClient(kc);
      await waitFor('the MachineDeployment to be scaled up', async () => ((await client.get<{ spec?: { replicas?: number } }>(md)).spec?.replicas ?? 0) >= 1, {
        timeoutMs: 120_000, intervalMs: 250, watch: [proc],
      });
      expect(proc.running).to.equal(true);
      // Its solver thread put itself under SCHED_IDLE with the chrt the image ships
      // (field 41 of /proc/<pid>/task/<tid>/stat; 5 is SCHED_IDLE).
      const policies = readdirSync(`/proc/${proc.pid}/task`).map((tid) => {
        const stat = readFileSync(`/proc/${proc!.pid}/task/${tid}/stat`, 'utf8');
        return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[38]);
      });
      expect(policies.filter((p) => p === 5), 'one SCHED_IDLE solver thread').to.have.length(1);
      expect(readFileSync(join(dir, 'controller.log'), 'utf8')).to.not.include('SCHED_IDLE unavailable');
    } finally {
      await proc?.stop(5_000);
      removeTempDir(dir);
      await deleteTestNamespace(kc, ns);
    }
  });
});
