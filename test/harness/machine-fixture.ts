/**
 * MachineFixture: plays Cluster API's controllers, the infrastructure provider and the
 * kubelet against the test control plane, so CAPI objects turn into (kwok) Nodes.
 *
 *   const fixture = await MachineFixture.start({ kubeConfig: kc, namespace: ns, bootDelayMs: 500 });
 *   ... create / scale MachineDeployments, MachineSets, MachinePools, standalone Machines ...
 *   await waitForReadyNodes(kc, fixtureNodeSelector({ namespace: ns, kind: 'MachineDeployment', name: 'md' }), 3);
 *   await fixture.stop();   // also drains and deletes the Nodes it made (keepNodes: true to keep)
 *
 * What it does, in a level-triggered pass (so it also picks up objects that existed
 * before it started) run when a watched kind changes, every `intervalMs` while a boot
 * delay or a drain is under way, and on a slow resync otherwise (reconcile-loop.ts);
 * within a pass, objects of a kind are handled concurrently (bounded), so N Machines
 * due together boot together:
 *  - MachineDeployment (cluster.x-k8s.io/v1beta2): keeps one MachineSet `<md>-<hash>`
 *    (controller ownerRef to the MD, labels cluster-name / deployment-name /
 *    machine-template-hash, the MD's annotations) with the MD's replicas. Unset
 *    replicas = the min-size annotation, else 1. Paused MDs are left alone.
 *  - MachineSet: creates Machines (`<ms>-xxxxx`, controller ownerRef, the template's
 *    labels + set-name / deployment-name / cluster-name) or deletes them. On scale-down
 *    it deletes Machines annotated `cluster.x-k8s.io/delete-machine` first, then the
 *    newest (spec.deletion.order: Oldest picks the oldest instead).
 *  - Machine (owned or standalone): `bootDelayMs` after it first sees it (a number, or
 *    a function drawn once per Machine for boots that vary, e.g. 45-60 s; unless
 *    `machineOutcome` says it never boots or fails), creates Node
 *    `<machine name>` and sets spec.providerID `kwok://<node>`, status.nodeRef,
 *    phase Running, initialization, addresses and Ready/Available conditions that
 *    follow the Node's Ready condition.
 *  - MachinePool: keeps `spec.replicas` Nodes `<mp>-xxxxx` (no Machine objects, like
 *    most providers), each after `bootDelayMs`, spread over spec.failureDomains; fills
 *    spec.providerIDList and status.nodeRefs; scale-down removes the newest Nodes.
 *  - status.replicas / readyReplicas / availableReplicas / upToDateReplicas / selector /
 *    phase of MDs, MSs and MPs follow the Machines and Nodes.
 *  - A Node whose Machine (or MachinePool) is gone, or a MachinePool Node chosen for
 *    scale-down, is cordoned and drained through the Eviction API (so PDBs hold it,
 *    up to `drainTimeoutMs`; DaemonSet pods are left), then deleted.
 *
 * The Nodes: annotation `kwok.x-k8s.io/node: fake` (kwok makes them Ready and runs
 * their pods), CAPI's node annotations (cluster.x-k8s.io/machine, cluster-namespace,
 * cluster-name, owner-kind, owner-name), labels = the Machine's template labels (minus
 * cluster.x-k8s.io/* bookkeeping) + the capacity.cluster-autoscaler.kubernetes.io/labels
 * annotation + kubernetes.io/{hostname,os,arch} + topology.kubernetes.io/zone from the
 * failure domain + fixture.headroom.dev/{managed,namespace,group-kind,group-name};
 * taints = spec.template.spec.taints + the taints annotation; capacity = allocatable =
 * the capacity annotations of the node group (or of a standalone Machine), defaulting
 * to `defaultCapacity` (cpu 4, memory 16Gi, pods 110) for what they do not declare.
 */
