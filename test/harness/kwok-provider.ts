/**
 * KwokProvider: the "cloud" of the tests that run the real Cluster API manager
 * (cluster-api.ts), the way Karpenter's kwok provider is Karpenter's. It implements
 * Cluster API's v1beta2 provider contracts (CRDs in crds/kwok-provider.yaml, labelled
 * `cluster.x-k8s.io/v1beta2: v1alpha1`) and its "instances" are kwok Nodes:
 *
 *   const provider = await KwokProvider.start({ kubeConfig: kc, namespace: ns, bootDelayMs: 500 });
 *   await provider.createCluster('test');           // KwokCluster + KwokControlPlane + Cluster
 *   ... KwokMachineTemplate + MachineDeployment (bootstrap.dataSecretName: KWOK_BOOTSTRAP_SECRET) ...
 *   await provider.stop();                          // removes the Nodes it made
 *
 * In a level-triggered pass (it also picks up objects that existed before) run when a
 * watched kind changes, every `intervalMs` while a boot delay runs, and on a slow
 * resync otherwise (reconcile-loop.ts); objects are handled concurrently (bounded):
 *  - KwokCluster (InfraCluster): spec.controlPlaneEndpoint = the kube-apiserver of the
 *    kubeconfig, status.initialization.provisioned = true.
 *  - KwokControlPlane (ControlPlane): the kube-apiserver itself is the control plane.
 *    Writes the `<cluster>-kubeconfig` Secret (the CAPI manager's ClusterCache reaches
 *    the "workload cluster", i.e. the same apiserver, through it), then
 *    status.initialization.controlPlaneInitialized = true. No spec.version: CAPI's
 *    MachineSet preflight checks then have nothing to compare and let scale-up through.
 *  - KwokConfig (BootstrapConfig, for Machines that use bootstrap.configRef): a
 *    placeholder data Secret, status.dataSecretName, initialization.dataSecretCreated.
 *  - KwokMachineTemplate (InfraMachineTemplate): status.capacity and status.nodeInfo
 *    from spec.template.spec (the "instance type" resolved, as real providers do from
 *    an instance type), for scale from zero.
 *  - KwokMachine (InfraMachine): once its owner Machine (set by CAPI) has bootstrap
 *    data, waits `bootDelayMs`, then creates the kwok Node `<name>` with providerID
 *    `kwok://<name>`, sets spec.providerID, status.addresses and
 *    status.initialization.provisioned. CAPI's own Machine controller then finds the
 *    Node by providerID and sets nodeRef. A finalizer makes deletion "terminate the
 *    instance" (delete the Node) first, like a cloud VM.
 *  - KwokMachinePool (InfraMachinePool): one instance (kwok Node) per replica of its
 *    owner MachinePool, each after `bootDelayMs`, spread over the MachinePool's
 *    failureDomains; spec.providerIDList, status.replicas, status.instances,
 *    status.initialization.provisioned (and status.ready, which v1.14.0 still reads). Scale-down drops the newest instances from the
 *    list; deleting their Nodes is CAPI's job (as with a cloud's scale set).
 *
 * Machine shape (KwokMachine spec, cloned from the template's spec.template.spec):
 *   capacity {cpu, memory, pods, ...} (default cpu 4, memory 16Gi, pods 110),
 *   architecture (amd64), operatingSystem (linux), nodeLabels (kubelet --node-labels),
 *   nodeTaints (kubelet --register-with-taints), outcome.
 * Failures: `outcome` (spec) or the annotation `kwok.headroom.dev/outcome` on the
 * KwokMachine or its Machine (a MachineDeployment's template annotations reach every
 * Machine): `Fail` marks the KwokMachine failed (condition Ready=False reason
 * ProvisioningFailed, plus the deprecated v1beta1 failureReason/failureMessage) and
 * never makes a Node; `NeverBoot` leaves it provisioning forever. Or call
 * `failMachine(name)` / `neverBoot(name)`.
 *
 * Nodes carry `kwok.x-k8s.io/node: fake` (kwok makes them Ready and runs their pods),
 * kubernetes.io/{hostname,os,arch}, topology.kubernetes.io/zone from the Machine's
 * failure domain, node.kubernetes.io/instance-type = the template name, the
 * nodeLabels, and kwok.headroom.dev/{managed,namespace,owner} for selection. Labels and
 * annotations CAPI itself syncs to Nodes (node-role.kubernetes.io/*,
 * node.cluster.x-k8s.io/*, cluster.x-k8s.io/machine ...) come from CAPI, not from here.
 */
