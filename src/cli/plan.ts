import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { MAX_SIZE_ANNOTATION } from '../api/capacity-annotations.js';
import { parseNodeGroupObject } from '../api/capi.js';
import { NodePoolError, parseNodePool } from '../api/nodepool.js';
import { invalidBudgetSchedules } from '../disruption/budget-schedule.js';
import { ObjectValidationError } from '../api/validation-error.js';
import { buildSnapshot } from '../cluster/build-snapshot.js';
import { LoadError, type LoadInput, loadObjects } from '../cluster/load-objects.js';
import type { LeftAlonePod } from '../cluster/left-alone.js';
import { resolveMachineSetGroup } from '../cluster/node-machine-map.js';
import type { ClusterObjects } from '../cluster/objects.js';
import type { Plan } from '../packing/plan.js';
import { solve } from '../packing/solve.js';
import { capacityBufferPods, resolveCapacityBuffers, type BufferResolution } from '../provisioning/capacity-buffers.js';
import { applyDecisions, decideProvisioningRequests, provisioningRequestPods, type RequestDecision } from '../provisioning/provisioning-requests.js';
import { withStandalonePools } from '../provisioning/standalone.js';
import { poolSettings, withClusterSignals } from '../controller/prediction-loop.js';
import { predictionInput } from '../prediction/cluster-input.js';
import { evaluatePrediction } from '../prediction/predictor.js';
import { emptyPredictionState } from '../prediction/state.js';
import { QuantityError } from '../scheduling/quantity.js';
import { holdCapacity, pausedGroups } from '../provisioning/provision-failures.js';
import { type Command, CliError, UsageError } from './command.js';
import { readLiveObjects } from './plan-live.js';
import { explainPod, hpasWithoutPredictedPods } from './plan-why.js';
import { parsePriorityCutoff } from './priority-cutoff-flag.js';
import { stringify as stringifyYaml } from 'yaml';

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

/** What `headroom plan` reports: the plan, and how the capacity APIs in the input were served. */
export interface PlanResult {
  plan: Plan;
  capacityBuffers: BufferResolution[];
  provisioningRequests: RequestDecision[];
  /** Keys of the forecast's predicted pods in the plan, listed apart from real pods. */
  predicted: ReadonlySet<string>;
  /** Groups the controller would not scale up (paused), with why. */
  held: Array<{ group: string; reason: string }>;
  /** Pending pods Headroom provisions nothing for on purpose (expendable, nominated), with why. */
  leftAlone: LeftAlonePod[];
}

/** Model settings the controller takes as flags, so that a plan matches what it would do. */
export interface PlanModel {
  expendablePodsPriorityCutoff?: number;
}

/**
 * Load, model and solve as the controller does: ProvisioningRequests decided first
 * (atomic ones that fit are booked), then one solve for the pending pods plus the
 * CapacityBuffer chunks and the atomic bookings. Every input problem becomes one
 * CliError line naming the object and field; an invalid buffer or request is reported
 * in the result (as the controller reports it in its status), not fatal.
 */
export async function planFromInputs(inputs: readonly LoadInput[], onWarning?: (msg: string) => void, now = Date.now(), model: PlanModel = {}): Promise<PlanResult> {
  let loaded: ClusterObjects;
  try {
    loaded = loadObjects(inputs);
  } catch (err) {
    if (err instanceof LoadError) throw new CliError(oneLine(err.message));
    throw err;
  }
  return planFromObjects(loaded, onWarning, now, model);
}