import { createHash } from 'node:crypto';
import type { KubeConfig, V1Node, V1Pod, V1Taint } from '@kubernetes/client-node';
import {
  ARCH_LABEL, HOSTNAME_LABEL, MIN_SIZE_ANNOTATION, OS_LABEL, ZONE_LABEL, parseCapacityAnnotations,
} from '../../src/api/capacity-annotations.js';
import {
  CAPI_GROUP, CLUSTER_NAME_ANNOTATION, CLUSTER_NAME_LABEL, DELETE_MACHINE_ANNOTATION, DEPLOYMENT_NAME_LABEL,
  MACHINE_ANNOTATION, MACHINE_NAMESPACE_ANNOTATION, OWNER_KIND_ANNOTATION, OWNER_NAME_ANNOTATION,
  PAUSED_ANNOTATION, SET_NAME_LABEL, type NodeGroupView,
} from '../../src/api/capi.js';
import { KubeRequestError, kubeRequest } from './kube-request.js';
import { createNode, deleteNode, randomSuffix } from './kwok-nodes.js';
import { canonical, condition, patchStatusIfChanged } from './object-status.js';
import { ReconcileLoop } from './reconcile-loop.js';
import { isNodeReady } from './wait.js';
import type { UnstructuredObject } from '../../src/api/unstructured-object.js';

export const FIXTURE_MANAGED_LABEL = 'fixture.headroom.dev/managed';
export const FIXTURE_NAMESPACE_LABEL = 'fixture.headroom.dev/namespace';
export const FIXTURE_GROUP_KIND_LABEL = 'fixture.headroom.dev/group-kind';
export const FIXTURE_GROUP_NAME_LABEL = 'fixture.headroom.dev/group-name';
export const KWOK_NODE_ANNOTATION = 'kwok.x-k8s.io/node';
const TEMPLATE_HASH_LABEL = 'machine-template-hash';
const API_VERSION = `${CAPI_GROUP}/v1beta2`;

export interface MachineFixtureOptions {
  readonly kubeConfig: KubeConfig;
  /** Only act on objects in this namespace (strongly advised on the shared control plane). */
  readonly namespace?: string;
  /**
   * Machine (or MachinePool instance) to Node delay; default 1000 ms. A function is
   * called once per Machine (or instance), when first seen, so boots can vary as a
   * cloud's do (a seeded draw keeps a test reproducible).
   */
  readonly bootDelayMs?: number | ((machine: { name: string; labels: Record<string, string> }) => number);
  /** Pass period while a boot delay or drain is under way; default 200 ms. */
  readonly intervalMs?: number;
  /** How long a PDB may block a drain before pods are deleted anyway; default 30 s. */
  readonly drainTimeoutMs?: number;
  /** Node capacity for resources the capacity annotations do not declare. */
  readonly defaultCapacity?: Readonly<Record<string, string>>;
  /** Clock, for the boot delay and drain timeout. */
  readonly now?: () => number;
  /**
   * What becomes of a Machine (default `boot`): `never` leaves it Provisioning without a
   * Node (a VM that never joins); `fail` marks it phase Failed with failureReason
   * InsufficientCapacity in status.deprecated.v1beta1 (spot capacity refused).
   */
  readonly machineOutcome?: (machine: { name: string; labels: Record<string, string> }) => MachineOutcome;
  /**
   * Taints a Machine's Node is born with beyond its group's (a node that comes up
   * unusable: a CNI that never starts, Karpenter's chaos taint), invisible in the group.
   */
  readonly bootTaints?: (machine: { name: string; labels: Record<string, string> }) => V1Taint[];
}

export type MachineOutcome = 'boot' | 'never' | 'fail';

/** Label selector for the Nodes a fixture made, optionally of one node group. */
export function fixtureNodeSelector(opts: { namespace?: string; kind?: string; name?: string } = {}): string {
  const parts = [`${FIXTURE_MANAGED_LABEL}=true`];
  if (opts.namespace) parts.push(`${FIXTURE_NAMESPACE_LABEL}=${opts.namespace}`);
  if (opts.kind) parts.push(`${FIXTURE_GROUP_KIND_LABEL}=${opts.kind}`);
  if (opts.name) parts.push(`${FIXTURE_GROUP_NAME_LABEL}=${opts.name}`);
  return parts.join(',');
}

type Obj = UnstructuredObject & { metadata: NonNullable<UnstructuredObject['metadata']> };
interface List<T> {
  items: T[];
}
interface GroupRef {
  kind: string;
  name: string;
  /** The object whose annotations describe the node shape. */
  obj: Obj;
}

const DEFAULT_CAPACITY = { cpu: '4', memory: '16Gi', pods: '110' };

