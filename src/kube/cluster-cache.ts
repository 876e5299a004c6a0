import type { KubernetesObject } from '@kubernetes/client-node';
import { CAPACITY_BUFFER_GROUP, CAPACITY_BUFFER_PLURAL, CAPACITY_BUFFER_VERSIONS } from '../api/capacity-buffer.js';
import { CAPI_GROUP, type CapiVersion } from '../api/capi.js';
import { NODEPOOL_GROUP, NODEPOOL_PLURAL, NODEPOOL_VERSION } from '../api/nodepool.js';
import { PROVISIONING_REQUEST_PLURAL, PROVISIONING_REQUEST_VERSIONS } from '../api/provisioning-request.js';
import type { ClusterObjects } from '../cluster/objects.js';
import type { ObservedScale } from '../cluster/objects.js';
import type { ClusterStateSource, StateChange } from '../cluster/state.js';
import {
  type GroupDiscoverySpec, discoverCapiVersion, discoverResourceVersion,
  discoveryFilter, discoveryNamespace, nodePoolScope,
} from './discovery.js';
import { Informer, type InformerOptions, type ResourcePath } from './informer.js';
import { transformFor } from './informer-transform.js';
import type { KubeClient } from './kube-client.js';

/**
 * The controller's view of the cluster: one Informer per watched resource, read
 * from memory. Workload-cluster kinds (pods, nodes, ...) and management-cluster
 * kinds (CAPI objects, NodePools, CapacityBuffers) may come from two different
 * apiservers, as with Cluster Autoscaler's clusterapi provider; with one
 * kubeconfig both clients point at the same cluster.
 */


export interface ClusterCacheOptions {
  workload: KubeClient;
  management: KubeClient;
  /** Node-group auto-discovery; empty = every group the management client can see. */
  discovery?: GroupDiscoverySpec[];
  informer?: InformerOptions;
  /**
   * Narrows the workload watches: pods (and PVCs) of one namespace, nodes by
   * label. For several autoscalers sharing one cluster, e.g. tests on a shared
   * control plane; production watches everything.
   */
  workloadScope?: { namespace?: string; nodeLabelSelector?: string };
  /** A watch that has shown no life for longer than this makes the cache unhealthy. Default 180 s. */
  maxStalenessMs?: number;
  /** Also watch Deployments, StatefulSets, CronJobs and HPAs (prediction's signals). */
  workloads?: boolean;
  /** Only NodePools with a spec.clusterRef (fleet mode, ADR 0140); see nodePoolScope. */
  requireNodePoolClusterRef?: boolean;
}

type Kind = keyof ClusterObjects;

const NODE_GROUP_PLURALS = ['machinedeployments', 'machinesets', 'machinepools'] as const;
const DRA_GROUP = 'resource.k8s.io';
const DRA_VERSION = 'v1';
/** DRA kinds, their plurals, and whether they are namespaced (then scoped like pods). */
const DRA_RESOURCES: ReadonlyArray<[Kind, string, boolean]> = [
  ['resourceClaims', 'resourceclaims', true], ['resourceClaimTemplates', 'resourceclaimtemplates', true],
  ['deviceClasses', 'deviceclasses', false], ['resourceSlices', 'resourceslices', false],
];

/** `group/kind` of the infrastructure reference in a node group's spec.template.spec, if any. */
function infrastructureGroupKind(o: KubernetesObject): { group: string; kind: string } | undefined {
  const ref = ((o as { spec?: { template?: { spec?: { infrastructureRef?: unknown } } } }).spec?.template?.spec?.infrastructureRef ?? {}) as {
    apiGroup?: unknown; apiVersion?: unknown; kind?: unknown;
  };
  const group = typeof ref.apiGroup === 'string' ? ref.apiGroup
    : typeof ref.apiVersion === 'string' && ref.apiVersion.includes('/') ? ref.apiVersion.slice(0, ref.apiVersion.indexOf('/')) : undefined;
  return group && typeof ref.kind === 'string' && ref.kind ? { group, kind: ref.kind } : undefined;
}

