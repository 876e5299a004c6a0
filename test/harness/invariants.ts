/**
 * InvariantChecker: watches one test namespace's node groups, pods and Nodes while a
 * fault or chaos test runs, and records every moment an autoscaler invariant breaks
 * (issue 17). Checked on every change it sees, not only at the end:
 *  - replicas of every MachineDeployment / MachinePool stay within the min/max-size
 *    annotations, and each pool of groups within its limits (`pools`);
 *  - capacity is never provisioned twice: a group's replicas never exceed what the
 *    workload needs (`needed`, when the test knows it);
 *  - no node is removed while its pods have nowhere to go: the first time a node is
 *    marked for removal (Headroom's disruption taint, cordon, deletionTimestamp, or
 *    gone), its running pods (DaemonSet pods aside) must fit, by cpu and memory
 *    requests, on the other Ready, schedulable nodes (first fit decreasing). When they
 *    do not, the node is a suspect, not yet a violation: the Disruptor taints first and
 *    re-checks on a fresh read (ADR 0081), so a pod bound just before the taint is found
 *    there and the taint is taken back. A suspect whose mark goes while the node and
 *    every one of those pods stay is `withdrawn` (nothing was removed, nothing evicted);
 *    one whose node is deleted, or whose pod goes while it is marked, or that is still
 *    marked when the violations are read, is a violation. A withdrawn suspect is judged
 *    again when it is marked again;
 * and on request:
 *  - `allPodsRunning()`: every pending pod ends Running (the test only creates pods
 *    that can fit).
 *
 *   const inv = await InvariantChecker.start({ kubeConfig: kc, namespace: ns, nodeLabelSelector, needed: { md: 5 } });
 *   ... fault ...
 *   await inv.allPodsRunning(90_000);
 *   expect(inv.violations).to.deep.equal([]);
 *   inv.stop();
 */
import type { KubeConfig, KubernetesObject, V1Node, V1Pod } from '@kubernetes/client-node';
import { DISRUPTION_TAINT_KEY } from '../../src/api/disruption-taint.js';
import type { UnstructuredObject } from '../../src/api/unstructured-object.js';
import { Informer } from '../../src/kube/informer.js';
import { KubeClient } from '../../src/kube/kube-client.js';
import { parseMilliCpu, parseQuantity } from '../../src/scheduling/quantity.js';
import { eventually, isNodeReady } from './wait.js';

const MIN = 'cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size';
const MAX = 'cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size';

export interface PoolLimit {
  readonly name: string;
  /** Group names counted against the limit. */
  readonly groups: readonly string[];
  readonly maxNodes?: number;
  readonly maxCpuMilli?: number;
  /** cpu of one node of these groups, for maxCpuMilli. */
  readonly nodeCpuMilli?: number;
}

export interface InvariantOptions {
  readonly kubeConfig: KubeConfig;
  /** The namespace of the node groups and pods. */
  readonly namespace: string;
  /**
   * Where the node groups live when not beside the pods (fleet mode: a workload cluster's
   * groups are in the management cluster, in the Cluster's namespace, labelled with its name).
   */
  readonly groups?: { readonly kubeConfig: KubeConfig; readonly namespace: string; readonly labelSelector?: string };
  /** The test's Nodes. */
  readonly nodeLabelSelector: string;
  /** Group name -> the most replicas the workload needs; more is capacity provisioned twice. */
  readonly needed?: Readonly<Record<string, number>>;
  readonly pools?: readonly PoolLimit[];
}

interface Need {
  cpu: number;
  memory: number;
}

function requests(pod: V1Pod): Need {
  let cpu = 0;
  let memory = 0;
  for (const c of pod.spec?.containers ?? []) {
    const r = c.resources?.requests ?? {};
    if (r.cpu !== undefined) cpu += parseMilliCpu(r.cpu);
    if (r.memory !== undefined) memory += parseQuantity(r.memory);
  }
  return { cpu, memory };
}

const isDaemonSetPod = (p: V1Pod) => p.metadata?.ownerReferences?.some((o) => o.kind === 'DaemonSet') ?? false;
const isActive = (p: V1Pod) => p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed' && !p.metadata?.deletionTimestamp;

function markedForRemoval(n: V1Node): string | undefined {
  if (n.metadata?.deletionTimestamp) return 'deleting';
  if (n.spec?.taints?.some((t) => t.key === DISRUPTION_TAINT_KEY)) return 'disruption taint';
  if (n.spec?.unschedulable) return 'cordoned';
  return undefined;
}

