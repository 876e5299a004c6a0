/**
 * `npm run lint` runs this after eslint: the import rules of docs/adr/0002-layers.md.
 *
 *  1. dependency-cruiser's `forbidden` rules (.dependency-cruiser.cjs): the pure core
 *     (scheduling, api, packing, prediction, disruption decisions) imports no kube
 *     client, server, express, file or network module, and @kubernetes/client-node
 *     only for types.
 *  2. No cycle between top-level folders of src/ (each folder is one node, type-only
 *     imports included). dependency-cruiser's own `circular` rule works per module
 *     and per nested folder, so the folder graph is built here from its JSON output.
 *
 * `--stats` prints the figures the architecture ADR quotes (folder cycles, largest
 * files, files that import from more than one other folder).
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cruise, type ICruiseResult, type IConfiguration } from 'dependency-cruiser';

export interface ArchitectureReport {
  /** `rule: from → to` for every forbidden import. */
  violations: string[];
  /** Each elementary cycle of the folder graph, as folder names (first repeated at the end). */
  folderCycles: string[][];
  /** For each folder edge that is part of a cycle, the files that make it. */
  cycleEdges: Map<string, string[]>;
  /** source file → other folders it imports. */
  crossFolderImports: Map<string, Set<string>>;
  /** Every cruised source file under src/ and workers/. */
  files: string[];
}

/** `src/<folder>/…` → folder; `workers/…` → `workers`; anything else (node_modules, tests) → null. */
export function folderOf(path: string): string | null {
  const m = /^src\/([^/]+)\//.exec(path);
  if (m) return m[1]!;
  return path.startsWith('workers/') ? 'workers' : null;
}

/** Elementary cycles of a small directed graph (a dozen folders), each reported once from its smallest node. */
export function elementaryCycles(graph: Map<string, Set<string>>): string[][] {
  const nodes = [...graph.keys()].sort();
  const cycles: string[][] = [];
  for (const start of nodes) {
    const path = [start];
    const onPath = new Set([start]);
    const walk = (node: string): void => {
      for (const next of [...(graph.get(node) ?? [])].sort()) {
        if (next === start) cycles.push([...path, start]);
        else if (next > start && !onPath.has(next)) {
          path.push(next); onPath.add(next);
          walk(next);
          path.pop(); onPath.delete(next);
        }
      }
    };
    walk(start);
  }
  return cycles;
}

export function analyse(result: ICruiseResult): ArchitectureReport {
  const violations = (result.summary.violations ?? []).map((v) => `${v.rule.name}: ${v.from} → ${v.to}`);
  const graph = new Map<string, Set<string>>();
  const edgeFiles = new Map<string, string[]>();
  const crossFolderImports = new Map<string, Set<string>>();
  const files: string[] = [];
  for (const mod of result.modules) {
    const from = folderOf(mod.source);
    if (from === null) continue;
    files.push(mod.source);
    if (!graph.has(from)) graph.set(from, new Set());
    for (const dep of mod.dependencies) {
      const to = folderOf(dep.resolved);
      if (to === null || to === from) continue;
      graph.get(from)!.add(to);
      const key = `${from} → ${to}`;
      edgeFiles.set(key, [...(edgeFiles.get(key) ?? []), mod.source]);
      if (!crossFolderImports.has(mod.source)) crossFolderImports.set(mod.source, new Set());
      crossFolderImports.get(mod.source)!.add(to);
    }
  }
  const folderCycles = elementaryCycles(graph);
  const cycleEdges = new Map<string, string[]>();
  for (const cycle of folderCycles) {
    for (let i = 0; i + 1 < cycle.length; i++) {
      const key = `${cycle[i]} → ${cycle[i + 1]}`;
      cycleEdges.set(key, [...new Set(edgeFiles.get(key) ?? [])]);
    }
  }
  return { violations, folderCycles, cycleEdges, crossFolderImports, files };
}

/** Cruises `roots` (relative to `baseDir`) with the repository's rules and analyses the result. */
export async function checkArchitecture(roots: string[], baseDir: string, configFile: string): Promise<ArchitectureReport> {
  const require = createRequire(import.meta.url);
  const config = require(configFile) as IConfiguration;
  const cruised = await cruise(roots, { ...config.options, baseDir, ruleSet: { forbidden: config.forbidden ?? [] }, validate: true });
  return analyse(cruised.output as ICruiseResult);
}

function lineCount(file: string): number {
  return readFileSync(file, 'utf8').split('\n').length - 1;
}

/** Layer order of docs/adr/0002-layers.md, lowest first; a folder may import only folders of lower layers. */
export const LAYERS: readonly (readonly string[])[] = [
  ['scheduling'],
  ['api'],
  ['cluster'],
  ['packing', 'prediction'],
  ['kube'],
  ['capi'],
  ['provisioning'],
  ['disruption'],
  ['server'],
  ['extender', 'webhook'],
  ['controller', 'sim'],
  ['cli', 'workers'],
];
const layerOf = (folder: string) => LAYERS.findIndex((l) => l.includes(folder));

async function main(): Promise<void> {
  const repo = fileURLToPath(new URL('..', import.meta.url));
  const report = await checkArchitecture(['src', 'workers'], repo, resolve(repo, '.dependency-cruiser.cjs'));
  if (process.argv.includes('--stats')) {
    const wide = [...report.crossFolderImports].filter(([, to]) => to.size > 1);
    console.log(`folder cycles: ${report.folderCycles.length}`);
    for (const c of report.folderCycles) console.log(`  ${c.join(' → ')}`);
    console.log(`files importing from more than one other folder: ${wide.length}`);
    const upward = [...report.crossFolderImports].filter(([f, to]) => [...to].some((t) => layerOf(t) >= layerOf(folderOf(f)!)));
    console.log(`files importing upward or sideways against the layer order: ${upward.length}: ${upward.map(([f]) => f).join(', ')}`);
    const largest = report.files.map((f) => [f, lineCount(resolve(repo, f))] as const).sort((a, b) => b[1] - a[1]).slice(0, 8);
    console.log(`largest files: ${largest.map(([f, n]) => `${f} ${n}`).join(', ')}`);
  }
  for (const v of report.violations) console.error(`architecture: ${v}`);
  for (const c of report.folderCycles.slice(0, 20)) console.error(`architecture: folder cycle ${c.join(' → ')}`);
  if (report.folderCycles.length > 20) console.error(`architecture: … ${report.folderCycles.length - 20} more folder cycles, made of these imports:`);
  for (const [edge, files] of report.cycleEdges) console.error(`  ${edge}: ${files.join(', ')}`);
  if (report.violations.length > 0 || report.folderCycles.length > 0) process.exit(1);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await main();