export class ClusterCache implements ClusterStateSource {
  /**
   * `optional` informers (infrastructure templates, added as node groups reference
   * their kinds) do not count towards synced/healthy: without them Headroom falls back
   * to the capacity annotations and learned shapes, and a provider kind it may not
   * read (no RBAC) must not stop the controller.
   */
  private readonly informers: Array<{ kind: Kind; informer: Informer; optional?: boolean }> = [];
  /** Infrastructure kinds (`group/kind`) already watched or being resolved. */
  private readonly infrastructureKinds = new Set<string>();
  private capiNamespace: string | undefined;
  private readonly listeners = new Set<(kind: Kind, change?: StateChange) => void>();
  private cached: ClusterObjects | undefined;
  capiVersion: CapiVersion | undefined;
  /** The served versions Headroom reads (and writes status at), when installed. */
  capacityBufferVersion: string | undefined;
  provisioningRequestVersion: string | undefined;
  private scales: ObservedScale[] = [];
  /** Resources that are optional and absent (e.g. no CapacityBuffer CRD). */
  readonly absent: string[] = [];
  private started = false;
  private stopped = false;

  constructor(private readonly opts: ClusterCacheOptions) {}

  /** Discovers API versions and starts every informer. */
  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    const { workload, management } = this.opts;
    const specs = this.opts.discovery ?? [];
    this.capiVersion = await discoverCapiVersion(management);
    const capiNs = discoveryNamespace(specs);
    const groupFilter = discoveryFilter(specs, true);
    const machineFilter = discoveryFilter(specs, false);

    const add = (kind: Kind, client: KubeClient, r: ResourcePath, filter?: (o: KubernetesObject) => boolean) => this.addInformer(kind, client, r, filter);
    this.capiNamespace = capiNs;
    const scope = this.opts.workloadScope ?? {};
    const podNs = scope.namespace ? { namespace: scope.namespace } : {};
    add('pods', workload, { group: '', version: 'v1', plural: 'pods', ...podNs });
    add('nodes', workload, { group: '', version: 'v1', plural: 'nodes', ...(scope.nodeLabelSelector ? { labelSelector: scope.nodeLabelSelector } : {}) });
    add('namespaces', workload, { group: '', version: 'v1', plural: 'namespaces' });
    add('daemonSets', workload, { group: 'apps', version: 'v1', plural: 'daemonsets' });
    add('podDisruptionBudgets', workload, { group: 'policy', version: 'v1', plural: 'poddisruptionbudgets' });
    add('persistentVolumes', workload, { group: '', version: 'v1', plural: 'persistentvolumes' });
    add('persistentVolumeClaims', workload, { group: '', version: 'v1', plural: 'persistentvolumeclaims', ...podNs });
    add('storageClasses', workload, { group: 'storage.k8s.io', version: 'v1', plural: 'storageclasses' });
    // Each node's CSI attach limits (kubelet keeps one CSINode per node).
    add('csiNodes', workload, { group: 'storage.k8s.io', version: 'v1', plural: 'csinodes' });
    // DRA (resource.k8s.io/v1, served by default since 1.34): what pods' claims ask for and
    // what nodes publish. Required where served: a plan without them would put GPU pods
    // on nodes without GPUs.
    if (await discoverResourceVersion(workload, DRA_GROUP, 'resourceslices', [DRA_VERSION])) {
      for (const [kind, plural, namespaced] of DRA_RESOURCES) add(kind, workload, { group: DRA_GROUP, version: DRA_VERSION, plural, ...(namespaced ? podNs : {}) });
    } else {
      this.absent.push(`resourceslices.${DRA_GROUP}/${DRA_VERSION}`);
    }
    for (const plural of NODE_GROUP_PLURALS) {
      add('nodeGroups', management, { group: CAPI_GROUP, version: this.capiVersion, plural, ...(capiNs ? { namespace: capiNs } : {}) }, groupFilter);
    }
    add('machines', management, { group: CAPI_GROUP, version: this.capiVersion, plural: 'machines', ...(capiNs ? { namespace: capiNs } : {}) }, machineFilter);
    // Optional: without them (older chart RBAC) only paused groups, not paused Clusters, hold scaling.
    this.addInformer('clusters', management, { group: CAPI_GROUP, version: this.capiVersion, plural: 'clusters', ...(capiNs ? { namespace: capiNs } : {}) }, undefined, true);
    const nodePoolVersion = await discoverResourceVersion(management, NODEPOOL_GROUP, NODEPOOL_PLURAL, [NODEPOOL_VERSION]);
    if (nodePoolVersion) add('nodePools', management, { group: NODEPOOL_GROUP, version: nodePoolVersion, plural: NODEPOOL_PLURAL }, nodePoolScope(specs, this.opts.requireNodePoolClusterRef ?? false));
    else this.absent.push(`${NODEPOOL_PLURAL}.${NODEPOOL_GROUP}`);
    // CapacityBuffers and ProvisioningRequests describe workload pods: they live in the
    // workload cluster, next to the PodTemplates (and workloads, quotas) they reference,
    // which are watched only when one of the two APIs is served.
    this.capacityBufferVersion = await discoverResourceVersion(workload, CAPACITY_BUFFER_GROUP, CAPACITY_BUFFER_PLURAL, CAPACITY_BUFFER_VERSIONS);
    this.provisioningRequestVersion = await discoverResourceVersion(workload, CAPACITY_BUFFER_GROUP, PROVISIONING_REQUEST_PLURAL, PROVISIONING_REQUEST_VERSIONS);
    if (this.capacityBufferVersion) {
      add('capacityBuffers', workload, { group: CAPACITY_BUFFER_GROUP, version: this.capacityBufferVersion, plural: CAPACITY_BUFFER_PLURAL, ...podNs });
      // What a scalableRef names (Deployments and StatefulSets below), and the quotas that cap a buffer.
      add('replicaSets', workload, { group: 'apps', version: 'v1', plural: 'replicasets', ...podNs });
      add('jobs', workload, { group: 'batch', version: 'v1', plural: 'jobs', ...podNs });
      add('resourceQuotas', workload, { group: '', version: 'v1', plural: 'resourcequotas', ...podNs });
    } else {
      this.absent.push(`${CAPACITY_BUFFER_PLURAL}.${CAPACITY_BUFFER_GROUP}`);
    }
    if (this.provisioningRequestVersion) {
      add('provisioningRequests', workload, { group: CAPACITY_BUFFER_GROUP, version: this.provisioningRequestVersion, plural: PROVISIONING_REQUEST_PLURAL, ...podNs });
    } else {
      this.absent.push(`${PROVISIONING_REQUEST_PLURAL}.${CAPACITY_BUFFER_GROUP}`);
    }
    if (this.capacityBufferVersion || this.provisioningRequestVersion) {
      add('podTemplates', workload, { group: '', version: 'v1', plural: 'podtemplates', ...podNs });
    }

