import type { V1LabelSelector, V1Taint } from '@kubernetes/client-node';
import { matchesLabelSelector, matchesNodeSelectorRequirement } from '../scheduling/label-selector.js';
import { parseInteger, parseMilliCpu } from '../scheduling/quantity.js';
import {
  DEFAULT_BUDGETS, DEFAULT_CONSOLIDATE_AFTER_MS, DEFAULT_CONSOLIDATION_POLICY, DEFAULT_EXPIRE_AFTER_MS,
} from './disruption-defaults.js';

/**
 * headroom.dev/v1alpha1 NodePool: which CAPI node groups Headroom may scale (or
 * which templates it may stamp standalone Machines from), with Karpenter's
 * vocabulary for requirements, limits, weight and disruption. Cluster-scoped, like
 * Karpenter's NodePool. The CRD (charts/headroom/crds/headroom.dev_nodepools.yaml)
 * validates the same rules with CEL; this parser re-checks them at the boundary
 * because NodePools also come from files and the simulator.
 */

export const NODEPOOL_GROUP = 'headroom.dev';
export const NODEPOOL_VERSION = 'v1alpha1';
export const NODEPOOL_API_VERSION = `${NODEPOOL_GROUP}/${NODEPOOL_VERSION}`;
export const NODEPOOL_KIND = 'NodePool';
export const NODEPOOL_PLURAL = 'nodepools';
/** Label Headroom puts on everything it creates for a NodePool (standalone Machines and their objects). */
export const NODEPOOL_LABEL = 'headroom.dev/nodepool';
/** The well-known capacity-type label (Karpenter's key, so existing requirements carry over). */
export const CAPACITY_TYPE_LABEL = 'karpenter.sh/capacity-type';

export type RequirementOperator = 'In' | 'NotIn' | 'Exists' | 'DoesNotExist' | 'Gt' | 'Lt';
const OPERATORS: readonly RequirementOperator[] = ['In', 'NotIn', 'Exists', 'DoesNotExist', 'Gt', 'Lt'];

export interface NodePoolRequirement {
  key: string;
  operator: RequirementOperator;
  values: string[];
}

/** An API object reference as CAPI's MachineSet template uses it (apiVersion + kind + name, same namespace). */
export interface TemplateRef {
  apiVersion: string;
  kind: string;
  name: string;
}

/** For standalone Machines: what to clone, where, and what the resulting node looks like. */
export interface MachineTemplateSpec {
  namespace: string;
  clusterName: string;
  /** Kubernetes version of the Machine (spec.version). */
  version?: string;
  failureDomain?: string;
  bootstrapConfigTemplateRef: TemplateRef;
  infrastructureTemplateRef: TemplateRef;
  /** Node shape for scale-from-zero (the same vocabulary as the capacity.cluster-autoscaler annotations). */
  capacity: Record<string, number>;
  /** Labels and taints the node will carry. */
  labels: Record<string, string>;
  taints: V1Taint[];
  /** Price per node-hour, for cost-aware choice. */
  pricePerHour?: number;
}

export type ConsolidationPolicy = 'WhenEmpty' | 'WhenEmptyOrUnderutilized';

export interface DisruptionBudget {
  /** An absolute count ("3") or a percentage of the pool's nodes ("10%"). */
  nodes: string;
  /** Cron schedule (in UTC) from which the budget is active for `durationMs`; absent = always. */
  schedule?: string;
  durationMs?: number;
  /** Disruption reasons the budget applies to; absent = all. */
  reasons?: Array<'Empty' | 'Underutilized' | 'Drifted' | 'Expired'>;
}

export interface NodePoolDisruption {
  consolidationPolicy: ConsolidationPolicy;
  /** Milliseconds a node must be empty/underutilised before it is consolidated; null = Never. */
  consolidateAfterMs: number | null;
  /** Milliseconds after which a node is replaced; null = Never. */
  expireAfterMs: number | null;
  budgets: DisruptionBudget[];
}