import type { KubeConfig, V1Node, V1Taint } from '@kubernetes/client-node';
import { ARCH_LABEL, HOSTNAME_LABEL, OS_LABEL, ZONE_LABEL } from '../../src/api/capacity-annotations.js';
import { CAPI_GROUP, CLUSTER_NAME_LABEL } from '../../src/api/capi.js';
import { KubeRequestError, kubeRequest } from './kube-request.js';
import { createNode, deleteNode, listNodes, randomSuffix } from './kwok-nodes.js';
import { canonical, condition, patchStatusIfChanged } from './object-status.js';
import { ReconcileLoop } from './reconcile-loop.js';

export const KWOK_INFRA_GROUP = 'infrastructure.kwok.headroom.dev';
export const KWOK_CONTROLPLANE_GROUP = 'controlplane.kwok.headroom.dev';
export const KWOK_BOOTSTRAP_GROUP = 'bootstrap.kwok.headroom.dev';
export const KWOK_PROVIDER_VERSION = 'v1alpha1';
/** A bootstrap data Secret every Cluster made by createCluster has: for bootstrap.dataSecretName. */
export const KWOK_BOOTSTRAP_SECRET = 'kwok-bootstrap-data';
export const KWOK_MANAGED_LABEL = 'kwok.headroom.dev/managed';
export const KWOK_NAMESPACE_LABEL = 'kwok.headroom.dev/namespace';
/** `<kind>.<name>` of the KwokMachine or KwokMachinePool a Node is an instance of. */
export const KWOK_OWNER_LABEL = 'kwok.headroom.dev/owner';
export const KWOK_OUTCOME_ANNOTATION = 'kwok.headroom.dev/outcome';
export const INSTANCE_TYPE_LABEL = 'node.kubernetes.io/instance-type';
const KWOK_NODE_ANNOTATION = 'kwok.x-k8s.io/node';
const MACHINE_FINALIZER = 'kwok.headroom.dev/instance';
const CAPI_V1BETA2 = `${CAPI_GROUP}/v1beta2`;

export type KwokOutcome = 'Boot' | 'Fail' | 'NeverBoot';

export interface KwokProviderOptions {
  readonly kubeConfig: KubeConfig;
  /** Only act on objects in this namespace (strongly advised on a shared control plane). */
  readonly namespace?: string;
  /** Machine (or pool instance) to Node delay; default 1000 ms. */
  readonly bootDelayMs?: number;
  /** A KwokMachine's own boot delay, by its name (jittered boots); default: bootDelayMs for every machine. */
  readonly bootDelayFor?: (machineName: string) => number;
  /** Pass period while a boot delay runs; default 200 ms. */
  readonly intervalMs?: number;
  /** The kubeconfig written into `<cluster>-kubeconfig` Secrets; default: kubeConfig's. */
  readonly workloadKubeconfig?: string;
  /**
   * Workload clusters of their own, by Cluster name (fleet tests): a Cluster named here
   * gets that apiserver as its control plane endpoint and `<cluster>-kubeconfig`, and its
   * Machines' Nodes are made there. Other Clusters use kubeConfig's apiserver.
   */
  readonly workloads?: Readonly<Record<string, KubeConfig>>;
  readonly now?: () => number;
}

const DEFAULT_CAPACITY: Readonly<Record<string, string>> = { cpu: '4', memory: '16Gi', pods: '110' };

interface Meta {
  name: string;
  namespace?: string;
  uid?: string;
  generation?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  deletionTimestamp?: string;
  creationTimestamp?: string;
  ownerReferences?: Array<{ apiVersion: string; kind: string; name: string; uid: string; controller?: boolean }>;
}
interface Obj {
  apiVersion?: string;
  kind?: string;
  metadata: Meta;
  spec?: Record<string, unknown>;
  status?: Record<string, unknown>;
}
interface List<T> {
  items: T[];
}
interface MachineShape {
  capacity?: Record<string, string>;
  architecture?: string;
  operatingSystem?: string;
  nodeLabels?: Record<string, string>;
  nodeTaints?: V1Taint[];
  outcome?: KwokOutcome;
}
interface PoolInstance {
  instanceName: string;
  providerID: string;
  zone?: string;
}