export class MachineFixture extends ReconcileLoop {
  private readonly ns: string | undefined;
  private readonly bootDelay: (machine: { name: string; labels: Record<string, string> }) => number;
  private readonly drainTimeoutMs: number;
  private readonly defaultCapacity: Readonly<Record<string, string>>;
  private readonly now: () => number;
  private readonly machineOutcome: NonNullable<MachineFixtureOptions['machineOutcome']>;
  private readonly bootTaints: MachineFixtureOptions['bootTaints'];
  /** Machine uid -> when first seen without a Node, and its boot delay. */
  private readonly firstSeen = new Map<string, { at: number; delayMs: number }>();
  /** MachinePool uid -> due times of instances not yet booted. */
  private readonly pendingPool = new Map<string, number[]>();
  /** Node name -> when draining started. */
  private readonly draining = new Map<string, number>();

  private constructor(opts: MachineFixtureOptions) {
    super(opts.kubeConfig, 'machine-fixture', opts.intervalMs ?? 200);
    this.ns = opts.namespace;
    const delay = opts.bootDelayMs ?? 1000;
    this.bootDelay = typeof delay === 'number' ? () => delay : delay;
    this.machineOutcome = opts.machineOutcome ?? (() => 'boot');
    this.bootTaints = opts.bootTaints;
    this.drainTimeoutMs = opts.drainTimeoutMs ?? 30_000;
    this.defaultCapacity = opts.defaultCapacity ?? DEFAULT_CAPACITY;
    this.now = opts.now ?? Date.now;
  }

  /** Starts the reconcile loop (the first pass has completed when this resolves). */
  static async start(opts: MachineFixtureOptions): Promise<MachineFixture> {
    const f = new MachineFixture(opts);
    await f.startLoop();
    return f;
  }

  // ---- one pass ------------------------------------------------------------------

  protected async reconcile(): Promise<void> {
    const [mds, mss, mps, machines, nodes] = await Promise.all([
      this.listCapi('machinedeployments'),
      this.listCapi('machinesets'),
      this.listCapi('machinepools'),
      this.listCapi('machines'),
      this.listNodes(),
    ]);
    const nodeByName = new Map(nodes.map((n) => [n.metadata!.name!, n]));
    // Kind by kind, in this order; the objects of one kind concurrently. Each object on
    // its own: one bad object must not stall the others.
    await this.runSteps(mds.map((md) => () => this.reconcileDeployment(md, mss)));
    await this.runSteps(mss.map((ms) => () => this.reconcileMachineSet(ms, machines)));
    await this.runSteps(machines.map((m) => () => this.reconcileMachine(m, nodeByName, mss, mds)));
    await this.runSteps(mps.map((mp) => () => this.reconcilePool(mp, nodes)));
    await this.runSteps([() => this.collectOrphans(nodes, machines, mps)]);
    await this.drain();
    await this.runSteps([() => this.updateGroupStatus(mds, mss, machines, nodeByName)]);
  }

  protected watchedCollections(): string[] {
    return [
      ...['machinedeployments', 'machinesets', 'machinepools', 'machines'].map((plural) => this.capiPath(plural, this.ns)),
      `/api/v1/nodes?labelSelector=${encodeURIComponent(this.nodeSelector())}`,
    ];
  }

