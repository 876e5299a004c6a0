import type { KubernetesObject } from '@kubernetes/client-node';
import { CAPI_GROUP, type CapiVersion } from '../api/capi.js';
import { hasClusterRef, rawClusterRef } from '../api/nodepool-cluster-ref.js';
import { isNotFound, type KubeClient } from './kube-client.js';

/**
 * API discovery (which cluster.x-k8s.io version is served; is a CRD installed)
 * and node-group auto-discovery specs in Cluster Autoscaler's clusterapi syntax:
 * `clusterapi:namespace=ns,clusterName=c,color=green` (every other key=value is a
 * label the group must carry). Several specs are ORed, as in Cluster Autoscaler.
 */


export interface GroupDiscoverySpec {
  namespace?: string;
  clusterName?: string;
  labels: Record<string, string>;
}

export class DiscoverySpecError extends Error {}

export function parseGroupDiscoverySpec(spec: string): GroupDiscoverySpec {
  const m = /^clusterapi:(.*)$/.exec(spec.trim());
  if (!m) throw new DiscoverySpecError(`node group auto-discovery spec ${JSON.stringify(spec)} must start with "clusterapi:"`);
  const out: GroupDiscoverySpec = { labels: {} };
  for (const part of m[1]!.split(',').filter(Boolean)) {
    const eq = part.indexOf('=');
    if (eq <= 0) throw new DiscoverySpecError(`node group auto-discovery spec ${JSON.stringify(spec)}: "${part}" is not key=value`);
    const key = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (key === 'namespace') out.namespace = value;
    else if (key === 'clusterName') out.clusterName = value;
    else out.labels[key] = value;
  }
  return out;
}

/** The controller's --node-group-auto-discovery specs, with --namespace / --cluster-name folded into each. */
export function discoverySpecs(values: { namespace?: string; clusterName?: string; specs: string[] }): GroupDiscoverySpec[] {
  const specs = values.specs.map(parseGroupDiscoverySpec);
  if (values.namespace || values.clusterName) {
    if (specs.length === 0) specs.push({ labels: {} });
    for (const s of specs) {
      if (values.namespace) s.namespace ??= values.namespace;
      if (values.clusterName) s.clusterName ??= values.clusterName;
    }
  }
  return specs;
}

function clusterNameOf(o: KubernetesObject): string | undefined {
  const spec = (o as { spec?: { clusterName?: unknown } }).spec;
  if (typeof spec?.clusterName === 'string') return spec.clusterName;
  return o.metadata?.labels?.['cluster.x-k8s.io/cluster-name'];
}

/** True when a node group (or, with `checkLabels` false, a Machine) is selected by a spec. */
export function matchesDiscovery(spec: GroupDiscoverySpec, o: KubernetesObject, checkLabels = true): boolean {
  if (spec.namespace && o.metadata?.namespace !== spec.namespace) return false;
  if (spec.clusterName && clusterNameOf(o) !== spec.clusterName) return false;
  if (checkLabels) {
    const labels = o.metadata?.labels ?? {};
    for (const [k, v] of Object.entries(spec.labels)) if (labels[k] !== v) return false;
  }
  return true;
}

/** No specs: everything; otherwise any spec. */
export function discoveryFilter(specs: readonly GroupDiscoverySpec[], checkLabels = true): ((o: KubernetesObject) => boolean) | undefined {
  if (specs.length === 0) return undefined;
  return (o) => specs.some((s) => matchesDiscovery(s, o, checkLabels));
}

/** True when the specs select node groups of the Cluster `namespace/name` (no specs, or specs without one: every Cluster). */
export function clusterInDiscovery(specs: readonly GroupDiscoverySpec[], namespace: string, name: string): boolean {
  if (specs.length === 0) return true;
  return specs.some((s) => (!s.namespace || s.namespace === namespace) && (!s.clusterName || s.clusterName === name));
}

/**
 * The NodePools a controller serves (ADR 0140): those whose spec.clusterRef names a
 * Cluster its discovery selects, and those without clusterRef unless `requireClusterRef`
 * (fleet mode). A malformed clusterRef is kept, so the pool's Invalid condition is
 * reported. Undefined: every NodePool.
 */
export function nodePoolScope(specs: readonly GroupDiscoverySpec[], requireClusterRef: boolean): ((o: KubernetesObject) => boolean) | undefined {
  if (specs.length === 0 && !requireClusterRef) return undefined;
  return (o) => {
    if (!hasClusterRef(o)) return !requireClusterRef;
    const ref = rawClusterRef(o);
    return !ref || clusterInDiscovery(specs, ref.namespace, ref.name);
  };
}

/** The single namespace all specs agree on (so watches can be namespaced), if any. */
export function discoveryNamespace(specs: readonly GroupDiscoverySpec[]): string | undefined {
  const namespaces = new Set(specs.map((s) => s.namespace));
  if (namespaces.size !== 1) return undefined;
  return [...namespaces][0];
}

interface APIGroup {
  versions?: Array<{ version: string }>;
  preferredVersion?: { version: string };
}

/** Served versions of an API group ([] if the group is not served). */
export async function servedVersions(client: KubeClient, group: string): Promise<string[]> {
  try {
    const g = await client.get<APIGroup>(`/apis/${group}`);
    return (g.versions ?? []).map((v) => v.version);
  } catch (err) {
    if (isNotFound(err)) return [];
    throw err;
  }
}

/** True when `plural` is served at group/version. */
export async function resourceServed(client: KubeClient, group: string, version: string, plural: string): Promise<boolean> {
  try {
    const list = await client.get<{ resources?: Array<{ name: string }> }>(`/apis/${group}/${version}`);
    return (list.resources ?? []).some((r) => r.name === plural);
  } catch (err) {
    if (isNotFound(err)) return false;
    throw err;
  }
}

/** cluster.x-k8s.io v1beta2 where served, else v1beta1. */
export async function discoverCapiVersion(client: KubeClient): Promise<CapiVersion> {
  const versions = await servedVersions(client, CAPI_GROUP);
  if (versions.includes('v1beta2')) return 'v1beta2';
  if (versions.includes('v1beta1')) return 'v1beta1';
  throw new Error(`${CAPI_GROUP} is not served by ${client.server.origin}: install Cluster API (v1beta1 or v1beta2)`);
}

/** The first of `preferred` versions at which `plural` of `group` is served. */
export async function discoverResourceVersion(
  client: KubeClient, group: string, plural: string, preferred: readonly string[],
): Promise<string | undefined> {
  const served = await servedVersions(client, group);
  for (const v of preferred) if (served.includes(v) && (await resourceServed(client, group, v, plural))) return v;
  return undefined;
}
