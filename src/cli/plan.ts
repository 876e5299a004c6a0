import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { NodePoolError } from '../api/nodepool.js';
import { QuantityError } from '../api/quantity.js';
import { ObjectValidationError } from '../api/validation-error.js';
import { buildSnapshot } from '../cluster/build-snapshot.js';
import { LoadError, type LoadInput, loadObjects } from '../cluster/load-objects.js';
import type { Plan } from '../packing/plan.js';
import { solve } from '../packing/solve.js';
import { type Command, CliError, UsageError } from './command.js';

const MANIFEST = /\.(ya?ml|json)$/i;

function readStdin(): string {
  try {
    return readFileSync(0, 'utf8');
  } catch (err) {
    throw new CliError(`cannot read stdin: ${(err as Error).message}`);
  }
}

/** Files, directories (their *.yaml, *.yml, *.json, sorted, not recursive, as kubectl -f) and `-` for stdin. */
export function readInputs(paths: readonly string[]): LoadInput[] {
  const out: LoadInput[] = [];
  for (const path of paths) {
    if (path === '-') { out.push({ source: '-', text: readStdin() }); continue; }
    try {
      if (statSync(path).isDirectory()) {
        for (const f of readdirSync(path).filter((n) => MANIFEST.test(n)).sort()) {
          const file = join(path, f);
          if (statSync(file).isFile()) out.push({ source: file, text: readFileSync(file, 'utf8') });
        }
      } else {
        out.push({ source: path, text: readFileSync(path, 'utf8') });
      }
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      throw new CliError(`cannot read ${path}: ${e.code === 'ENOENT' ? 'no such file or directory' : e.message}`);
    }
  }
  return out;
}

/** Load, model and solve; every input problem becomes one CliError line naming the object and field. */
export function planFromInputs(inputs: readonly LoadInput[], onWarning?: (msg: string) => void): Plan {
  try {
    const objects = loadObjects(inputs);
    const snapshot = buildSnapshot(objects, {
      strict: true,
      onIssue: (i) => { if (i.severity === 'warning') onWarning?.(i.message); },
    });
    return solve(snapshot);
  } catch (err) {
    if (err instanceof LoadError || err instanceof ObjectValidationError || err instanceof NodePoolError || err instanceof QuantityError) {
      throw new CliError(oneLine(err.message));
    }
    throw err;
  }
}

function oneLine(s: string): string {
  return s.split('\n')[0]!.trim();
}

/** The JSON contract of `headroom plan -o json`: exactly these keys, in this order. */
export function planJson(plan: Plan): string {
  const out = {
    scaleUps: plan.scaleUps.map((s) => ({ kind: s.kind, namespace: s.namespace, name: s.name, from: s.from, to: s.to })),
    placements: plan.placements.map((p) => ('node' in p ? { pod: p.pod, node: p.node } : { pod: p.pod, group: p.group, newNode: p.newNode })),
    unschedulable: plan.unschedulable.map((u) => ({ pod: u.pod, reason: u.reason })),
    cost: { addedPerHour: plan.cost.addedPerHour },
  };
  return JSON.stringify(out, null, 2);
}

function table(rows: string[][]): string[] {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) => `  ${r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  ')}`.trimEnd());
}

/** The readable form: scale-ups, placements, unschedulable pods with reasons, cost. */
export function planText(plan: Plan): string {
  const lines: string[] = [];
  if (plan.scaleUps.length === 0) {
    lines.push('Scale up: nothing');
  } else {
    lines.push('Scale up:');
    lines.push(...table([['KIND', 'NAMESPACE', 'NAME', 'FROM', 'TO'],
      ...plan.scaleUps.map((s) => [s.kind, s.namespace, s.name, String(s.from), String(s.to)])]));
  }
  lines.push('');
  lines.push(`Placements: ${plan.placements.length} pod(s)`);
  if (plan.placements.length) {
    lines.push(...table([['POD', 'NODE'],
      ...plan.placements.map((p) => [p.pod, 'node' in p ? p.node : `new node ${p.newNode} of ${p.group}`])]));
  }
  lines.push('');
  lines.push(`Unschedulable: ${plan.unschedulable.length} pod(s)`);
  if (plan.unschedulable.length) lines.push(...table([['POD', 'REASON'], ...plan.unschedulable.map((u) => [u.pod, u.reason])]));
  lines.push('');
  lines.push(`Added cost: ${plan.cost.addedPerHour.toFixed(4)} per hour`);
  return lines.join('\n');
}

export const planCommand: Command = {
  name: 'plan',
  summary: 'print the scale-up plan for Kubernetes objects in files, without touching any cluster',
  usage: [
    'Usage: headroom plan -f FILE|DIR|- [-f ...] [-o json|text]',
    '',
    'Reads Pods, Nodes, DaemonSets, PVs, PVCs, StorageClasses, Namespaces, Cluster API',
    'MachineDeployments / MachineSets / MachinePools / Machines and headroom.dev NodePools',
    '(multi-document YAML, JSON, a List, or `kubectl get -o yaml` output) and prints',
    'which node groups Headroom would scale, where each pending pod would run, which',
    'pods cannot run and why, and the added cost per hour.',
    '',
    'Options:',
    '  -f, --filename FILE|DIR|-  input (repeatable); a directory reads its *.yaml, *.yml, *.json; - is stdin',
    '  -o, --output json|text     output format (default text)',
  ].join('\n'),
  options: {
    filename: { type: 'string', short: 'f', multiple: true },
    output: { type: 'string', short: 'o', default: 'text' },
  },
  async run(values) {
    const files = (values.filename as string[] | undefined) ?? [];
    if (files.length === 0) throw new UsageError('plan: -f FILE|DIR|- is required');
    const output = values.output as string;
    if (output !== 'json' && output !== 'text') throw new UsageError(`plan: unknown output format "${output}" (json or text)`);
    const plan = planFromInputs(readInputs(files), (msg) => console.error(`headroom: warning: ${oneLine(msg)}`));
    process.stdout.write(`${output === 'json' ? planJson(plan) : planText(plan)}\n`);
    return 0;
  },
};