/** Label selector for the Nodes a provider made, optionally of one namespace. */
export function kwokNodeSelector(opts: { namespace?: string } = {}): string {
  return [`${KWOK_MANAGED_LABEL}=true`, ...(opts.namespace ? [`${KWOK_NAMESPACE_LABEL}=${opts.namespace}`] : [])].join(',');
}

/** status.capacity / status.nodeInfo of a KwokMachineTemplate, from its spec.template.spec. */
export function templateStatus(shape: MachineShape): { capacity: Record<string, string>; nodeInfo: { architecture: string; operatingSystem: string } } {
  return {
    capacity: { ...DEFAULT_CAPACITY, ...shape.capacity },
    nodeInfo: { architecture: shape.architecture ?? 'amd64', operatingSystem: shape.operatingSystem ?? 'linux' },
  };
}

export class KwokProvider extends ReconcileLoop {
  private readonly ns: string | undefined;
  private readonly bootDelayMs: number;
  private readonly bootDelayFor: ((machineName: string) => number) | undefined;
  private readonly workloadKubeconfig: string;
  private readonly workloads: Readonly<Record<string, KubeConfig>>;
  private readonly now: () => number;
  /** KwokMachine uid -> when it became bootable (owner Machine with bootstrap data). */
  private readonly bootableSince = new Map<string, number>();
  /** KwokMachinePool uid -> due times of instances not yet booted. */
  private readonly pendingPool = new Map<string, number[]>();
  private readonly outcomes = new Map<string, KwokOutcome>();

  private constructor(opts: KwokProviderOptions) {
    super(opts.kubeConfig, 'kwok-provider', opts.intervalMs ?? 200);
    this.ns = opts.namespace;
    this.bootDelayMs = opts.bootDelayMs ?? 1000;
    this.bootDelayFor = opts.bootDelayFor;
    this.workloadKubeconfig = opts.workloadKubeconfig ?? opts.kubeConfig.exportConfig();
    this.workloads = opts.workloads ?? {};
    this.now = opts.now ?? Date.now;
  }

  /** Starts the loop (the first pass has completed when this resolves). */
  static async start(opts: KwokProviderOptions): Promise<KwokProvider> {
    const p = new KwokProvider(opts);
    await p.startLoop();
    return p;
  }

  /** The KwokMachine `name` (in this provider's namespace) fails instead of booting. */
  failMachine(name: string): void {
    this.outcomes.set(name, 'Fail');
    this.changed();
  }

  /** The KwokMachine `name` never boots. */
  neverBoot(name: string): void {
    this.outcomes.set(name, 'NeverBoot');
    this.changed();
  }

  /**
   * A Cluster with a KwokCluster and a KwokControlPlane, and the bootstrap data Secret
   * KWOK_BOOTSTRAP_SECRET, in `namespace` (default: the provider's).
   */
  async createCluster(name: string, namespace = this.ns): Promise<void> {
    if (!namespace) throw new Error('createCluster: no namespace');
    const infra = `/apis/${KWOK_INFRA_GROUP}/${KWOK_PROVIDER_VERSION}/namespaces/${namespace}/kwokclusters`;
    const cp = `/apis/${KWOK_CONTROLPLANE_GROUP}/${KWOK_PROVIDER_VERSION}/namespaces/${namespace}/kwokcontrolplanes`;
    await this.createIgnoringConflict(infra, { apiVersion: `${KWOK_INFRA_GROUP}/${KWOK_PROVIDER_VERSION}`, kind: 'KwokCluster', metadata: { name, namespace }, spec: {} });
    await this.createIgnoringConflict(cp, { apiVersion: `${KWOK_CONTROLPLANE_GROUP}/${KWOK_PROVIDER_VERSION}`, kind: 'KwokControlPlane', metadata: { name, namespace }, spec: {} });
    await this.createIgnoringConflict(`/api/v1/namespaces/${namespace}/secrets`, {
      apiVersion: 'v1', kind: 'Secret', type: 'cluster.x-k8s.io/secret',
      metadata: { name: KWOK_BOOTSTRAP_SECRET, namespace, labels: { [CLUSTER_NAME_LABEL]: name } },
      stringData: { value: '#!/bin/sh\n# kwok nodes need no bootstrap data\n', format: 'cloud-config' },
    });
    await this.createIgnoringConflict(`/apis/${CAPI_V1BETA2}/namespaces/${namespace}/clusters`, {
      apiVersion: CAPI_V1BETA2, kind: 'Cluster', metadata: { name, namespace },
      spec: {
        infrastructureRef: { apiGroup: KWOK_INFRA_GROUP, kind: 'KwokCluster', name },
        controlPlaneRef: { apiGroup: KWOK_CONTROLPLANE_GROUP, kind: 'KwokControlPlane', name },
      },
    });
  }