    if (this.opts.workloads || this.capacityBufferVersion) {
      add('deployments', workload, { group: 'apps', version: 'v1', plural: 'deployments', ...podNs });
      add('statefulSets', workload, { group: 'apps', version: 'v1', plural: 'statefulsets', ...podNs });
    }
    if (this.opts.workloads) {
      add('cronJobs', workload, { group: 'batch', version: 'v1', plural: 'cronjobs', ...podNs });
      add('horizontalPodAutoscalers', workload, { group: 'autoscaling', version: 'v2', plural: 'horizontalpodautoscalers', ...podNs });
    }

    for (const { informer } of this.informers) informer.start();
    // Scale from zero reads the infrastructure templates node groups reference: watch
    // each kind once some group refers to it.
    this.onChange((kind) => {
      if (kind === 'nodeGroups') this.watchInfrastructureKinds();
    });
    this.watchInfrastructureKinds();
  }

  private addInformer(kind: Kind, client: KubeClient, r: ResourcePath, filter?: (o: KubernetesObject) => boolean, optional = false): Informer {
    const informer = new Informer(client, r, { transform: transformFor(r.plural, r.group), ...this.opts.informer, ...(filter ? { filter } : {}) });
    informer.onChange((change) => {
      this.cached = undefined;
      for (const fn of this.listeners) fn(kind, change);
    });
    this.informers.push({ kind, informer, ...(optional ? { optional } : {}) });
    return informer;
  }

  private watchInfrastructureKinds(): void {
    for (const { kind, informer } of this.informers) {
      if (kind !== 'nodeGroups') continue;
      for (const o of informer.list()) {
        const gk = infrastructureGroupKind(o);
        if (!gk || this.infrastructureKinds.has(`${gk.group}/${gk.kind}`)) continue;
        this.infrastructureKinds.add(`${gk.group}/${gk.kind}`);
        void this.watchInfrastructureKind(gk.group, gk.kind).catch((err: unknown) => {
          // Resolved again when a group referencing it changes.
          this.infrastructureKinds.delete(`${gk.group}/${gk.kind}`);
          this.opts.informer?.onError?.(err);
        });
      }
    }
  }

  private async watchInfrastructureKind(group: string, kind: string): Promise<void> {
    const { management } = this.opts;
    const g = await management.get<{ preferredVersion?: { version?: string } }>(`/apis/${encodeURIComponent(group)}`);
    const version = g.preferredVersion?.version;
    if (!version) throw new Error(`infrastructure group ${group} has no preferred version`);
    const list = await management.get<{ resources?: Array<{ name: string; kind: string }> }>(`/apis/${encodeURIComponent(group)}/${encodeURIComponent(version)}`);
    const plural = list.resources?.find((r) => r.kind === kind && !r.name.includes('/'))?.name;
    if (!plural) throw new Error(`${kind} is not served in ${group}/${version}`);
    if (this.stopped) return;
    const ns = this.capiNamespace;
    this.addInformer('infrastructureTemplates', management, { group, version, plural, ...(ns ? { namespace: ns } : {}) }, undefined, true).start();
  }

  stop(): void {
    this.stopped = true;
    for (const { informer } of this.informers) informer.stop();
  }

  private required(): Informer[] {
    return this.informers.filter((i) => !i.optional).map((i) => i.informer);
  }

  async waitForSync(timeoutMs = 30_000): Promise<void> {
    await Promise.all(this.required().map((informer) => informer.waitForSync(timeoutMs)));
  }

  synced(): boolean {
    const required = this.required();
    return this.started && required.length > 0 && required.every((informer) => informer.hasSynced());
  }

  /** Synced, and every watch has shown life recently. The controller acts only when this holds. */
  healthy(now = Date.now()): boolean {
    const max = this.opts.maxStalenessMs ?? 180_000;
    return this.synced() && this.required().every((informer) => now - informer.lastFreshAt <= max);
  }

  /** Seconds since each informer was last known current (list, event or bookmark), by resource. */
  staleness(now = Date.now()): Array<{ resource: string; ageSeconds: number; synced: boolean }> {
    return this.informers.map(({ informer }) => ({
      resource: informer.name,
      ageSeconds: informer.lastFreshAt ? (now - informer.lastFreshAt) / 1000 : Number.POSITIVE_INFINITY,
      synced: informer.hasSynced(),
    }));
  }

  informerStats(): Array<{ resource: string } & Informer['stats']> {
    return this.informers.map(({ informer }) => ({ resource: informer.name, ...informer.stats }));
  }

  objects(): ClusterObjects {
    if (this.cached) return this.cached;
    const out: ClusterObjects = {
      pods: [], nodes: [], daemonSets: [], podDisruptionBudgets: [], persistentVolumes: [],
      persistentVolumeClaims: [], storageClasses: [], nodeGroups: [], machines: [], nodePools: [],
      capacityBuffers: [], namespaces: [], podTemplates: [], scales: this.scales, infrastructureTemplates: [],
    };
    for (const { kind, informer } of this.informers) {
      const items = informer.list();
      // Kinds served by several informers (nodeGroups) are concatenated into a new
      // array; never push into an informer's own cached array.
      const prev = out[kind] ?? [];
      out[kind] = (prev.length === 0 ? items : [...prev, ...items]) as never;
    }
    this.cached = out;
    return out;
  }

  /**
   * The scale subresources read for scalableRefs of kinds without an informer
   * (ScaleReader); they join objects() like a watched kind.
   */
  setScales(scales: ObservedScale[]): void {
    if (JSON.stringify(scales) === JSON.stringify(this.scales)) return;
    this.scales = scales;
    this.cached = undefined;
    for (const fn of this.listeners) fn('scales');
  }

  onChange(fn: (kind: Kind, change?: StateChange) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }
}