/** Can `pods` be placed on `free` (per node), largest first? */
export function fitsElsewhere(pods: readonly Need[], free: Need[]): boolean {
  const bins = free.map((f) => ({ ...f }));
  for (const p of [...pods].sort((a, b) => b.cpu - a.cpu || b.memory - a.memory)) {
    const bin = bins.find((b) => b.cpu >= p.cpu && b.memory >= p.memory);
    if (!bin) return false;
    bin.cpu -= p.cpu;
    bin.memory -= p.memory;
  }
  return true;
}

/**
 * What became of a suspect (a node marked while `pods` had nowhere to go), given the node
 * as it is now (undefined: gone) and the uids of the active pods on it: a violation when
 * the node or one of those pods went, withdrawn when the mark went while they stayed, and
 * still marked otherwise.
 */
export function suspectOutcome(pods: ReadonlySet<string>, node: V1Node | undefined, activeOnNode: ReadonlySet<string>): 'violation' | 'withdrawn' | 'marked' {
  if (!node || node.metadata?.deletionTimestamp) return 'violation';
  for (const uid of pods) if (!activeOnNode.has(uid)) return 'violation';
  return markedForRemoval(node) ? 'marked' : 'withdrawn';
}

interface Suspect {
  /** The violation it becomes. */
  what: string;
  /** The pods that had nowhere to go, by uid. */
  pods: ReadonlySet<string>;
}

export class InvariantChecker {
  private readonly found: string[] = [];
  /** Marks taken back while the node and its pods stayed (the taint, re-check, untaint protocol). */
  readonly withdrawn: Array<{ node: string; pods: number; at: number }> = [];
  private readonly suspects = new Map<string, Suspect>();
  /** Group name -> the most replicas seen. */
  readonly peakReplicas = new Map<string, number>();
  /** Nodes seen marked for removal, with how (the scale-down record). */
  readonly removals: Array<{ node: string; how: string; pods: number; at: number }> = [];
  /** Most Nodes seen at once. */
  peakNodes = 0;
  private readonly client: KubeClient;
  private readonly groupsClient: KubeClient | undefined;
  private readonly groups: Informer<UnstructuredObject>[];
  private readonly pods: Informer<V1Pod>;
  private readonly nodes: Informer<V1Node>;
  private readonly judged = new Set<string>();

  private constructor(private readonly opts: InvariantOptions) {
    this.client = new KubeClient(opts.kubeConfig);
    this.groupsClient = opts.groups ? new KubeClient(opts.groups.kubeConfig) : undefined;
    const informer = <T extends KubernetesObject>(group: string, plural: string, extra: { namespace?: string; labelSelector?: string } = {}, client = this.client) =>
      new Informer<T>(client, { group, version: group ? 'v1beta2' : 'v1', plural, ...extra }, { stallTimeoutMs: 30_000, maxBackoffMs: 2000 });
    const where = opts.groups
      ? { namespace: opts.groups.namespace, ...(opts.groups.labelSelector ? { labelSelector: opts.groups.labelSelector } : {}) }
      : { namespace: opts.namespace };
    this.groups = [
      informer<UnstructuredObject>('cluster.x-k8s.io', 'machinedeployments', where, this.groupsClient),
      informer<UnstructuredObject>('cluster.x-k8s.io', 'machinepools', where, this.groupsClient),
    ];
    this.pods = informer<V1Pod>('', 'pods', { namespace: opts.namespace });
    this.nodes = informer<V1Node>('', 'nodes', { labelSelector: opts.nodeLabelSelector });
  }

  static async start(opts: InvariantOptions): Promise<InvariantChecker> {
    const c = new InvariantChecker(opts);
    for (const g of c.groups) g.onChange(() => c.checkGroups());
    c.nodes.onChange((ch) => c.checkNodes(ch.type === 'DELETED' ? (ch.object as V1Node | undefined) : undefined));
    c.pods.onChange(() => { if (c.suspects.size > 0) c.settleSuspects(); });
    const all = [...c.groups, c.pods, c.nodes];
    for (const i of all) i.start();
    await Promise.all(all.map((i) => i.waitForSync(60_000)));
    c.checkGroups();
    c.checkNodes();
    return c;
  }

  /** Every violation so far; a suspect still marked counts (nothing took it back). */
  get violations(): string[] {
    return [...this.found, ...[...this.suspects.values()].map((x) => x.what).filter((w) => !this.found.includes(w))];
  }

  private violate(what: string): void {
    if (!this.found.includes(what)) this.found.push(what);
  }