  private async reconcileDeployment(md: Obj, mss: Obj[]): Promise<void> {
    if (md.metadata.deletionTimestamp || isPaused(md)) return;
    const desired = desiredReplicas(md);
    const owned = mss.filter((ms) => isControlledBy(ms, md) && !ms.metadata.deletionTimestamp);
    if (owned.length > 0) {
      for (const ms of owned) {
        if (ms.spec?.replicas !== desired) await this.patch(ms, { spec: { replicas: desired } });
      }
      return;
    }
    const template = (md.spec?.template ?? {}) as { metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> }; spec?: Record<string, unknown> };
    const hash = createHash('sha256').update(JSON.stringify(template)).digest('hex').slice(0, 10);
    const clusterName = String(md.spec?.clusterName ?? '');
    const selector = ((md.spec?.selector ?? {}) as { matchLabels?: Record<string, string> }).matchLabels ?? {};
    const labels = { ...template.metadata?.labels, [CLUSTER_NAME_LABEL]: clusterName, [DEPLOYMENT_NAME_LABEL]: md.metadata.name!, [TEMPLATE_HASH_LABEL]: hash };
    const annotations = { ...md.metadata.annotations };
    delete annotations['kubectl.kubernetes.io/last-applied-configuration'];
    await this.create('machinesets', md.metadata.namespace!, {
      apiVersion: API_VERSION,
      kind: 'MachineSet',
      metadata: {
        name: `${md.metadata.name}-${hash}`.slice(0, 63).replace(/-+$/, ''),
        namespace: md.metadata.namespace,
        labels,
        annotations,
        ownerReferences: [controllerRef(md)],
      },
      spec: {
        clusterName,
        replicas: desired,
        selector: { matchLabels: { ...selector, [TEMPLATE_HASH_LABEL]: hash } },
        template: { ...template, metadata: { ...template.metadata, labels } },
        ...(md.spec?.deletion ? { deletion: md.spec.deletion } : {}),
      },
    });
  }

  private async reconcileMachineSet(ms: Obj, machines: Obj[]): Promise<void> {
    if (ms.metadata.deletionTimestamp || isPaused(ms)) return;
    const desired = desiredReplicas(ms);
    const members = machines.filter((m) => isControlledBy(m, ms) && !m.metadata.deletionTimestamp);
    if (members.length < desired) {
      const template = (ms.spec?.template ?? {}) as { metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> }; spec?: Record<string, unknown> };
      const clusterName = String(ms.spec?.clusterName ?? '');
      const labels: Record<string, string> = { ...template.metadata?.labels, [CLUSTER_NAME_LABEL]: clusterName, [SET_NAME_LABEL]: ms.metadata.name! };
      const deployment = ms.metadata.labels?.[DEPLOYMENT_NAME_LABEL];
      if (deployment) labels[DEPLOYMENT_NAME_LABEL] = deployment;
      await this.runSteps(Array.from({ length: desired - members.length }, () => () => this.create('machines', ms.metadata.namespace!, {
          apiVersion: API_VERSION,
          kind: 'Machine',
          metadata: {
            name: `${ms.metadata.name!.slice(0, 56)}-${randomSuffix()}`,
            namespace: ms.metadata.namespace,
            labels,
            annotations: template.metadata?.annotations ?? {},
            ownerReferences: [controllerRef(ms)],
          },
          spec: { ...template.spec, clusterName },
        })));
    } else if (members.length > desired) {
      const order = ((ms.spec?.deletion ?? {}) as { order?: string }).order;
      await this.runSteps(scaleDownVictims(members, members.length - desired, order === 'Oldest').map((m) => () => this.deleteObject('machines', m)));
    }
  }

  private async reconcileMachine(m: Obj, nodeByName: Map<string, V1Node>, mss: Obj[], mds: Obj[]): Promise<void> {
    if (m.metadata.deletionTimestamp) return;
    const name = m.metadata.name!;
    const node = nodeByName.get(name);
    const uid = m.metadata.uid!;
    if (!node) {
      // The boot delay runs, or machineOutcome (a test's function) may change its mind.
      this.pollAgain();
      const seen = this.firstSeen.get(uid) ?? { at: this.now(), delayMs: this.bootDelay({ name, labels: m.metadata.labels ?? {} }) };
      this.firstSeen.set(uid, seen);
      const outcome = this.machineOutcome({ name, labels: m.metadata.labels ?? {} });
      if (outcome === 'fail') {
        await this.patchStatusIfChanged(m, {
          phase: 'Failed',
          deprecated: { v1beta1: { failureReason: 'InsufficientCapacity', failureMessage: 'fixture: no capacity for this machine type' } },
        });
        return;
      }
      if (outcome === 'never' || this.now() - seen.at < seen.delayMs) {
        await this.patchStatusIfChanged(m, {
          phase: 'Provisioning',
          initialization: { bootstrapDataSecretCreated: true },
        });
        return;
      }
      const group = groupOfMachine(m, mss, mds);
      const spec = (m.spec ?? {}) as { failureDomain?: string; taints?: V1Taint[] };
      const bootTaints = this.bootTaints?.({ name, labels: m.metadata.labels ?? {} }) ?? [];
      await this.createNode(name, group, m.metadata.labels ?? {}, [...(spec.taints ?? []), ...bootTaints], spec.failureDomain, {
        [MACHINE_ANNOTATION]: name,
      });
      return; // status follows on the next pass, once the Node is listed
    }
    this.firstSeen.delete(uid);
    const providerID = node.spec?.providerID ?? `kwok://${name}`;
    if (m.spec?.providerID !== providerID) {
      await this.patch(m, { spec: { providerID } });
      return; // the patch bumped metadata.generation: status (observedGeneration) next pass
    }
    const ready = isNodeReady(node);
    const conditions = ['Ready', 'Available'].map((type) => condition(m, type, ready, ready ? 'NodeReady' : 'NodeNotReady', '', this.now()));
    const failureDomain = (m.spec as { failureDomain?: string } | undefined)?.failureDomain;
    await this.patchStatusIfChanged(m, {
      phase: 'Running',
      nodeRef: { name },
      initialization: { bootstrapDataSecretCreated: true, infrastructureProvisioned: true },
      addresses: (node.status?.addresses ?? []).map((a) => ({ type: a.type, address: a.address })),
      ...(failureDomain ? { failureDomain } : {}),
      conditions,
    });
  }

  private async reconcilePool(mp: Obj, nodes: V1Node[]): Promise<void> {
    if (mp.metadata.deletionTimestamp) return;
    const uid = mp.metadata.uid!;
    const members = nodes
      .filter((n) => n.metadata?.labels?.[FIXTURE_GROUP_KIND_LABEL] === 'MachinePool' && n.metadata.labels[FIXTURE_GROUP_NAME_LABEL] === mp.metadata.name
        && n.metadata.labels[FIXTURE_NAMESPACE_LABEL] === mp.metadata.namespace && !this.draining.has(n.metadata.name!));
    const pending = this.pendingPool.get(uid) ?? [];
    if (!isPaused(mp)) {
      const desired = desiredReplicas(mp);
      while (members.length + pending.length < desired) {
        pending.push(this.now() + this.bootDelay({ name: `${mp.metadata.name}-${members.length + pending.length}`, labels: mp.metadata.labels ?? {} }));
      }
      while (members.length + pending.length > desired && pending.length > 0) pending.pop();
      if (members.length > desired) {
        const victims = [...members].sort(newestFirst).slice(0, members.length - desired);
        for (const v of victims) this.draining.set(v.metadata!.name!, this.now());
        members.splice(0, members.length, ...members.filter((n) => !victims.includes(n)));
      }
    }
    const domains = ((mp.spec?.failureDomains ?? []) as string[]).filter((d) => typeof d === 'string');
    const tmpl = (mp.spec?.template ?? {}) as { metadata?: { labels?: Record<string, string> }; spec?: { failureDomain?: string; taints?: V1Taint[] } };
    const due = pending.filter((t) => t <= this.now());
    const later = pending.filter((t) => t > this.now());
    this.pendingPool.set(uid, later);
    if (later.length > 0) this.pollAgain();
    // Zones are chosen one by one (each counts the ones before), the Nodes made together.
    const zones: Array<string | undefined> = [];
    for (let i = 0; i < due.length; i++) {
      const zone = leastUsedDomain(domains, members, zones) ?? tmpl.spec?.failureDomain;
      zones.push(zone);
    }
    const made = await Promise.all(zones.map((zone) => this.createNode(
      `${mp.metadata.name!.slice(0, 56)}-${randomSuffix()}`, { kind: 'MachinePool', name: mp.metadata.name!, obj: mp }, tmpl.metadata?.labels ?? {}, tmpl.spec?.taints ?? [], zone, {})));
    members.push(...made);
    const sorted = [...members].sort((a, b) => a.metadata!.name!.localeCompare(b.metadata!.name!));
    const providerIDList = sorted.map((n) => n.spec?.providerID ?? `kwok://${n.metadata!.name}`);
    if (canonical(mp.spec?.providerIDList ?? []) !== canonical(providerIDList)) await this.patch(mp, { spec: { providerIDList } });
    const ready = sorted.filter(isNodeReady).length;
    const desired = desiredReplicas(mp);
    await this.patchStatusIfChanged(mp, {
      replicas: sorted.length,
      readyReplicas: ready,
      availableReplicas: ready,
      upToDateReplicas: sorted.length,
      nodeRefs: sorted.map((n) => ({ apiVersion: 'v1', kind: 'Node', name: n.metadata!.name, uid: n.metadata!.uid })),
      phase: sorted.length < desired ? 'ScalingUp' : sorted.length > desired ? 'ScalingDown' : 'Running',
      initialization: { bootstrapDataSecretCreated: true, infrastructureProvisioned: true },
      observedGeneration: mp.metadata.generation,
    });
  }

  /** Nodes whose Machine / MachinePool is gone start draining. */
  private async collectOrphans(nodes: V1Node[], machines: Obj[], mps: Obj[]): Promise<void> {
    const liveMachines = new Set(machines.filter((m) => !m.metadata.deletionTimestamp).map((m) => `${m.metadata.namespace}/${m.metadata.name}`));
    const livePools = new Set(mps.filter((m) => !m.metadata.deletionTimestamp).map((m) => `${m.metadata.namespace}/${m.metadata.name}`));
    for (const n of nodes) {
      const name = n.metadata!.name!;
      if (this.draining.has(name)) continue;
      const ns = n.metadata!.annotations?.[MACHINE_NAMESPACE_ANNOTATION] ?? '';
      const machine = n.metadata!.annotations?.[MACHINE_ANNOTATION];
      const isPool = n.metadata!.labels?.[FIXTURE_GROUP_KIND_LABEL] === 'MachinePool';
      const alive = machine !== undefined
        ? liveMachines.has(`${ns}/${machine}`)
        : isPool && livePools.has(`${ns}/${n.metadata!.labels?.[FIXTURE_GROUP_NAME_LABEL]}`);
      if (!alive) this.draining.set(name, this.now());
    }
  }

  /** Cordon, evict (PDBs respected until drainTimeoutMs), delete. */
  private async drain(): Promise<void> {
    await this.runSteps([...this.draining].map(([name, since]) => async () => {
      const done = await this.drainNode(name, this.now() - since > this.drainTimeoutMs);
      if (done) this.draining.delete(name);
    }));
    // Evictions and terminating pods are not watched: look again soon.
    if (this.draining.size > 0) this.pollAgain();
  }

  private async drainNode(name: string, force: boolean): Promise<boolean> {
    try {
      await kubeRequest(this.kc, 'PATCH', `/api/v1/nodes/${name}`, { spec: { unschedulable: true } });
    } catch (err) {
      if (err instanceof KubeRequestError && err.code === 404) return true;
      throw err;
    }
    const pods = (await kubeRequest<List<V1Pod>>(this.kc, 'GET', `/api/v1/pods?fieldSelector=${encodeURIComponent(`spec.nodeName=${name}`)}`)).items;
    const evictable = pods.filter((p) => !p.metadata?.deletionTimestamp && !p.metadata?.ownerReferences?.some((o) => o.kind === 'DaemonSet'));
    let blocked = false;
    for (const p of evictable) {
      const path = `/api/v1/namespaces/${p.metadata!.namespace}/pods/${p.metadata!.name}`;
      try {
        if (force) await kubeRequest(this.kc, 'DELETE', `${path}?gracePeriodSeconds=0`);
        else {
          await kubeRequest(this.kc, 'POST', `${path}/eviction`, {
            apiVersion: 'policy/v1',
            kind: 'Eviction',
            metadata: { name: p.metadata!.name, namespace: p.metadata!.namespace },
          });
        }
      } catch (err) {
        if (err instanceof KubeRequestError && err.code === 404) continue;
        if (err instanceof KubeRequestError && err.code === 429) {
          blocked = true; // a PDB says not now
          continue;
        }
        throw err;
      }
    }
    const terminating = pods.some((p) => p.metadata?.deletionTimestamp && !p.metadata?.ownerReferences?.some((o) => o.kind === 'DaemonSet'));
    if ((blocked || evictable.length > 0 || terminating) && !force) return false;
    await deleteNode(this.kc, name);
    return true;
  }

  private async updateGroupStatus(mds: Obj[], mss: Obj[], machines: Obj[], nodeByName: Map<string, V1Node>): Promise<void> {
    const counts = (owner: Obj) => {
      const ms = machines.filter((m) => isControlledBy(m, owner) && !m.metadata.deletionTimestamp);
      const ready = ms.filter((m) => {
        const n = nodeByName.get(m.metadata.name!);
        return n !== undefined && isNodeReady(n);
      }).length;
      return { replicas: ms.length, ready };
    };
    const perSet = new Map<Obj, { replicas: number; ready: number }>();
    for (const ms of mss) {
      if (ms.metadata.deletionTimestamp) continue;
      const c = counts(ms);
      perSet.set(ms, c);
      await this.patchStatusIfChanged(ms, {
        replicas: c.replicas,
        readyReplicas: c.ready,
        availableReplicas: c.ready,
        upToDateReplicas: c.replicas,
        selector: selectorString(ms),
        observedGeneration: ms.metadata.generation,
      });
    }
    for (const md of mds) {
      if (md.metadata.deletionTimestamp) continue;
      let replicas = 0;
      let ready = 0;
      for (const [ms, c] of perSet) {
        if (!isControlledBy(ms, md)) continue;
        replicas += c.replicas;
        ready += c.ready;
      }
      const desired = desiredReplicas(md);
      await this.patchStatusIfChanged(md, {
        replicas,
        readyReplicas: ready,
        availableReplicas: ready,
        upToDateReplicas: replicas,
        selector: selectorString(md),
        observedGeneration: md.metadata.generation,
        phase: replicas < desired ? 'ScalingUp' : replicas > desired ? 'ScalingDown' : 'Running',
      });
    }
  }

  // ---- Nodes -------------------------------------------------------------------

  private async createNode(
    name: string,
    group: GroupRef,
    templateLabels: Record<string, string>,
    templateTaints: V1Taint[],
    zone: string | undefined,
    extraAnnotations: Record<string, string>,
  ): Promise<V1Node> {
    const objNs = group.obj.metadata.namespace!;
    const shape = this.nodeShape(group.obj);
    const labels: Record<string, string> = {};
    for (const [k, v] of Object.entries(templateLabels)) {
      if (!k.startsWith(`${CAPI_GROUP}/`) && k !== TEMPLATE_HASH_LABEL) labels[k] = v;
    }
    Object.assign(labels, shape.labels, {
      [HOSTNAME_LABEL]: name,
      [OS_LABEL]: 'linux',
      [ARCH_LABEL]: shape.labels[ARCH_LABEL] ?? 'amd64',
      type: 'kwok',
      [FIXTURE_MANAGED_LABEL]: 'true',
      [FIXTURE_NAMESPACE_LABEL]: objNs,
      [FIXTURE_GROUP_KIND_LABEL]: group.kind,
      [FIXTURE_GROUP_NAME_LABEL]: group.name.slice(0, 63),
    });
    if (zone) labels[ZONE_LABEL] = zone;
    const taints = [...templateTaints.map((t) => ({ key: t.key, value: t.value, effect: t.effect })), ...shape.taints];
    const body: V1Node = {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: {
        name,
        labels,
        annotations: {
          [KWOK_NODE_ANNOTATION]: 'fake',
          [MACHINE_NAMESPACE_ANNOTATION]: objNs,
          [CLUSTER_NAME_ANNOTATION]: String(group.obj.spec?.clusterName ?? ''),
          [OWNER_KIND_ANNOTATION]: group.kind,
          [OWNER_NAME_ANNOTATION]: group.name,
          ...extraAnnotations,
        },
      },
      spec: { providerID: `kwok://${name}`, ...(taints.length > 0 ? { taints } : {}) },
      status: { capacity: shape.capacity, allocatable: shape.capacity },
    };
    return createNode(this.kc, body);
  }

  private nodeShape(obj: Obj): { capacity: Record<string, string>; labels: Record<string, string>; taints: V1Taint[] } {
    const capacity: Record<string, string> = { ...this.defaultCapacity };
    // parseCapacityAnnotations only reads identity + annotations from the view.
    const view = { kind: obj.kind, namespace: obj.metadata.namespace, name: obj.metadata.name, annotations: obj.metadata.annotations ?? {} } as unknown as NodeGroupView;
    try {
      const parsed = parseCapacityAnnotations(view);
      for (const [resource, value] of Object.entries(parsed.allocatable)) {
        capacity[resource] = resource === 'cpu' ? `${value}m` : String(value);
      }
      return { capacity, labels: parsed.labels, taints: parsed.taints };
    } catch (err) {
      this.report(err);
      return { capacity, labels: {}, taints: [] };
    }
  }

  protected nodeSelector(): string {
    return fixtureNodeSelector(this.ns ? { namespace: this.ns } : {});
  }

  // ---- CAPI objects --------------------------------------------------------------

  private capiPath(plural: string, namespace?: string): string {
    return namespace ? `/apis/${API_VERSION}/namespaces/${namespace}/${plural}` : `/apis/${API_VERSION}/${plural}`;
  }

  private async listCapi(plural: string): Promise<Obj[]> {
    return (await kubeRequest<List<Obj>>(this.kc, 'GET', this.capiPath(plural, this.ns))).items;
  }

  private async create(plural: string, namespace: string, body: object): Promise<void> {
    try {
      await kubeRequest(this.kc, 'POST', this.capiPath(plural, namespace), body);
    } catch (err) {
      if (!(err instanceof KubeRequestError && err.code === 409)) throw err;
    }
  }

  private objectPath(o: Obj): string {
    return `${this.capiPath(`${o.kind!.toLowerCase()}s`, o.metadata.namespace)}/${o.metadata.name}`;
  }

  private async patch(o: Obj, body: object): Promise<void> {
    await kubeRequest(this.kc, 'PATCH', this.objectPath(o), body);
  }

  private patchStatusIfChanged(o: Obj, status: Record<string, unknown>): Promise<void> {
    return patchStatusIfChanged(this.kc, this.objectPath(o), o, status);
  }

  private async deleteObject(plural: string, o: Obj): Promise<void> {
    try {
      await kubeRequest(this.kc, 'DELETE', `${this.capiPath(plural, o.metadata.namespace)}/${o.metadata.name}`);
    } catch (err) {
      if (!(err instanceof KubeRequestError && err.code === 404)) throw err;
    }
  }
}

