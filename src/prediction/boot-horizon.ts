import type { V1Node } from '@kubernetes/client-node';
import { DEPLOYMENT_NAME_LABEL, POOL_NAME_LABEL, SET_NAME_LABEL } from '../api/capi.js';
import type { UnstructuredObject } from '../api/unstructured-object.js';
import { quantileOf } from './forecast.js';

/**
 * How long a node group's new Machines take to become Ready nodes, learned from
 * observed Machine creation -> Node Ready times; until a few have been seen, the
 * configured default. Forecasts look this far ahead: capacity ordered later than
 * that arrives after the pods.
 */

export interface BootModel {
  /** Newest last; one sample per Machine. */
  samples: readonly { machine: string; ms: number }[];
}

export const BOOT_SAMPLES = 32;
/** Samples needed before the learned horizon replaces the default. */
export const MIN_BOOT_SAMPLES = 3;
/** Longer than this is not a boot (a node that was NotReady for a while). */
const MAX_BOOT_MS = 3_600_000;

export interface BootSample {
  /** `${kind}/${namespace}/${name}` of the Machine's node group. */
  groupId: string;
  machine: string;
  ms: number;
}

export function observeBoot(model: BootModel | undefined, machine: string, ms: number): BootModel {
  const samples = model?.samples ?? [];
  if (!(ms > 0 && ms <= MAX_BOOT_MS) || samples.some((s) => s.machine === machine)) return model ?? { samples };
  return { samples: [...samples, { machine, ms: Math.round(ms) }].slice(-BOOT_SAMPLES) };
}

/** The boot time at `quantile` of the group's samples, or `fallbackMs` with too few. */
export function bootHorizonMs(model: BootModel | undefined, fallbackMs: number, quantile = 0.9): number {
  const s = model?.samples ?? [];
  if (s.length < MIN_BOOT_SAMPLES) return fallbackMs;
  return quantileOf(s.map((x) => x.ms), quantile);
}

function groupOfMachine(m: UnstructuredObject): string | undefined {
  const ns = m.metadata?.namespace ?? 'default';
  const labels = m.metadata?.labels ?? {};
  if (labels[DEPLOYMENT_NAME_LABEL]) return `MachineDeployment/${ns}/${labels[DEPLOYMENT_NAME_LABEL]}`;
  if (labels[POOL_NAME_LABEL]) return `MachinePool/${ns}/${labels[POOL_NAME_LABEL]}`;
  if (labels[SET_NAME_LABEL]) return `MachineSet/${ns}/${labels[SET_NAME_LABEL]}`;
  return undefined;
}

function time(v: unknown): number | undefined {
  if (v instanceof Date) return v.getTime();
  if (typeof v === 'string') {
    const t = Date.parse(v);
    return Number.isNaN(t) ? undefined : t;
  }
  return undefined;
}

/**
 * Boot durations visible in the cluster: each Machine with a nodeRef whose Node is
 * Ready, from the Machine's creation to the Ready condition's last transition (or
 * the Node's creation when the condition has no time). Feed them to observeBoot;
 * it keeps one sample per Machine.
 */
export function bootSamples(machines: readonly UnstructuredObject[], nodes: readonly V1Node[]): BootSample[] {
  const nodesByName = new Map<string, V1Node>();
  for (const n of nodes) if (n.metadata?.name) nodesByName.set(n.metadata.name, n);
  const out: BootSample[] = [];
  for (const m of machines) {
    const nodeName = (m.status as { nodeRef?: { name?: unknown } } | undefined)?.nodeRef?.name;
    const node = typeof nodeName === 'string' ? nodesByName.get(nodeName) : undefined;
    // Most Machines were measured on an earlier pass, against the same Node object.
    const memo = measured.get(m);
    if (memo && memo.node === node) {
      out.push(memo.sample);
      continue;
    }
    const groupId = groupOfMachine(m);
    const created = time(m.metadata?.creationTimestamp);
    if (!groupId || created === undefined || !m.metadata?.name) continue;
    const ready = node?.status?.conditions?.find((c) => c.type === 'Ready' && c.status === 'True');
    if (!node || !ready) continue;
    const at = time(ready.lastTransitionTime) ?? time(node.metadata?.creationTimestamp);
    if (at === undefined) continue;
    const sample = { groupId, machine: m.metadata.name, ms: at - created };
    measured.set(m, { node, sample });
    out.push(sample);
  }
  return out;
}

/** Machine object -> its sample and the Node object it was read from (objects are immutable): a memo. */
const measured = new WeakMap<UnstructuredObject, { node: V1Node; sample: BootSample }>();
