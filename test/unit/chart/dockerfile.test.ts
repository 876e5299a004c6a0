import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { copyOperands, DockerIgnore, parseDockerfile, type Stage } from './dockerfile.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const dockerfile = parseDockerfile(readFileSync(`${root}Dockerfile`, 'utf8'));
const ignore = new DockerIgnore(readFileSync(`${root}.dockerignore`, 'utf8'));

const SECRET_NAME = /(token|secret|passw|credential|private|npmrc|api_?key|auth)/i;
const SECRET_PATH = /(^|\/)(\.npmrc|\.env(\.[^/]*)?|kubeconfig|id_rsa[^/]*|credentials)$|\.(pem|key|p12)$|(^|\/)\.(git|ssh|aws|docker)(\/|$)/i;

function runtime(): Stage {
  const last = dockerfile.stages[dockerfile.stages.length - 1];
  if (!last) throw new Error('Dockerfile has no FROM');
  return last;
}

function build(): Stage {
  const stage = dockerfile.stages[0];
  if (!stage || dockerfile.stages.length < 2) throw new Error('expected a multi-stage build');
  return stage;
}

describe('Dockerfile', () => {
  describe('the checker itself', () => {
    it('parses continuations, exec form, flags and stages', () => {
      const df = parseDockerfile(
        ['ARG IMG=node:20', 'FROM ${IMG} AS b', 'RUN a \\', '  && b', 'FROM scratch', 'COPY --from=b --chown=0:0 /x /y', 'USER 1000', 'CMD ["x", "y"]'].join('\n'),
      );
      expect(df.stages.map((s) => [s.base, s.name])).to.deep.equal([['node:20', 'b'], ['scratch', undefined]]);
      expect(df.stages[0]!.instructions[0]!.args).to.equal('a    && b');
      const copy = df.stages[1]!.instructions[0]!;
      expect(copy.flags).to.deep.equal({ from: 'b', chown: '0:0' });
      expect(copyOperands(copy)).to.deep.equal({ sources: ['/x'], dest: '/y' });
      expect(df.stages[1]!.instructions[2]).to.include({ execForm: true });
      expect(df.stages[1]!.instructions[2]!.words).to.deep.equal(['x', 'y']);
    });

    it('applies .dockerignore rules like moby/patternmatcher', () => {
      const di = new DockerIgnore(['node_modules', '**/*.pem', '*.md', '!README.md', 'test/', '!test/keep.txt'].join('\n'));
      expect(di.excludes('node_modules/chai/index.js')).to.equal(true);
      expect(di.excludes('src/deep/ca.pem')).to.equal(true);
      expect(di.excludes('ca.pem')).to.equal(true);
      expect(di.excludes('NOTES.md')).to.equal(true);
      expect(di.excludes('docs/NOTES.md')).to.equal(false); // `*` does not cross '/'
      expect(di.excludes('README.md')).to.equal(false);
      expect(di.excludes('test/unit/a.ts')).to.equal(true);
      expect(di.excludes('test/keep.txt')).to.equal(false);
      expect(di.excludes('src/main.ts')).to.equal(false);
    });
  });

  describe('.dockerignore', () => {
    const context = ignore.contextFiles(root);

    it('keeps node_modules, .git, tests and build output out of the build context', () => {
      for (const dir of ['node_modules/', '.git/', 'test/', 'dist/', 'coverage/', 'charts/', '.ci/']) {
        expect(context.filter((f) => f.startsWith(dir)), dir).to.deep.equal([]);
      }
      for (const path of ['node_modules/chai/package.json', '.git/config', '.git/HEAD', 'test/unit/x.test.ts', 'dist/src/cli/main.js']) {
        expect(ignore.excludes(path), path).to.equal(true);
      }
    });

    it('keeps key material and local credentials out, even inside allowed directories', () => {
      for (const path of ['certs/ca.key', 'certs/tls.crt', 'src/server/dev.pem', '.env', 'src/.env.local', 'kubeconfig', '.npmrc', 'src/x/kubeconfig']) {
        expect(ignore.excludes(path), path).to.equal(true);
      }
      expect(context.filter((f) => SECRET_PATH.test(f))).to.deep.equal([]);
    });

    it('sends everything the build needs', () => {
      for (const path of ['package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json', 'bin/headroom.js', 'src/cli/main.ts']) {
        expect(context, path).to.include(path);
      }
      // Every directory tsc compiles for the image must reach the build stage.
      const buildConfig = JSON.parse(readFileSync(`${root}tsconfig.build.json`, 'utf8')) as { include: string[] };
      for (const dir of buildConfig.include) expect(ignore.excludes(`${dir}/module.ts`), dir).to.equal(false);
      for (const ins of build().instructions.filter((i) => i.keyword === 'COPY' && !i.flags.from)) {
        for (const src of copyOperands(ins).sources) {
          const prefix = src === '.' || src === './' ? '' : src.replace(/^\.\//, '').replace(/\/$/, '');
          expect(context.some((f) => prefix === '' || f === prefix || f.startsWith(`${prefix}/`)), `COPY ${src} has nothing in the context`).to.equal(true);
        }
      }
    });
  });

  describe('build stage', () => {
    it('is Node 24 and runs npm ci, npm run build, npm prune --omit=dev in that order', () => {
      expect(build().base).to.match(/^node:24([.-]|$)/);
      const runs = build().instructions.filter((i) => i.keyword === 'RUN').map((i) => i.args).join(' && ');
      const at = (re: RegExp) => runs.search(re);
      expect(at(/\bnpm ci\b/)).to.be.greaterThan(-1);
      expect(at(/\bnpm run build\b/)).to.be.greaterThan(at(/\bnpm ci\b/));
      expect(at(/\bnpm prune --omit=dev\b/)).to.be.greaterThan(at(/\bnpm run build\b/));
    });
  });

  describe('runtime stage', () => {
    it('is a slim or distroless Node 24 image', () => {
      expect(runtime().base).to.match(/^(gcr\.io\/distroless\/nodejs24-debian1\d(:[a-z0-9-]+)?|node:24[.0-9]*-(bookworm|bullseye|trixie)-slim)(@sha256:[a-f0-9]{64})?$/);
    });

    it('runs as a numeric non-root user (65532), set after everything else', () => {
      const users = runtime().instructions.filter((i) => i.keyword === 'USER');
      expect(users, 'USER in the final stage').to.have.length.greaterThan(0);
      const user = users[users.length - 1]!.args;
      expect(user).to.match(/^\d+(:\d+)?$/, 'numeric, so runAsNonRoot can be verified');
      const [uid, gid] = user.split(':').map(Number);
      expect(uid).to.equal(65532);
      if (gid !== undefined) expect(gid).to.not.equal(0);
      const lastIdx = runtime().instructions.lastIndexOf(users[users.length - 1]!);
      expect(runtime().instructions.slice(lastIdx).filter((i) => ['COPY', 'ADD', 'RUN'].includes(i.keyword))).to.deep.equal([]);
    });

    it('starts `node bin/headroom.js controller` in exec form', () => {
      const entry = runtime().instructions.filter((i) => i.keyword === 'ENTRYPOINT').pop();
      const cmd = runtime().instructions.filter((i) => i.keyword === 'CMD').pop();
      expect(entry?.execForm, 'exec-form ENTRYPOINT (no shell, signals reach node)').to.equal(true);
      expect(entry!.words[0]!.split('/').pop()).to.equal('node');
      expect(entry!.words.slice(1)).to.deep.equal(['bin/headroom.js']);
      expect(cmd?.execForm).to.equal(true);
      expect(cmd!.words).to.deep.equal(['controller']);
      const workdir = runtime().instructions.filter((i) => i.keyword === 'WORKDIR').pop();
      expect(workdir?.args, 'bin/headroom.js is relative to WORKDIR').to.equal('/app');
    });

    it('copies only build output from the build stage, root-owned, and nothing from the context', () => {
      const copies = runtime().instructions.filter((i) => i.keyword === 'COPY' || i.keyword === 'ADD');
      expect(copies.filter((i) => i.keyword === 'ADD')).to.deep.equal([]);
      for (const c of copies) {
        expect(c.flags.from, `${c.args} must come from the build stage`).to.equal(build().name);
        expect(c.flags.chown ?? '0:0', 'the runtime user must not own (and so cannot rewrite) the code').to.match(/^0(:0)?$/);
        for (const src of copyOperands(c).sources) expect(src, src).to.not.match(SECRET_PATH);
      }
      const copied = copies.flatMap((c) => copyOperands(c).sources.map((s) => s.replace(/^\/app\//, '').replace(/\/$/, '')));
      // bin/headroom.js loads dist/src/cli/main.js; package.json carries "type": "module".
      expect(copied).to.include.members(['package.json', 'node_modules', 'dist', 'bin']);
    });

    it('needs no writable root filesystem and no shell', () => {
      expect(runtime().instructions.filter((i) => i.keyword === 'RUN'), 'distroless has no shell').to.deep.equal([]);
      const volumes = runtime().instructions.filter((i) => i.keyword === 'VOLUME').flatMap((i) => i.words);
      expect(volumes.filter((v) => v !== '/tmp')).to.deep.equal([]);
    });
  });

  it('bakes no secrets into any stage', () => {
    const all = dockerfile.stages.flatMap((s) => s.instructions);
    const names = [
      ...Object.keys(dockerfile.globalArgs),
      ...all.filter((i) => i.keyword === 'ARG').map((i) => i.args.split('=')[0]!),
      ...all.filter((i) => i.keyword === 'ENV').flatMap((i) => i.words.map((w) => w.split('=')[0]!)),
    ];
    expect(names.filter((n) => SECRET_NAME.test(n))).to.deep.equal([]);
    for (const c of all.filter((i) => i.keyword === 'COPY' || i.keyword === 'ADD')) {
      for (const src of copyOperands(c).sources) expect(src, `${c.keyword} ${c.args}`).to.not.match(SECRET_PATH);
    }
    expect(all.filter((i) => i.keyword === 'ADD' && /^https?:/.test(i.words[0] ?? ''))).to.deep.equal([]);
  });
});