  private checkGroups(): void {
    const replicas = new Map<string, number>();
    for (const g of this.groups.flatMap((i) => i.list())) {
      const name = g.metadata?.name ?? '';
      const r = (g.spec as { replicas?: number } | undefined)?.replicas;
      if (typeof r !== 'number') continue;
      replicas.set(name, r);
      this.peakReplicas.set(name, Math.max(this.peakReplicas.get(name) ?? 0, r));
      const ann = g.metadata?.annotations ?? {};
      const min = Number(ann[MIN] ?? 0);
      const max = Number(ann[MAX] ?? Infinity);
      if (r < min || r > max) this.violate(`${g.kind} ${name}: replicas ${r} outside [${min}, ${max}]`);
      const needed = this.opts.needed?.[name];
      if (needed !== undefined && r > needed) this.violate(`${g.kind} ${name}: replicas ${r} > ${needed} needed (capacity provisioned twice)`);
    }
    for (const pool of this.opts.pools ?? []) {
      const nodes = pool.groups.reduce((sum, g) => sum + (replicas.get(g) ?? 0), 0);
      if (pool.maxNodes !== undefined && nodes > pool.maxNodes) this.violate(`pool ${pool.name}: ${nodes} nodes > limit ${pool.maxNodes}`);
      if (pool.maxCpuMilli !== undefined && nodes * (pool.nodeCpuMilli ?? 0) > pool.maxCpuMilli) {
        this.violate(`pool ${pool.name}: ${nodes * (pool.nodeCpuMilli ?? 0)}m cpu > limit ${pool.maxCpuMilli}m`);
      }
    }
  }

  private activePodsOn(name: string): V1Pod[] {
    return this.pods.list().filter((p) => p.spec?.nodeName === name && isActive(p) && !isDaemonSetPod(p));
  }

  /** Suspects settle: withdrawn when the mark went and the node and its pods stayed; a violation when the node or one of those pods went. */
  private settleSuspects(deleted?: V1Node): void {
    for (const [name, suspect] of this.suspects) {
      const node = deleted?.metadata?.name === name ? undefined : this.nodes.get(undefined, name);
      const outcome = suspectOutcome(suspect.pods, node, new Set(this.activePodsOn(name).map((p) => p.metadata?.uid ?? '')));
      if (outcome === 'violation') {
        this.suspects.delete(name);
        this.violate(suspect.what);
      } else if (outcome === 'withdrawn') {
        this.suspects.delete(name);
        this.judged.delete(name);
        this.withdrawn.push({ node: name, pods: suspect.pods.size, at: Date.now() });
      }
    }
  }

  private checkNodes(deleted?: V1Node): void {
    this.settleSuspects(deleted);
    const nodes = this.nodes.list();
    this.peakNodes = Math.max(this.peakNodes, nodes.length);
    const candidates: Array<{ node: V1Node; how: string }> = [];
    for (const n of nodes) {
      const how = markedForRemoval(n);
      if (how) candidates.push({ node: n, how });
    }
    if (deleted) candidates.push({ node: deleted, how: 'deleted' });
    for (const { node, how } of candidates) {
      const name = node.metadata?.name ?? '';
      if (this.judged.has(name)) continue;
      this.judged.add(name);
      const pods = this.activePodsOn(name);
      this.removals.push({ node: name, how, pods: pods.length, at: Date.now() });
      if (pods.length === 0) continue;
      const free = nodes
        .filter((n) => n.metadata?.name !== name && isNodeReady(n) && !markedForRemoval(n) && !this.judged.has(n.metadata?.name ?? ''))
        .map((n) => {
          const used = this.pods.list().filter((p) => p.spec?.nodeName === n.metadata?.name && isActive(p)).map(requests);
          const alloc = n.status?.allocatable ?? {};
          return {
            cpu: parseMilliCpu(alloc.cpu ?? '0') - used.reduce((s, u) => s + u.cpu, 0),
            memory: parseQuantity(alloc.memory ?? '0') - used.reduce((s, u) => s + u.memory, 0),
          };
        });
      if (!fitsElsewhere(pods.map(requests), free)) {
        const what = `node ${name} removed (${how}) while its ${pods.length} pod(s) had nowhere to go`;
        if (how === 'deleting' || how === 'deleted') this.violate(what);
        else this.suspects.set(name, { what, pods: new Set(pods.map((p) => p.metadata?.uid ?? '')) });
      }
    }
  }

  /** Resolves once every pod of the namespace is Running (and `count` of them, if given). */
  async allPodsRunning(timeoutMs: number, count?: number): Promise<V1Pod[]> {
    return eventually(`every pod in ${this.opts.namespace} Running`, async () => {
      const items = (await this.client.get<{ items: V1Pod[] }>(`/api/v1/namespaces/${this.opts.namespace}/pods`)).items.filter(isActive);
      if (count !== undefined && items.length !== count) return false;
      return items.every((p) => p.status?.phase === 'Running') ? items : false;
    }, { timeoutMs, intervalMs: 250 });
  }

  stop(): void {
    for (const i of [...this.groups, this.pods, this.nodes]) i.stop();
    this.client.close();
    this.groupsClient?.close();
  }
}