/** Upper bounds of a pool; absent = unlimited. cpu in millicores, memory in bytes. */
export interface NodePoolLimits {
  cpu?: number;
  memory?: number;
  nodes?: number;
}

/**
 * Opt-in predictive capacity for a pool (issue 13). Forecast demand becomes virtual
 * pods; the caps bound what the pool may hold for them alone.
 */
export interface NodePoolPrediction {
  enabled: boolean;
  /** Forecast quantile in [0.5, 0.99]. */
  quantile: number;
  /** Spare's cost cap, percent of the cost of the demand it covers (the parser fills the default). */
  maxSparePercent?: number;
  /** Price per hour of nodes held for predicted pods only; absent = uncapped. */
  maxExtraCostPerHour?: number;
  /** Nodes held for predicted pods only; absent = uncapped. */
  maxPredictedNodes?: number;
}

export const DEFAULT_PREDICTION_QUANTILE = 0.9;
/** Spare (capacity held for the forecast's jitter margin) costs at most this percent of the demand it covers, by default (ADR 0145). */
export const DEFAULT_MAX_SPARE_PERCENT = 10;

/** The CAPI Cluster a NodePool is for (spec.clusterRef; ADR 0140). */
export interface NodePoolClusterRef {
  namespace: string;
  name: string;
}

export interface NodePool {
  name: string;
  uid?: string;
  /** Absent: every cluster the controller serves (single-cluster installs; ignored in fleet mode). */
  clusterRef?: NodePoolClusterRef;
  weight: number;
  /** Selects MachineDeployments, MachineSets and MachinePools by their labels. */
  nodeGroupSelector?: V1LabelSelector;
  /** Standalone Machines from templates (exclusive with nodeGroupSelector). */
  machineTemplate?: MachineTemplateSpec;
  requirements: NodePoolRequirement[];
  limits: NodePoolLimits;
  disruption: NodePoolDisruption;
  /** Absent = prediction at its defaults (on, spare bounded: src/prediction/settings.ts). */
  prediction?: NodePoolPrediction;
}

export class NodePoolError extends Error {
  constructor(readonly nodePool: string, message: string) {
    super(`NodePool ${nodePool}: ${message}`);
  }
}