  // ---- one pass ------------------------------------------------------------------

  protected async reconcile(): Promise<void> {
    const [clusters, controlPlanes, configs, templates, kwokMachines, pools, machines, machinePools, nodes] = await Promise.all([
      this.list(KWOK_INFRA_GROUP, 'kwokclusters'),
      this.list(KWOK_CONTROLPLANE_GROUP, 'kwokcontrolplanes'),
      this.list(KWOK_BOOTSTRAP_GROUP, 'kwokconfigs'),
      this.list(KWOK_INFRA_GROUP, 'kwokmachinetemplates'),
      this.list(KWOK_INFRA_GROUP, 'kwokmachines'),
      this.list(KWOK_INFRA_GROUP, 'kwokmachinepools'),
      this.listCapi('machines'),
      this.listCapi('machinepools'),
      this.listNodes(),
    ]);
    const nodeByName = new Map(nodes.map((n) => [n.metadata!.name!, n]));
    const byUid = new Map([...machines, ...machinePools].map((o) => [o.metadata.uid, o]));
    await this.runSteps([
      ...clusters.map((c) => () => this.reconcileInfraCluster(c)),
      ...controlPlanes.map((c) => () => this.reconcileControlPlane(c)),
      ...configs.map((c) => () => this.reconcileBootstrapConfig(c)),
      ...templates.map((t) => () => this.reconcileTemplate(t)),
      ...kwokMachines.map((m) => () => this.reconcileMachine(m, ownerOf(m, 'Machine', byUid), nodeByName)),
      ...pools.map((p) => () => this.reconcilePool(p, ownerOf(p, 'MachinePool', byUid), nodes)),
    ]);
  }

  protected watchedCollections(): string[] {
    return [
      ...['kwokclusters', 'kwokmachinetemplates', 'kwokmachines', 'kwokmachinepools'].map((plural) => this.collection(KWOK_INFRA_GROUP, KWOK_PROVIDER_VERSION, plural)),
      this.collection(KWOK_CONTROLPLANE_GROUP, KWOK_PROVIDER_VERSION, 'kwokcontrolplanes'),
      this.collection(KWOK_BOOTSTRAP_GROUP, KWOK_PROVIDER_VERSION, 'kwokconfigs'),
      this.collection(CAPI_GROUP, 'v1beta2', 'machines'),
      this.collection(CAPI_GROUP, 'v1beta2', 'machinepools'),
      `/api/v1/nodes?labelSelector=${encodeURIComponent(this.nodeSelector())}`,
    ];
  }

  /** The apiserver where a Cluster's Nodes live. */
  private kcFor(cluster: string | undefined): KubeConfig {
    return (cluster !== undefined ? this.workloads[cluster] : undefined) ?? this.kc;
  }

  protected override async listNodes(): Promise<V1Node[]> {
    const own = await super.listNodes();
    const more = await Promise.all(Object.values(this.workloads).map((kc) => listNodes(kc, this.nodeSelector())));
    return [...own, ...more.flat()];
  }

  private endpoint(cluster?: string): { host: string; port: number } {
    const u = new URL(this.kcFor(cluster).getCurrentCluster()!.server);
    return { host: u.hostname, port: Number(u.port || 443) };
  }

  private async reconcileInfraCluster(c: Obj): Promise<void> {
    if (c.metadata.deletionTimestamp) return;
    if (!(c.spec?.controlPlaneEndpoint as { host?: string } | undefined)?.host) {
      await this.patch(c, { spec: { controlPlaneEndpoint: this.endpoint(c.metadata.labels?.[CLUSTER_NAME_LABEL] ?? c.metadata.name) } });
    }
    await this.patchStatusIfChanged(c, { initialization: { provisioned: true } });
  }