// ---- pure helpers -----------------------------------------------------------------

function isControlledBy(o: Obj, owner: Obj): boolean {
  return (o.metadata.ownerReferences ?? []).some((r) => r.controller === true && r.uid === owner.metadata.uid);
}

function controllerRef(owner: Obj): object {
  return { apiVersion: owner.apiVersion, kind: owner.kind, name: owner.metadata.name, uid: owner.metadata.uid, controller: true, blockOwnerDeletion: true };
}

function isPaused(o: Obj): boolean {
  return o.spec?.paused === true || PAUSED_ANNOTATION in (o.metadata.annotations ?? {});
}

/** spec.replicas; unset means the min-size annotation (as CAPI's defaulting webhook does), else 1. */
function desiredReplicas(o: Obj): number {
  const r = o.spec?.replicas;
  if (typeof r === 'number') return r;
  const min = Number(o.metadata.annotations?.[MIN_SIZE_ANNOTATION]);
  return Number.isInteger(min) && min >= 0 ? min : 1;
}

function newestFirst(a: { metadata?: { creationTimestamp?: unknown; name?: string } }, b: { metadata?: { creationTimestamp?: unknown; name?: string } }): number {
  const ta = String(a.metadata?.creationTimestamp ?? '');
  const tb = String(b.metadata?.creationTimestamp ?? '');
  return tb.localeCompare(ta) || (b.metadata?.name ?? '').localeCompare(a.metadata?.name ?? '');
}