/** The same plan from objects already read (a live cluster's, for `--kubeconfig`). */
export async function planFromObjects(loaded: ClusterObjects, onWarning?: (msg: string) => void, now = Date.now(), model: PlanModel = {}): Promise<PlanResult> {
  try {
    const provisioningRequests = await decideProvisioningRequests(loaded, now, solve);
    const objects = applyDecisions(loaded, provisioningRequests);
    const capacityBuffers = resolveCapacityBuffers(objects);
    for (const b of capacityBuffers) if (b.problem) onWarning?.(`CapacityBuffer ${b.namespace}/${b.name}: ${b.problem.message}`);
    // One prediction pass without history: what the input announces (CronJob runs within
    // the boot horizon, HPAs above current, scale-ups and rollout surge) in NodePools with
    // spec.prediction.enabled.
    const groups = buildSnapshot(objects, { strict: true }).groups;
    const input = withClusterSignals(predictionInput(objects, groups, poolSettings(objects.nodePools), now), objects, new Map(), new Map());
    const prediction = evaluatePrediction(emptyPredictionState(), input);
    const forecast = prediction.pods;
    for (const w of hpasWithoutPredictedPods(objects, prediction.decisions)) onWarning?.(w);
    const extraPendingPods = [...capacityBufferPods(objects), ...provisioningRequestPods(objects), ...forecast];
    const built = buildSnapshot(objects, {
      strict: true,
      ...model,
      onIssue: (i) => { if (i.severity === 'warning') onWarning?.(i.message); },
      ...(extraPendingPods.length ? { extraPendingPods } : {}),
    });
    if (built.groups.length === 0) for (const w of unmanagedGroups(objects)) onWarning?.(w);
    for (const o of objects.nodePools) {
      const bad = invalidBudgetSchedules(parseNodePool(o).disruption.budgets)[0];
      if (bad) throw new CliError(`NodePool ${o.metadata?.name}: ${bad.replace(/; the budget is treated as always in force$/, '')}`);
    }
    // As the controller: paused groups cannot grow, long-NotReady nodes take no pods.
    const held = pausedGroups(objects);
    const snapshot = holdCapacity(withStandalonePools(built, objects).snapshot, held, objects, now);
    return {
      plan: solve(snapshot), capacityBuffers, provisioningRequests,
      predicted: new Set(forecast.map((p) => p.key)),
      held: [...held].map(([group, reason]) => ({ group, reason })),
      leftAlone: built.leftAlone ?? [],
    };
  } catch (err) {
    if (err instanceof LoadError || err instanceof ObjectValidationError || err instanceof NodePoolError || err instanceof QuantityError) {
      throw new CliError(oneLine(err.message));
    }
    throw err;
  }
}

/**
 * Why no group is managed, when there are group objects: each one's missing size
 * annotation (a plan that says only "no node groups" leaves a new user guessing).
 */
function unmanagedGroups(objects: ClusterObjects, shown = 5): string[] {
  const out: string[] = [];
  for (const o of objects.nodeGroups) {
    let view;
    try {
      view = parseNodeGroupObject(o);
    } catch {
      continue; // the build reported it
    }
    if (view.kind === 'MachineSet' && resolveMachineSetGroup(view) !== view.id) continue; // its MachineDeployment's
    const max = view.annotations[MAX_SIZE_ANNOTATION];
    const why = max === undefined ? `no ${MAX_SIZE_ANNOTATION} annotation (the min-size one defaults to 0)` : max.trim() === '0' ? `${MAX_SIZE_ANNOTATION} is 0` : undefined;
    if (why) out.push(`${view.kind} ${view.namespace}/${view.name}: not managed: ${why}`);
  }
  return out.length > shown ? [...out.slice(0, shown), `... and ${out.length - shown} more groups not managed`] : out;
}

function oneLine(s: string): string {
  return s.split('\n')[0]!.trim();
}

/** The JSON contract of `headroom plan -o json`: exactly these keys, in this order (the capacity APIs' only when the input has them). */
export function planJson(result: PlanResult): string {
  const { plan, predicted } = result;
  const placement = (p: Placement) => ('node' in p ? { pod: p.pod, node: p.node } : { pod: p.pod, group: p.group, newNode: p.newNode });
  const out = {
    scaleUps: plan.scaleUps.map((s) => ({ kind: s.kind, namespace: s.namespace, name: s.name, from: s.from, to: s.to })),
    placements: plan.placements.filter((p) => !predicted.has(p.pod)).map(placement),
    unschedulable: plan.unschedulable.filter((u) => !predicted.has(u.pod)).map((u) => ({ pod: u.pod, reason: u.reason })),
    cost: { addedPerHour: plan.cost.addedPerHour },
    ...(result.capacityBuffers.length ? {
      capacityBuffers: result.capacityBuffers.map((b) => ({
        namespace: b.namespace, name: b.name, chunks: b.replicas,
        ...(b.quota ? { limitedByQuotas: b.quota.quotas } : {}), ...(b.problem ? { problem: b.problem.message } : {}),
      })),
    } : {}),
    ...(result.provisioningRequests.length ? {
      provisioningRequests: result.provisioningRequests.map((d) => ({
        namespace: d.namespace, name: d.name, class: d.className,
        conditions: d.set.map((c) => ({ type: c.type, status: c.status, reason: c.reason, message: c.message })),
      })),
    } : {}),
    // Forecast pods apart from real ones (the scale-ups and the cost cover both).
    ...(predicted.size ? {
      predicted: {
        placements: plan.placements.filter((p) => predicted.has(p.pod)).map(placement),
        unschedulable: plan.unschedulable.filter((u) => predicted.has(u.pod)).map((u) => ({ pod: u.pod, reason: u.reason })),
      },
    } : {}),
    ...(result.held.length ? { notScaled: result.held } : {}),
    ...(result.leftAlone.length ? { leftAlone: result.leftAlone.map((p) => ({ pod: p.key, reason: p.reason })) } : {}),
  };
  return JSON.stringify(out, null, 2);
}