/** The one set of defaults (disruption-defaults.ts), re-exported for the callers that read it from here. */
export { DEFAULT_CONSOLIDATE_AFTER_MS };
const DURATION_PART = /([0-9]+(?:\.[0-9]+)?)(ns|us|µs|ms|s|m|h)/g;
const DURATION = /^([0-9]+(?:\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$/;
const UNIT_MS: Record<string, number> = { ns: 1e-6, us: 1e-3, µs: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3600_000 };
const BUDGET_NODES = /^((100|[0-9]{1,2})%|[0-9]+)$/;
const LABEL_KEY = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;

/** A Go duration ("30s", "1h30m") in milliseconds, or null for "Never". */
export function parseDuration(input: string): number | null {
  if (input === 'Never') return null;
  if (!DURATION.test(input)) throw new Error(`invalid duration ${JSON.stringify(input)}`);
  let ms = 0;
  for (const m of input.matchAll(DURATION_PART)) ms += Number(m[1]) * UNIT_MS[m[2]!]!;
  return ms;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function stringMap(v: unknown, what: string, fail: (m: string) => never): Record<string, string> {
  if (v === undefined) return {};
  if (!isRecord(v)) fail(`${what} must be a map of strings`);
  const out: Record<string, string> = {};
  for (const [k, val] of Object.entries(v)) {
    if (typeof val !== 'string') fail(`${what}.${k} must be a string`);
    out[k] = val;
  }
  return out;
}

function parseTemplateRef(v: unknown, what: string, fail: (m: string) => never): TemplateRef {
  if (!isRecord(v)) return fail(`${what} is required`);
  const { apiVersion, kind, name } = v;
  if (typeof apiVersion !== 'string' || !apiVersion.includes('/')) fail(`${what}.apiVersion must be group/version`);
  if (typeof kind !== 'string' || !kind) fail(`${what}.kind is required`);
  if (typeof name !== 'string' || !name) fail(`${what}.name is required`);
  return { apiVersion, kind, name };
}

function parseRequirement(v: unknown, i: number, fail: (m: string) => never): NodePoolRequirement {
  const at = `requirements[${i}]`;
  if (!isRecord(v)) return fail(`${at} must be an object`);
  const { key, operator } = v;
  if (typeof key !== 'string' || !LABEL_KEY.test(key)) fail(`${at}.key ${JSON.stringify(key)} is not a label key`);
  if (typeof operator !== 'string' || !OPERATORS.includes(operator as RequirementOperator)) {
    fail(`${at}.operator must be one of ${OPERATORS.join(', ')}`);
  }
  const values = v.values === undefined ? [] : v.values;
  if (!Array.isArray(values) || values.some((x) => typeof x !== 'string')) fail(`${at}.values must be a list of strings`);
  const op = operator as RequirementOperator;
  if ((op === 'In' || op === 'NotIn') && values.length === 0) fail(`${at}: ${op} needs at least one value`);
  if ((op === 'Exists' || op === 'DoesNotExist') && values.length > 0) fail(`${at}: ${op} takes no values`);
  if ((op === 'Gt' || op === 'Lt') && (values.length !== 1 || !/^-?[0-9]+$/.test(values[0] as string))) {
    fail(`${at}: ${op} needs exactly one integer value`);
  }
  return { key, operator: op, values: values as string[] };
}

function parseLimits(v: unknown, fail: (m: string) => never): NodePoolLimits {
  if (v === undefined) return {};
  if (!isRecord(v)) return fail('limits must be an object');
  const out: NodePoolLimits = {};
  for (const [k, q] of Object.entries(v)) {
    if (typeof q !== 'string' && typeof q !== 'number') fail(`limits.${k} must be a quantity`);
    try {
      if (k === 'cpu') out.cpu = parseMilliCpu(q);
      else if (k === 'memory') out.memory = parseInteger(q);
      else if (k === 'nodes') out.nodes = parseInteger(q);
      else fail(`limits.${k} is not supported (cpu, memory, nodes)`);
    } catch (err) {
      if (err instanceof NodePoolError) throw err;
      fail(`limits.${k}: ${(err as Error).message}`);
    }
  }
  return out;
}

function parseDisruption(v: unknown, fail: (m: string) => never): NodePoolDisruption {
  const d = v === undefined ? {} : v;
  if (!isRecord(d)) return fail('disruption must be an object');
  const policy = d.consolidationPolicy ?? DEFAULT_CONSOLIDATION_POLICY;
  if (policy !== 'WhenEmpty' && policy !== 'WhenEmptyOrUnderutilized') {
    fail('disruption.consolidationPolicy must be WhenEmpty or WhenEmptyOrUnderutilized');
  }
  const duration = (field: string, dflt: number | null): number | null => {
    const raw = d[field];
    if (raw === undefined) return dflt;
    if (typeof raw !== 'string') return fail(`disruption.${field} must be a duration string or Never`);
    try {
      return parseDuration(raw);
    } catch (err) {
      return fail(`disruption.${field}: ${(err as Error).message}`);
    }
  };
  const rawBudgets = d.budgets ?? DEFAULT_BUDGETS;
  if (!Array.isArray(rawBudgets)) fail('disruption.budgets must be a list');
  const budgets = (rawBudgets as unknown[]).map((b, i): DisruptionBudget => {
    if (!isRecord(b) || typeof b.nodes !== 'string' || !BUDGET_NODES.test(b.nodes)) {
      return fail(`disruption.budgets[${i}].nodes must be a count or a percentage`);
    }
    const out: DisruptionBudget = { nodes: b.nodes };
    if ((b.schedule === undefined) !== (b.duration === undefined)) {
      fail(`disruption.budgets[${i}]: schedule and duration go together`);
    }
    if (typeof b.schedule === 'string') out.schedule = b.schedule;
    if (typeof b.duration === 'string') {
      try {
        out.durationMs = parseDuration(b.duration) ?? undefined;
      } catch (err) {
        fail(`disruption.budgets[${i}].duration: ${(err as Error).message}`);
      }
    }
    if (b.reasons !== undefined) {
      if (!Array.isArray(b.reasons)) fail(`disruption.budgets[${i}].reasons must be a list`);
      out.reasons = [...b.reasons] as DisruptionBudget['reasons'];
    }
    return out;
  });
  return {
    consolidationPolicy: policy as ConsolidationPolicy,
    consolidateAfterMs: duration('consolidateAfter', DEFAULT_CONSOLIDATE_AFTER_MS),
    expireAfterMs: duration('expireAfter', DEFAULT_EXPIRE_AFTER_MS),
    budgets,
  };
}

function parsePrediction(v: unknown, fail: (m: string) => never): NodePoolPrediction | undefined {
  if (v === undefined) return undefined;
  if (!isRecord(v)) return fail('prediction must be an object');
  const enabled = v.enabled ?? true;
  if (typeof enabled !== 'boolean') fail('prediction.enabled must be true or false');
  const quantile = v.quantile === undefined ? DEFAULT_PREDICTION_QUANTILE : Number(v.quantile);
  if ((typeof v.quantile !== 'number' && typeof v.quantile !== 'string' && v.quantile !== undefined) || !(quantile >= 0.5 && quantile <= 0.99)) {
    fail('prediction.quantile must be a number in [0.5, 0.99]');
  }
  const out: NodePoolPrediction = { enabled: enabled as boolean, quantile };
  if (v.maxSparePercent === undefined) out.maxSparePercent = DEFAULT_MAX_SPARE_PERCENT;
  else {
    const p = v.maxSparePercent;
    if (typeof p !== 'number' || !Number.isFinite(p) || p < 0 || p > 100) fail('prediction.maxSparePercent must be a number in [0, 100]');
    out.maxSparePercent = p as number;
  }
  if (v.maxExtraCostPerHour !== undefined) {
    const c = typeof v.maxExtraCostPerHour === 'string' && v.maxExtraCostPerHour.trim() !== '' ? Number(v.maxExtraCostPerHour)
      : typeof v.maxExtraCostPerHour === 'number' ? v.maxExtraCostPerHour : Number.NaN;
    if (!Number.isFinite(c) || c < 0) fail('prediction.maxExtraCostPerHour must be a non-negative decimal');
    out.maxExtraCostPerHour = c;
  }
  if (v.maxPredictedNodes !== undefined) {
    const n = v.maxPredictedNodes;
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 0) fail('prediction.maxPredictedNodes must be a non-negative integer');
    out.maxPredictedNodes = n as number;
  }
  for (const k of Object.keys(v)) {
    if (!['enabled', 'quantile', 'maxSparePercent', 'maxExtraCostPerHour', 'maxPredictedNodes'].includes(k)) fail(`prediction.${k} is not supported (enabled, quantile, maxSparePercent, maxExtraCostPerHour, maxPredictedNodes)`);
  }
  return out;
}

function parseMachineTemplate(v: unknown, fail: (m: string) => never): MachineTemplateSpec {
  if (!isRecord(v)) return fail('machineTemplate must be an object');
  const { namespace, clusterName, version, failureDomain } = v;
  if (typeof namespace !== 'string' || !namespace) fail('machineTemplate.namespace is required');
  if (typeof clusterName !== 'string' || !clusterName) fail('machineTemplate.clusterName is required');
  if (version !== undefined && typeof version !== 'string') fail('machineTemplate.version must be a string');
  if (failureDomain !== undefined && typeof failureDomain !== 'string') fail('machineTemplate.failureDomain must be a string');
  const capacity: Record<string, number> = {};
  if (v.capacity !== undefined) {
    if (!isRecord(v.capacity)) fail('machineTemplate.capacity must be a resource list');
    for (const [k, q] of Object.entries(v.capacity)) {
      if (typeof q !== 'string' && typeof q !== 'number') fail(`machineTemplate.capacity.${k} must be a quantity`);
      try {
        capacity[k] = k === 'cpu' ? parseMilliCpu(q) : parseInteger(q);
      } catch (err) {
        fail(`machineTemplate.capacity.${k}: ${(err as Error).message}`);
      }
    }
  }
  if (v.taints !== undefined && !Array.isArray(v.taints)) fail('machineTemplate.taints must be a list');
  const taints = ((v.taints ?? []) as unknown[]).map((t, i) => {
    if (!isRecord(t) || typeof t.key !== 'string' || typeof t.effect !== 'string') {
      return fail(`machineTemplate.taints[${i}] needs key and effect`);
    }
    return { key: t.key, effect: t.effect, ...(typeof t.value === 'string' ? { value: t.value } : {}) } as V1Taint;
  });
  let pricePerHour: number | undefined;
  if (v.pricePerHour !== undefined) {
    pricePerHour = Number(v.pricePerHour);
    if (!Number.isFinite(pricePerHour) || pricePerHour < 0) fail('machineTemplate.pricePerHour must be a non-negative number');
  }
  return {
    namespace, clusterName,
    ...(version ? { version } : {}),
    ...(failureDomain ? { failureDomain } : {}),
    bootstrapConfigTemplateRef: parseTemplateRef(v.bootstrapConfigTemplateRef, 'machineTemplate.bootstrapConfigTemplateRef', fail),
    infrastructureTemplateRef: parseTemplateRef(v.infrastructureTemplateRef, 'machineTemplate.infrastructureTemplateRef', fail),
    capacity,
    labels: stringMap(v.labels, 'machineTemplate.labels', fail),
    taints,
    ...(pricePerHour !== undefined ? { pricePerHour } : {}),
  };
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_SUBDOMAIN_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

function parseClusterRef(v: unknown, fail: (m: string) => never): NodePoolClusterRef | undefined {
  if (v === undefined) return undefined;
  if (!isRecord(v)) return fail('clusterRef must be an object {namespace, name}');
  const { namespace, name } = v;
  if (typeof namespace !== 'string' || namespace.length > 63 || !DNS_LABEL.test(namespace)) fail('clusterRef.namespace must be a namespace name');
  if (typeof name !== 'string' || name.length > 253 || !DNS_SUBDOMAIN_NAME.test(name)) fail('clusterRef.name must be a Cluster name');
  for (const k of Object.keys(v)) if (k !== 'namespace' && k !== 'name') fail(`clusterRef.${k} is not supported (namespace, name)`);
  return { namespace: namespace as string, name: name as string };
}

/**
 * Parses and validates a NodePool object (as read from the API or a file).
 * Throws NodePoolError with a message naming the offending field.
 */
export function parseNodePool(obj: unknown): NodePool {
  const name = isRecord(obj) && isRecord(obj.metadata) && typeof obj.metadata.name === 'string' ? obj.metadata.name : '<unnamed>';
  const fail = (message: string): never => {
    throw new NodePoolError(name, message);
  };
  if (!isRecord(obj)) return fail('not an object');
  if (obj.apiVersion !== undefined && obj.apiVersion !== NODEPOOL_API_VERSION) fail(`apiVersion must be ${NODEPOOL_API_VERSION}`);
  if (obj.kind !== undefined && obj.kind !== NODEPOOL_KIND) fail(`kind must be ${NODEPOOL_KIND}`);
  if (name === '<unnamed>') fail('metadata.name is required');
  const spec = obj.spec;
  if (!isRecord(spec)) return fail('spec is required');
  const hasSelector = spec.nodeGroupSelector !== undefined;
  const hasTemplate = spec.machineTemplate !== undefined;
  if (hasSelector === hasTemplate) fail('exactly one of spec.nodeGroupSelector and spec.machineTemplate must be set');
  if (hasSelector && !isRecord(spec.nodeGroupSelector)) fail('nodeGroupSelector must be a label selector');
  const weight = spec.weight ?? 1;
  if (typeof weight !== 'number' || !Number.isInteger(weight) || weight < 1 || weight > 100) fail('weight must be an integer in [1, 100]');
  if (spec.requirements !== undefined && !Array.isArray(spec.requirements)) fail('requirements must be a list');
  const requirements = ((spec.requirements ?? []) as unknown[]).map((r, i) => parseRequirement(r, i, fail));
  const uid = isRecord(obj.metadata) && typeof obj.metadata.uid === 'string' ? obj.metadata.uid : undefined;
  const prediction = parsePrediction(spec.prediction, fail);
  const clusterRef = parseClusterRef(spec.clusterRef, fail);
  const machineTemplate = hasTemplate ? parseMachineTemplate(spec.machineTemplate, fail) : undefined;
  if (clusterRef && machineTemplate && (machineTemplate.namespace !== clusterRef.namespace || machineTemplate.clusterName !== clusterRef.name)) {
    fail(`machineTemplate (${machineTemplate.namespace}/${machineTemplate.clusterName}) must be in the cluster of clusterRef (${clusterRef.namespace}/${clusterRef.name})`);
  }
  return {
    name,
    ...(uid ? { uid } : {}),
    ...(clusterRef ? { clusterRef } : {}),
    weight: weight as number,
    ...(hasSelector ? { nodeGroupSelector: spec.nodeGroupSelector as V1LabelSelector } : {}),
    ...(machineTemplate ? { machineTemplate } : {}),
    requirements,
    limits: parseLimits(spec.limits, fail),
    disruption: parseDisruption(spec.disruption, fail),
    ...(prediction ? { prediction } : {}),
  };
}

/** True when `labels` satisfy every requirement (the node-affinity semantics of NodeSelectorRequirement). */
export function requirementsMatch(requirements: readonly NodePoolRequirement[], labels: Record<string, string>): boolean {
  return requirements.every((r) => matchesNodeSelectorRequirement(r, labels));
}

/**
 * The NodePool a node group belongs to: among the pools whose nodeGroupSelector
 * matches the group's labels and whose requirements its node template labels
 * satisfy, the highest weight (ties: name order, for determinism).
 */
export function nodePoolForGroup(
  pools: readonly NodePool[], groupLabels: Record<string, string>, templateLabels: Record<string, string>,
): NodePool | undefined {
  let best: NodePool | undefined;
  for (const p of pools) {
    if (!p.nodeGroupSelector) continue;
    if (!matchesLabelSelector(p.nodeGroupSelector, groupLabels)) continue;
    if (!requirementsMatch(p.requirements, templateLabels)) continue;
    if (!best || p.weight > best.weight || (p.weight === best.weight && p.name < best.name)) best = p;
  }
  return best;
}

/** NodePools parsed so far, by object (successes only). */
const parsedNodePools = new WeakMap<object, NodePool>();

/**
 * parseNodePool, remembered per object: NodePool objects from a ClusterStateSource are
 * immutable (a change is a new object), and the loops, the snapshot and the metrics
 * read every NodePool on every pass. An invalid one throws again each time, so it is
 * reported each time; the result is shared and must not be changed.
 */
export function parseNodePoolOnce(obj: object): NodePool {
  const hit = parsedNodePools.get(obj);
  if (hit) return hit;
  const p = parseNodePool(obj);
  parsedNodePools.set(obj, p);
  return p;
}