/** Machines marked cluster.x-k8s.io/delete-machine first, then the newest (or oldest). */
export function scaleDownVictims<T extends { metadata?: { annotations?: Record<string, string>; creationTimestamp?: unknown; name?: string } }>(
  members: readonly T[],
  count: number,
  oldestFirst = false,
): T[] {
  const marked = (m: T) => (m.metadata?.annotations?.[DELETE_MACHINE_ANNOTATION] !== undefined ? 0 : 1);
  return [...members]
    .sort((a, b) => marked(a) - marked(b) || (oldestFirst ? newestFirst(b, a) : newestFirst(a, b)))
    .slice(0, Math.max(0, count));
}

function groupOfMachine(m: Obj, mss: Obj[], mds: Obj[]): GroupRef {
  const ms = mss.find((s) => isControlledBy(m, s));
  if (!ms) return { kind: 'Machine', name: m.metadata.name!, obj: m };
  const md = mds.find((d) => isControlledBy(ms, d));
  if (!md) return { kind: 'MachineSet', name: ms.metadata.name!, obj: ms };
  return { kind: 'MachineDeployment', name: md.metadata.name!, obj: md };
}

function selectorString(o: Obj): string {
  const matchLabels = ((o.spec?.selector ?? {}) as { matchLabels?: Record<string, string> }).matchLabels ?? {};
  return Object.entries(matchLabels).map(([k, v]) => `${k}=${v}`).join(',');
}

function leastUsedDomain(domains: string[], members: V1Node[], chosen: ReadonlyArray<string | undefined> = []): string | undefined {
  if (domains.length === 0) return undefined;
  const used = (d: string) => members.filter((n) => n.metadata?.labels?.[ZONE_LABEL] === d).length + chosen.filter((z) => z === d).length;
  return [...domains].sort((a, b) => used(a) - used(b) || a.localeCompare(b))[0];
}