type Placement = Plan['placements'][number];

function table(rows: string[][]): string[] {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) => `  ${r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  ')}`.trimEnd());
}

/** The readable form: scale-ups, placements, unschedulable pods with reasons, cost, capacity APIs. */
export function planText(result: PlanResult): string {
  const { plan, predicted } = result;
  const where = (p: Placement) => ('node' in p ? p.node : `new node ${p.newNode} of ${p.group}`);
  const placements = plan.placements.filter((p) => !predicted.has(p.pod));
  const unschedulable = plan.unschedulable.filter((u) => !predicted.has(u.pod));
  const lines: string[] = [];
  if (plan.scaleUps.length === 0) {
    lines.push('Scale up: nothing');
  } else {
    lines.push('Scale up:');
    lines.push(...table([['KIND', 'NAMESPACE', 'NAME', 'FROM', 'TO'],
      ...plan.scaleUps.map((s) => [s.kind, s.namespace, s.name, String(s.from), String(s.to)])]));
  }
  lines.push('');
  lines.push(`Placements: ${placements.length} pod(s)`);
  if (placements.length) lines.push(...table([['POD', 'NODE'], ...placements.map((p) => [p.pod, where(p)])]));
  lines.push('');
  lines.push(`Unschedulable: ${unschedulable.length} pod(s)`);
  if (unschedulable.length) lines.push(...table([['POD', 'REASON'], ...unschedulable.map((u) => [u.pod, u.reason])]));
  lines.push('');
  if (predicted.size) {
    lines.push(`Predicted pods (forecast, lowest priority): ${predicted.size}`);
    lines.push(...table([['POD', 'NODE'],
      ...plan.placements.filter((p) => predicted.has(p.pod)).map((p) => [p.pod, where(p)]),
      ...plan.unschedulable.filter((u) => predicted.has(u.pod)).map((u) => [u.pod, `unschedulable: ${u.reason}`])]));
    lines.push('');
  }
  lines.push(`Added cost: ${plan.cost.addedPerHour.toFixed(4)} per hour`);
  if (result.capacityBuffers.length) {
    lines.push('', `Capacity buffers: ${result.capacityBuffers.length}`);
    lines.push(...table([['BUFFER', 'CHUNKS', 'NOTE'], ...result.capacityBuffers.map((b) => [
      `${b.namespace}/${b.name}`, String(b.replicas),
      b.problem?.message ?? (b.quota ? `limited from ${b.quota.from} by quota ${b.quota.quotas.join(', ')}` : ''),
    ])]));
  }
  if (result.provisioningRequests.length) {
    lines.push('', `Provisioning requests: ${result.provisioningRequests.length}`);
    lines.push(...table([['REQUEST', 'CONDITION', 'REASON', 'MESSAGE'], ...result.provisioningRequests.flatMap((d) => d.set.map((c) => [
      `${d.namespace}/${d.name}`, `${c.type}=${c.status}`, c.reason, c.message,
    ]))]));
  }
  if (result.held.length) {
    lines.push('', `Not scaled: ${result.held.length} group(s)`);
    lines.push(...table([['GROUP', 'REASON'], ...result.held.map((h) => [h.group, h.reason])]));
  }
  if (result.leftAlone.length) {
    lines.push('', `Left alone: ${result.leftAlone.length} pending pod(s) (no demand for new nodes)`);
    lines.push(...table([['POD', 'REASON'], ...result.leftAlone.map((p) => [p.key, p.reason])]));
  }
  return lines.join('\n');
}