  private async reconcileControlPlane(c: Obj): Promise<void> {
    if (c.metadata.deletionTimestamp) return;
    // CAPI's Cluster controller labels (and owns) the objects its Cluster references.
    const cluster = c.metadata.labels?.[CLUSTER_NAME_LABEL];
    if (!cluster) return;
    await this.createIgnoringConflict(`/api/v1/namespaces/${c.metadata.namespace}/secrets`, {
      apiVersion: 'v1', kind: 'Secret', type: 'cluster.x-k8s.io/secret',
      metadata: { name: `${cluster}-kubeconfig`, namespace: c.metadata.namespace, labels: { [CLUSTER_NAME_LABEL]: cluster } },
      stringData: { value: this.workloads[cluster] ? this.workloads[cluster].exportConfig() : this.workloadKubeconfig },
    });
    await this.patchStatusIfChanged(c, { initialization: { controlPlaneInitialized: true } });
  }

  private async reconcileBootstrapConfig(c: Obj): Promise<void> {
    if (c.metadata.deletionTimestamp) return;
    const name = c.metadata.name;
    await this.createIgnoringConflict(`/api/v1/namespaces/${c.metadata.namespace}/secrets`, {
      apiVersion: 'v1', kind: 'Secret', type: 'cluster.x-k8s.io/secret',
      metadata: {
        name, namespace: c.metadata.namespace,
        labels: c.metadata.labels?.[CLUSTER_NAME_LABEL] ? { [CLUSTER_NAME_LABEL]: c.metadata.labels[CLUSTER_NAME_LABEL] } : {},
        ownerReferences: [{ apiVersion: c.apiVersion!, kind: c.kind!, name, uid: c.metadata.uid!, controller: true }],
      },
      stringData: { value: '#!/bin/sh\n', format: 'cloud-config' },
    });
    await this.patchStatusIfChanged(c, { dataSecretName: name, initialization: { dataSecretCreated: true } });
  }

  private async reconcileTemplate(t: Obj): Promise<void> {
    const shape = ((t.spec?.template as { spec?: MachineShape } | undefined)?.spec ?? {});
    await this.patchStatusIfChanged(t, templateStatus(shape));
  }

  private outcomeOf(m: Obj, machine: Obj): KwokOutcome {
    const annotated = m.metadata.annotations?.[KWOK_OUTCOME_ANNOTATION] ?? machine.metadata.annotations?.[KWOK_OUTCOME_ANNOTATION];
    const v = this.outcomes.get(m.metadata.name) ?? annotated ?? (m.spec as MachineShape | undefined)?.outcome ?? 'Boot';
    if (v !== 'Boot' && v !== 'Fail' && v !== 'NeverBoot') throw new Error(`KwokMachine ${m.metadata.name}: outcome must be Boot, Fail or NeverBoot, got ${v}`);
    return v;
  }

