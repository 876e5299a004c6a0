import type { KubernetesObject } from '@kubernetes/client-node';
import type { KubeClient } from '../controller/kube-client.js';
import { CAPI_GROUP, type CapiVersion } from '../api/capi.js';
import {
  type GroupDiscoverySpec, discoverCapiVersion, discoverResourceVersion,
  discoveryFilter, discoveryNamespace,
} from './discovery.js';
import { Informer, type InformerOptions, type ResourcePath } from './informer.js';
import type { ClusterObjects } from './objects.js';
import type { ClusterStateSource, StateChange } from './state.js';
import { NODEPOOL_GROUP, NODEPOOL_PLURAL, NODEPOOL_VERSION } from '../api/nodepool.js';
import { CAPACITY_BUFFER_GROUP, CAPACITY_BUFFER_PLURAL, CAPACITY_BUFFER_VERSIONS } from '../api/capacity-buffer.js';
import { PROVISIONING_REQUEST_PLURAL, PROVISIONING_REQUEST_VERSIONS } from '../api/provisioning-request.js';
import type { ObservedScale } from './objects.js';

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
}

type Kind = keyof ClusterObjects;

const NODE_GROUP_PLURALS = ['machinedeployments', 'machinesets', 'machinepools'] as const;

export class ClusterCache implements ClusterStateSource {
  private readonly informers: Array<{ kind: Kind; informer: Informer }> = [];
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

    const add = (kind: Kind, client: KubeClient, r: ResourcePath, filter?: (o: KubernetesObject) => boolean) => {
      const informer = new Informer(client, r, { ...this.opts.informer, ...(filter ? { filter } : {}) });
      informer.onChange((change) => {
        this.cached = undefined;
        for (const fn of this.listeners) fn(kind, change);
      });
      this.informers.push({ kind, informer });
    };
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
    for (const plural of NODE_GROUP_PLURALS) {
      add('nodeGroups', management, { group: CAPI_GROUP, version: this.capiVersion, plural, ...(capiNs ? { namespace: capiNs } : {}) }, groupFilter);
    }
    add('machines', management, { group: CAPI_GROUP, version: this.capiVersion, plural: 'machines', ...(capiNs ? { namespace: capiNs } : {}) }, machineFilter);
    const nodePoolVersion = await discoverResourceVersion(management, NODEPOOL_GROUP, NODEPOOL_PLURAL, [NODEPOOL_VERSION]);
    if (nodePoolVersion) add('nodePools', management, { group: NODEPOOL_GROUP, version: nodePoolVersion, plural: NODEPOOL_PLURAL });
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
  }

  stop(): void {
    for (const { informer } of this.informers) informer.stop();
  }

  async waitForSync(timeoutMs = 30_000): Promise<void> {
    await Promise.all(this.informers.map(({ informer }) => informer.waitForSync(timeoutMs)));
  }

  synced(): boolean {
    return this.started && this.informers.length > 0 && this.informers.every(({ informer }) => informer.hasSynced());
  }

  /** Synced, and every watch has shown life recently. The controller acts only when this holds. */
  healthy(now = Date.now()): boolean {
    const max = this.opts.maxStalenessMs ?? 180_000;
    return this.synced() && this.informers.every(({ informer }) => now - informer.lastFreshAt <= max);
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
      capacityBuffers: [], namespaces: [], podTemplates: [], scales: this.scales,
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