export const planCommand: Command = {
  name: 'plan',
  summary: 'print the scale-up plan for objects in files, or read-only for a live cluster (--kubeconfig)',
  usage: [
    'Usage: headroom plan -f FILE|DIR|- [-f ...] [-o json|yaml|text]',
    '       headroom plan --kubeconfig FILE [--management-kubeconfig FILE] [--why NAMESPACE/POD] [-o json|yaml|text]',
    '',
    'Reads Pods, Nodes, DaemonSets, PVs, PVCs, StorageClasses, Namespaces, Cluster API',
    'MachineDeployments / MachineSets / MachinePools / Machines, headroom.dev NodePools, and',
    'SIG Autoscaling CapacityBuffers and ProvisioningRequests with what they reference',
    '(PodTemplates, ResourceQuotas, and the Deployments / StatefulSets / ReplicaSets / Jobs',
    'behind a scalableRef)',
    '(multi-document YAML, JSON, a List, or `kubectl get -o yaml` output) and prints',
    'which node groups Headroom would scale, where each pending pod would run, which',
    'pods cannot run and why, and the added cost per hour.',
    '',
    'Options:',
    '  -f, --filename FILE|DIR|-  input (repeatable); a directory reads its *.yaml, *.yml, *.json; - is stdin',
    '  -o, --output json|yaml|text output format (default text)',
    '      --kubeconfig FILE      plan for a live cluster instead: read (list and watch) what the controller',
    '                             reads, write nothing, and print what Headroom would do now',
    '      --management-kubeconfig FILE  the cluster holding the CAPI objects (default: the same)',
    '      --why NAMESPACE/POD    why that pod is pending and what would be provisioned for it',
    '      --at TIME              plan as of this RFC 3339 time (default now): which CronJob runs are due',
    '      --expendable-pods-priority-cutoff N  pods below this priority are expendable: no demand',
    '                             (default -10, as the controller and Cluster Autoscaler)',
    '',
    'With CronJobs, HPAs and Deployments in the input, the pods those announce (CronJob runs',
    'within the boot horizon, HPAs above current, scale-ups and rollout surge) are planned',
    'too, at the lowest priority, and listed apart from real pods ("predicted"), except in',
    'NodePools with spec.prediction.enabled: false.',
  ].join('\n'),
  options: {
    filename: { type: 'string', short: 'f', multiple: true },
    output: { type: 'string', short: 'o', default: 'text' },
    kubeconfig: { type: 'string' },
    'management-kubeconfig': { type: 'string' },
    why: { type: 'string' },
    at: { type: 'string' },
    'expendable-pods-priority-cutoff': { type: 'string' },
  },
  async run(values) {
    const files = (values.filename as string[] | undefined) ?? [];
    const kubeconfig = values.kubeconfig as string | undefined;
    if (files.length === 0 && !kubeconfig) throw new UsageError('plan: -f FILE|DIR|- or --kubeconfig FILE is required');
    if (files.length > 0 && kubeconfig) throw new UsageError('plan: -f and --kubeconfig do not go together');
    if (values['management-kubeconfig'] !== undefined && !kubeconfig) throw new UsageError('plan: --management-kubeconfig needs --kubeconfig');
    const why = values.why as string | undefined;
    if (why !== undefined && !/^[a-z0-9]([-a-z0-9]*[a-z0-9])?\/[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(why)) throw new UsageError(`plan: --why takes NAMESPACE/POD, got "${why}"`);
    const output = values.output as string;
    if (output !== 'json' && output !== 'yaml' && output !== 'text') throw new UsageError(`plan: unknown output format "${output}" (json, yaml or text)`);
    const atRaw = values.at as string | undefined;
    const at = atRaw === undefined ? Date.now() : Date.parse(atRaw);
    if (Number.isNaN(at) || (atRaw !== undefined && !/^\d{4}-\d{2}-\d{2}T/.test(atRaw))) throw new UsageError(`plan: --at must be an RFC 3339 time, got "${atRaw}"`);
    const cutoffRaw = values['expendable-pods-priority-cutoff'] as string | undefined;
    const model: PlanModel = cutoffRaw === undefined ? {} : { expendablePodsPriorityCutoff: parsePriorityCutoff(cutoffRaw, 'plan') };
    const warn = (msg: string) => console.error(`headroom: warning: ${oneLine(msg)}`);
    let result: PlanResult;
    let objects: ClusterObjects | undefined;
    if (kubeconfig) {
      const mgmt = values['management-kubeconfig'] as string | undefined;
      objects = await readLiveObjects({ kubeconfig, ...(mgmt ? { managementKubeconfig: mgmt } : {}) });
      result = await planFromObjects(objects, warn, at, model);
    } else {
      const inputs = readInputs(files);
      result = await planFromInputs(inputs, warn, at, model);
      if (why !== undefined) objects = loadObjects(inputs);
    }
    if (why !== undefined) {
      const [ns, podName] = why.split('/');
      if (!objects!.pods.some((p) => p.metadata?.namespace === ns && p.metadata?.name === podName)) throw new CliError(`plan: --why ${why}: no such pod in the input`);
      const text = explainPod(result, objects!, why);
      process.stdout.write(output === 'text' ? `${text}\n` : output === 'json' ? `${JSON.stringify({ pod: why, why: text.split('\n') }, null, 2)}\n` : stringifyYaml({ pod: why, why: text.split('\n') }));
      return 0;
    }
    process.stdout.write(output === 'text' ? `${planText(result)}\n` : output === 'json' ? `${planJson(result)}\n` : stringifyYaml(JSON.parse(planJson(result))));
    return 0;
  },
};
