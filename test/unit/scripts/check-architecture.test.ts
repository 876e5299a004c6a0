import { expect } from 'chai';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkArchitecture, elementaryCycles } from '../../../scripts/check-architecture.js';

const repo = fileURLToPath(new URL('../../../', import.meta.url));
const config = resolve(repo, '.dependency-cruiser.cjs');

/** A throwaway source tree inside the repository (so node_modules resolves), checked with the real rules. */
function fixtureTree(files: Record<string, string>): { dir: string; cleanup(): void } {
  mkdirSync(join(repo, '.tmp'), { recursive: true });
  const dir = mkdtempSync(join(repo, '.tmp', 'arch-'));
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext' } }));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

async function check(files: Record<string, string>) {
  const tree = fixtureTree(files);
  try {
    return await checkArchitecture(['src'], tree.dir, config);
  } finally {
    tree.cleanup();
  }
}

describe('architecture lint (scripts/check-architecture.ts)', function () {
  this.timeout(60_000);

  it('passes on the repository itself', async () => {
    const report = await checkArchitecture(['src', 'workers'], repo, config);
    expect(report.violations).to.deep.equal([]);
    expect(report.folderCycles).to.deep.equal([]);
  });

  it('passes a downhill tree whose pure core uses @kubernetes/client-node for types only', async () => {
    const report = await check({
      'src/scheduling/pod.ts': "import type { V1Pod } from '@kubernetes/client-node';\nexport type P = V1Pod;\n",
      'src/kube/client.ts': "import { KubeConfig } from '@kubernetes/client-node';\nimport type { P } from '../scheduling/pod.js';\nexport const k = (p: P) => [new KubeConfig(), p];\n",
    });
    expect(report.violations).to.deep.equal([]);
    expect(report.folderCycles).to.deep.equal([]);
  });

  it('fails when scheduling imports the kube layer', async () => {
    const report = await check({
      'src/scheduling/bad.ts': "import { client } from '../kube/client.js';\nexport const x = client;\n",
      'src/kube/client.ts': 'export const client = 1;\n',
    });
    expect(report.violations).to.deep.equal(['pure-core-no-io: src/scheduling/bad.ts → src/kube/client.ts']);
  });

  it('fails when a pure folder imports node:fs, server or express, and client-node at runtime', async () => {
    const report = await check({
      'src/packing/reads-file.ts': "import { readFileSync } from 'node:fs';\nexport const r = readFileSync;\n",
      'src/api/serves.ts': "import express from 'express';\nimport { app } from '../server/app.js';\nexport const e = [express, app];\n",
      'src/server/app.ts': 'export const app = 1;\n',
      'src/disruption/emptiness.ts': "import { KubeConfig } from '@kubernetes/client-node';\nexport const c = KubeConfig;\n",
      'src/disruption/disruptor.ts': "import { readFileSync } from 'node:fs';\nexport const r = readFileSync;\n",
    });
    // Module paths outside the fixture are relative to it (../../node_modules/…).
    const seen = report.violations.map((v) => v.replace(/→ (\.\.\/)+node_modules\/([^/]+(\/[^/]+)?)\/.*/, '→ $2'));
    expect(seen).to.have.members([
      'pure-core-no-io-modules: src/packing/reads-file.ts → fs',
      'pure-core-no-io: src/api/serves.ts → express',
      'pure-core-no-io: src/api/serves.ts → src/server/app.ts',
      'pure-core-kube-types-only: src/disruption/emptiness.ts → @kubernetes/client-node',
    ]);
  });

  it('fails on a cycle between folders even when no module cycle exists', async () => {
    const report = await check({
      'src/cluster/snapshot.ts': "import type { Kind } from '../packing/plan.js';\nexport type Snapshot = { kind: Kind };\n",
      'src/packing/plan.ts': "export type Kind = 'a';\n",
      'src/packing/solve.ts': "import type { Snapshot } from '../cluster/snapshot.js';\nexport const solve = (s: Snapshot) => s;\n",
    });
    expect(report.violations).to.deep.equal([]);
    expect(report.folderCycles).to.deep.equal([['cluster', 'packing', 'cluster']]);
    expect(report.cycleEdges.get('packing → cluster')).to.deep.equal(['src/packing/solve.ts']);
  });

  it('lists each elementary cycle once', () => {
    const g = new Map([['a', new Set(['b'])], ['b', new Set(['a', 'c'])], ['c', new Set(['a'])]]);
    expect(elementaryCycles(g)).to.deep.equal([['a', 'b', 'a'], ['a', 'b', 'c', 'a']]);
  });
});