  private async reconcileMachine(m: Obj, machine: Obj | undefined, nodeByName: Map<string, V1Node>): Promise<void> {
    const name = m.metadata.name;
    if (m.metadata.deletionTimestamp) {
      // "Terminate the instance": the Node goes with it.
      if (nodeByName.has(name)) await deleteNode(this.kcFor(m.metadata.labels?.[CLUSTER_NAME_LABEL]), name);
      if (m.metadata.finalizers?.includes(MACHINE_FINALIZER)) {
        await this.patch(m, { metadata: { finalizers: m.metadata.finalizers.filter((f) => f !== MACHINE_FINALIZER) } });
      }
      this.bootableSince.delete(m.metadata.uid!);
      return;
    }
    // The contract: wait for the owner Machine, and for its bootstrap data.
    if (!machine) return;
    const bootstrap = (machine.spec?.bootstrap ?? {}) as { dataSecretName?: string };
    if (!bootstrap.dataSecretName) return;
    if (!m.metadata.finalizers?.includes(MACHINE_FINALIZER)) {
      await this.patch(m, { metadata: { finalizers: [...(m.metadata.finalizers ?? []), MACHINE_FINALIZER] } });
      return;
    }
    const node = nodeByName.get(name);
    if (!node) {
      const since = this.bootableSince.get(m.metadata.uid!) ?? this.now();
      this.bootableSince.set(m.metadata.uid!, since);
      if (this.now() - since < (this.bootDelayFor?.(name) ?? this.bootDelayMs)) {
        this.pollAgain();
        return;
      }
      const outcome = this.outcomeOf(m, machine);
      if (outcome === 'NeverBoot') return;
      if (outcome === 'Fail') {
        await this.patchStatusIfChanged(m, {
          initialization: { provisioned: false },
          conditions: [condition(m, 'Ready', false, 'ProvisioningFailed', 'the kwok provider was told to fail this machine', this.now())],
          failureReason: 'CreateError',
          failureMessage: 'the kwok provider was told to fail this machine',
        });
        return;
      }
      const shape = (m.spec ?? {}) as MachineShape;
      const zone = (machine.spec as { failureDomain?: string } | undefined)?.failureDomain;
      const instanceType = m.metadata.annotations?.['cluster.x-k8s.io/cloned-from-name'];
      await this.createNode(name, m.metadata.namespace!, `KwokMachine.${name}`, shape, zone, instanceType, (machine.spec as { clusterName?: string } | undefined)?.clusterName);
      return; // spec and status next pass, once the Node is listed
    }
    const providerID = node.spec?.providerID ?? `kwok://${name}`;
    if (m.spec?.providerID !== providerID) {
      await this.patch(m, { spec: { providerID } });
      return;
    }
    await this.patchStatusIfChanged(m, {
      initialization: { provisioned: true },
      addresses: (node.status?.addresses ?? []).map((a) => ({ type: a.type, address: a.address })),
      conditions: [condition(m, 'Ready', true, 'Provisioned', '', this.now())],
    });
  }

  private async reconcilePool(p: Obj, mp: Obj | undefined, nodes: V1Node[]): Promise<void> {
    if (p.metadata.deletionTimestamp || !mp) return;
    const uid = p.metadata.uid!;
    const instances = [...(((p.status?.instances ?? []) as PoolInstance[]))];
    const desired = typeof mp.spec?.replicas === 'number' ? mp.spec.replicas : 1;
    const pending = this.pendingPool.get(uid) ?? [];
    while (instances.length + pending.length < desired) pending.push(this.now() + this.bootDelayMs);
    while (instances.length + pending.length > desired && pending.length > 0) pending.pop();
    // Scale-down: the newest instances go (a cloud scale set's default policy).
    if (instances.length > desired) instances.splice(desired);
    const due = pending.filter((t) => t <= this.now());
    const later = pending.filter((t) => t > this.now());
    this.pendingPool.set(uid, later);
    if (later.length > 0) this.pollAgain();
    const shape = (p.spec ?? {}) as MachineShape;
    const domains = ((mp.spec?.failureDomains ?? []) as unknown[]).filter((d): d is string => typeof d === 'string');
    const outcome = (p.metadata.annotations?.[KWOK_OUTCOME_ANNOTATION] ?? shape.outcome ?? 'Boot') as KwokOutcome;
    if (outcome === 'Boot') {
      // Zones are chosen one by one (each counts the ones before), the Nodes made together.
      const booting: PoolInstance[] = [];
      for (let i = 0; i < due.length; i++) {
        const zone = leastUsed(domains, [...instances, ...booting]);
        booting.push({ instanceName: `${p.metadata.name.slice(0, 56)}-${randomSuffix()}`, providerID: '', ...(zone ? { zone } : {}) });
      }
      const made = await Promise.all(booting.map((b) => this.createNode(b.instanceName, p.metadata.namespace!, `KwokMachinePool.${p.metadata.name}`, shape, b.zone, p.metadata.name, (mp.spec as { clusterName?: string } | undefined)?.clusterName)));
      made.forEach((node, i) => instances.push({ ...booting[i]!, providerID: node.spec?.providerID ?? `kwok://${booting[i]!.instanceName}` }));
    }
    const nodeNames = new Set(nodes.map((n) => n.metadata!.name));
    const providerIDList = instances.map((i) => i.providerID);
    if (canonical(p.spec?.providerIDList ?? []) !== canonical(providerIDList)) await this.patch(p, { spec: { providerIDList } });
    await this.patchStatusIfChanged(p, {
      instances,
      replicas: instances.length,
      readyReplicas: instances.filter((i) => nodeNames.has(i.instanceName)).length,
      initialization: { provisioned: true },
      // CAPI v1.14.0's MachinePool controller still reads the v1beta1 contract's
      // status.ready (controllers/external.IsReady), not initialization.provisioned as
      // the book's v1beta2 InfraMachinePool contract says: report both.
      ready: true,
    });
  }

  // ---- Nodes -------------------------------------------------------------------

  private createNode(name: string, namespace: string, owner: string, shape: MachineShape, zone: string | undefined, instanceType: string | undefined, cluster?: string): Promise<V1Node> {
    const capacity = { ...DEFAULT_CAPACITY, ...shape.capacity };
    const labels: Record<string, string> = {
      ...shape.nodeLabels,
      [HOSTNAME_LABEL]: name,
      [OS_LABEL]: shape.operatingSystem ?? 'linux',
      [ARCH_LABEL]: shape.architecture ?? 'amd64',
      type: 'kwok',
      [KWOK_MANAGED_LABEL]: 'true',
      [KWOK_NAMESPACE_LABEL]: namespace,
      [KWOK_OWNER_LABEL]: owner.slice(0, 63).replace(/[^A-Za-z0-9]+$/, ''),
      ...(zone ? { [ZONE_LABEL]: zone } : {}),
      ...(instanceType ? { [INSTANCE_TYPE_LABEL]: instanceType.slice(0, 63) } : {}),
    };
    const body: V1Node = {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name, labels, annotations: { [KWOK_NODE_ANNOTATION]: 'fake' } },
      spec: { providerID: `kwok://${name}`, ...(shape.nodeTaints?.length ? { taints: shape.nodeTaints } : {}) },
      status: { capacity, allocatable: capacity },
    };
    return createNode(this.kcFor(cluster), body);
  }

  protected nodeSelector(): string {
    return kwokNodeSelector(this.ns ? { namespace: this.ns } : {});
  }

  // ---- objects -------------------------------------------------------------------

  private collection(group: string, version: string, plural: string): string {
    return this.ns ? `/apis/${group}/${version}/namespaces/${this.ns}/${plural}` : `/apis/${group}/${version}/${plural}`;
  }

  private async list(group: string, plural: string): Promise<Obj[]> {
    return (await kubeRequest<List<Obj>>(this.kc, 'GET', this.collection(group, KWOK_PROVIDER_VERSION, plural))).items;
  }

  private async listCapi(plural: string): Promise<Obj[]> {
    return (await kubeRequest<List<Obj>>(this.kc, 'GET', this.collection(CAPI_GROUP, 'v1beta2', plural))).items;
  }

  private objectPath(o: Obj): string {
    const [group, version] = o.apiVersion!.split('/');
    return `/apis/${group}/${version}/namespaces/${o.metadata.namespace}/${o.kind!.toLowerCase()}s/${o.metadata.name}`;
  }

  private async createIgnoringConflict(collection: string, body: object): Promise<void> {
    try {
      await kubeRequest(this.kc, 'POST', collection, body);
    } catch (err) {
      if (!(err instanceof KubeRequestError && err.code === 409)) throw err;
    }
  }

  private async patch(o: Obj, body: object): Promise<void> {
    try {
      await kubeRequest(this.kc, 'PATCH', this.objectPath(o), body);
    } catch (err) {
      if (!(err instanceof KubeRequestError && err.code === 404)) throw err;
    }
  }

  private patchStatusIfChanged(o: Obj, status: Record<string, unknown>): Promise<void> {
    return patchStatusIfChanged(this.kc, this.objectPath(o), o, status);
  }
}

// ---- pure helpers -----------------------------------------------------------------

function ownerOf(o: Obj, kind: string, byUid: Map<string | undefined, Obj>): Obj | undefined {
  const ref = (o.metadata.ownerReferences ?? []).find((r) => r.kind === kind && r.apiVersion.startsWith(`${CAPI_GROUP}/`));
  return ref ? byUid.get(ref.uid) : undefined;
}

function leastUsed(domains: string[], instances: PoolInstance[]): string | undefined {
  if (domains.length === 0) return undefined;
  const used = (d: string) => instances.filter((i) => i.zone === d).length;
  return [...domains].sort((a, b) => used(a) - used(b) || a.localeCompare(b))[0];
}
